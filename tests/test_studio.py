"""`langgraph dev` serves the PCM graph offline; a client runs two turns and reads the thread back."""

import json

from langgraph_sdk import get_sync_client
from servers import ROOT, langgraph_dev


def test_project_langgraph_json_is_valid():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["graphs"] == {"pcm": "./pcm/graph.py:graph"}
    assert config["dependencies"] == ["."] and "env" not in config  # the shell's PCM_DATA_DIR decides
    assert config["auth"] == {"path": "./pcm/auth.py:auth", "disable_studio_auth": True}


def test_langgraph_dev_round_trip(tmp_path):
    """Without auth (this config has none), settings come from `langgraph.json`'s `env`."""
    config = tmp_path / "langgraph.json"
    config.write_text(
        json.dumps(
            {
                "dependencies": [str(ROOT)],
                "graphs": {"pcm": f"{ROOT}/pcm/graph.py:graph"},
                "env": {"PCM_DATA_DIR": str(tmp_path / "data"), "PCM_TOKEN_BUDGET": "20"},
            }
        )
    )
    with langgraph_dev(config, tmp_path) as url:
        client = get_sync_client(url=url)
        assistant = client.assistants.search(graph_id="pcm")[0]
        schemas = client.assistants.get_schemas(assistant["assistant_id"])
        inputs = set(schemas["input_schema"]["properties"])
        assert {"user_input", "user_id"} <= inputs and "working_memory" not in inputs
        thread = client.threads.create()
        texts = (
            "I'm a Python developer who loves FastAPI.",
            "Wrote another FastAPI endpoint today.",
            "My cat Miso knocked my coffee over the keyboard this morning.",
        )
        for text in texts:
            run = client.runs.wait(
                thread["thread_id"],
                assistant["assistant_id"],
                input={"user_input": text, "user_id": "studio-user"},
                context={},
                raise_error=True,
            )
            assert run["surprisal"]["level"] in ("low", "medium", "high")
        values = client.threads.get_state(thread["thread_id"])["values"]
        window = [t["content"] for t in values["working_memory"]]
        assert window[-1] == texts[-1] and len(window) < 3  # PCM_TOKEN_BUDGET=20 from the env evicted
        assert values["surprisal"]["content"] == texts[-1]
    assert (tmp_path / "data" / "memory.sqlite").is_file()
