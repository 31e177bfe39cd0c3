"""`langgraph dev` serves the PCM graph offline; a client runs two turns and reads the thread back."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from langgraph_sdk import get_sync_client

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_project_langgraph_json_is_valid():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["graphs"] == {"pcm": "./pcm/graph.py:graph"}
    assert config["dependencies"] == ["."] and "PCM_DATA_DIR" in config["env"]


def test_langgraph_dev_round_trip(tmp_path):
    port = free_port()
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"dependencies": [str(ROOT)], "graphs": {"pcm": f"{ROOT}/pcm/graph.py:graph"},
                                  "env": {"PCM_DATA_DIR": str(tmp_path / "data")}}))
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
         "--port", str(port), "--config", str(config)],
        cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "LANGSMITH_TRACING": "false"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        else:
            raise AssertionError("server did not start:\n" + (tmp_path / "server.log").read_text()[-3000:])
        client = get_sync_client(url=url)
        assistant = client.assistants.search(graph_id="pcm")[0]
        schemas = client.assistants.get_schemas(assistant["assistant_id"])
        inputs = set(schemas["input_schema"]["properties"])
        assert {"user_input", "user_id"} <= inputs and "working_memory" not in inputs
        thread = client.threads.create()
        for text in ("I'm a Python developer who loves FastAPI.", "Wrote another FastAPI endpoint today."):
            run = client.runs.wait(thread["thread_id"], assistant["assistant_id"],
                                   input={"user_input": text, "user_id": "studio-user"}, raise_error=True)
            assert run["surprisal"]["level"] in ("low", "medium", "high")
        values = client.threads.get_state(thread["thread_id"])["values"]
        assert [t["content"] for t in values["working_memory"]] == [
            "I'm a Python developer who loves FastAPI.", "Wrote another FastAPI endpoint today."]
        assert values["surprisal"]["content"] == "Wrote another FastAPI endpoint today."
        assert (tmp_path / "data" / "memory.sqlite").is_file()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
