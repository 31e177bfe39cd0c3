"""Real servers the tests start on loopback: `langgraph dev` for a config file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

from pcm.llm_server import free_port

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def langgraph_dev(
    config: Path, folder: Path, env: dict[str, str] | None = None, timeout: float = 180, cwd: Path | None = None
):
    """`langgraph dev --no-browser` for `config`, run in `cwd` (default `folder`), its log in
    `folder`; yields the server's URL."""
    port = free_port()
    log_path = folder / "server.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "langgraph"),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
            ],
            cwd=cwd or folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "LANGSMITH_TRACING": "false", **(env or {})},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(1)
            else:
                raise AssertionError("server did not start:\n" + log_path.read_text()[-3000:])
            yield url
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
