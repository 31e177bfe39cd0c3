"""Local PostgreSQL and Chroma servers on loopback, for tests, benchmarks and `make services`.

PostgreSQL comes from Debian's packages (`apt-get install postgresql`): a throwaway cluster is
made with `initdb` (trust authentication, listening on 127.0.0.1 only) and started with
`pg_ctl`; as root, both run as the `postgres` user through `runuser`. Chroma's server is the
`chroma run` command that ships with the chromadb package. Nothing here listens beyond
127.0.0.1.

    python -m pcm.devservers start --dir .services   # prints the PCM_* settings to export
    python -m pcm.devservers stop --dir .services
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from pcm.world.chroma import index_chroma_log

POSTGRES_USER = "pcm"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server programs (initdb, pg_ctl), or None if not installed."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    return versions[-1].parent if versions else None


def _as_postgres(command: list[str]) -> list[str]:
    """Run as the `postgres` user when we are root (PostgreSQL refuses to run as root)."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def start_postgres(port: int | None = None) -> dict:
    """Make and start a cluster in a new temp folder; returns {"url", "folder", "port"}."""
    binaries = postgres_bin()
    if binaries is None:
        raise FileNotFoundError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    port = port or free_port()
    folder = Path(tempfile.mkdtemp(prefix="pcm-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data = folder / "data"
    subprocess.run(
        _as_postgres(
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                POSTGRES_USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=on"
    subprocess.run(
        _as_postgres(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(folder / "postgres.log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=90,
    )
    return {"url": f"postgresql://{POSTGRES_USER}@127.0.0.1:{port}/postgres", "folder": str(folder), "port": port}


def stop_postgres(folder: str) -> None:
    binaries = postgres_bin()
    data = Path(folder) / "data"
    if binaries is not None and data.exists():
        subprocess.run(
            _as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
            timeout=60,
        )
    shutil.rmtree(folder, ignore_errors=True)


def chroma_command() -> str | None:
    local = Path(sys.executable).parent / "chroma"
    return str(local) if local.exists() else shutil.which("chroma")


def start_chroma(path: str | Path, port: int | None = None, log: Path | None = None) -> dict:
    """Start `chroma run` on 127.0.0.1 and wait for its heartbeat; returns {"url", "pid", "port"}."""
    command = chroma_command()
    if command is None:
        raise FileNotFoundError("the `chroma` command is missing (it ships with the chromadb package)")
    port = port or free_port()
    Path(path).mkdir(parents=True, exist_ok=True)
    output = open(log or Path(path) / "chroma.log", "ab")
    process = subprocess.Popen(
        [command, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chroma run exited with {process.returncode}; see {output.name}")
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                index_chroma_log(path)  # the server has made its database by now
                return {"url": url, "pid": process.pid, "port": port, "process": process}
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"chroma run did not answer on {url} within 60 s")


def stop_chroma(pid: int) -> None:
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--dir", default=".services", help="where the Chroma data and the state file live")
    args = parser.parse_args(argv)
    folder = Path(args.dir).resolve()
    state_file = folder / "services.json"
    if args.action == "stop":
        if not state_file.exists():
            print(f"nothing to stop in {folder}")
            return 0
        state = json.loads(state_file.read_text())
        stop_chroma(state["chroma"]["pid"])
        stop_postgres(state["postgres"]["folder"])
        state_file.unlink()
        print("stopped PostgreSQL and Chroma")
        return 0
    if state_file.exists():
        print(f"services already started (see {state_file}); run `make services-stop` first", file=sys.stderr)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    postgres = start_postgres()
    chroma = start_chroma(folder / "chroma")
    chroma.pop("process")
    state_file.write_text(json.dumps({"postgres": postgres, "chroma": chroma}, indent=2))
    print("# PostgreSQL and Chroma are running on 127.0.0.1; to use them:")
    print(f"export PCM_GRAPH_STORE=postgres PCM_CHECKPOINTER=postgres PCM_POSTGRES_URL={postgres['url']}")
    print(f"export PCM_VECTOR_STORE=chroma-server PCM_CHROMA_URL={chroma['url']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
