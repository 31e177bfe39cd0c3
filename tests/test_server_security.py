"""The served graph (`langgraph dev`, auth off and on) attacked over HTTP: a caller's run context
cannot change a deployment setting (paths, URLs, models, limits, the algorithm), no request
leaves for a URL the caller names, and data lands where the deployment's `PCM_DATA_DIR` says."""

import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from fault_server import FaultServer
from langgraph_sdk import get_sync_client
from servers import ROOT, langgraph_dev
from test_auth import memory_contents

from pcm.auth import studio_user
from pcm.config import CALLER_SETTINGS, PCMContext

pytestmark = pytest.mark.slow
TOKENS = {"token-of-alice": "alice"}


def hostile_value(setting: dataclasses.Field, tmp_path, caller_url: str):
    """A value unlike the default for one setting, as an attacker would send it."""
    default = setting.default if setting.default is not dataclasses.MISSING else setting.default_factory()
    if setting.name.endswith("_url"):
        return caller_url
    if isinstance(default, bool):
        return not default
    if isinstance(default, str):
        return {
            "graph_store": "postgres",
            "vector_store": "chroma-server",
            "checkpointer": "postgres",
            "scorer": "nll",
            "router": "off",
            "calibration_file": "/etc/passwd",
            "embedding_model": "/etc",
            "embedding_runtime": "torch",
        }.get(setting.name, str(tmp_path / f"caller-{setting.name}"))
    if isinstance(default, list):
        return [*default[:-1], 2.0] if default and isinstance(default[0], float) else ["Hacking"]
    if default is None:
        return 0.5
    if isinstance(default, int):
        return 5 if setting.name == "max_input_chars" else default + 1
    if default == 0:
        return 0.5  # a setting off by default (halving would leave it as it is)
    return min(1.0, default * 0.5) if default <= 1 else default * 2


def deployment_only(tmp_path, caller_url: str) -> dict:
    return {
        f.name: hostile_value(f, tmp_path, caller_url)
        for f in dataclasses.fields(PCMContext)
        if f.name not in CALLER_SETTINGS
    }


def run_refused(client, assistant: str, context: dict) -> str:
    """The error of a stateless run with this context (it must fail before storing anything)."""
    result = client.runs.wait(
        None,
        assistant,
        input={"user_input": "My locker code is 4711.", "user_id": "alice"},
        context=context,
        raise_error=False,
    )
    assert result["__error__"]["error"] == "ValueError", result
    return result["__error__"]["message"]


def attack(client, assistant: str, tmp_path, capture: FaultServer) -> None:
    hostile = deployment_only(tmp_path, capture.url("caller"))
    message = run_refused(client, assistant, hostile)
    assert "may not set" in message and "llm_base_url" in message and "data_dir" in message
    # one refused run per setting, several at a time (the server runs them concurrently; one by one
    # they took most of this test's time)
    with ThreadPoolExecutor(max_workers=8) as pool:
        messages = dict(
            zip(hostile, pool.map(lambda item: run_refused(client, assistant, dict([item])), hostile.items()))
        )
    for name, message in messages.items():
        assert name in message, (name, message)
    assert capture.count("caller") == 0  # nothing went to the caller's URL
    assert not list(tmp_path.glob("caller-*"))  # no file or folder at a caller's path
    served = client.runs.wait(
        None, assistant, context={"top_k": 1}, input={"user_input": "I keep my bike in the garage.", "user_id": "alice"}
    )
    assert served["surprisal"]["level"] in ("low", "medium", "high") and len(served["retrieved"]) <= 1


def test_served_graph_without_auth_refuses_deployment_settings(tmp_path):
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"dependencies": [str(ROOT)], "graphs": {"pcm": f"{ROOT}/pcm/graph.py:graph"}}))
    with FaultServer() as capture:
        env = {
            "PCM_DATA_DIR": str(tmp_path / "deployment"),
            "PCM_LLM_MODEL": "served",
            "PCM_LLM_BASE_URL": capture.url("deployment"),
            "PCM_LLM_API_KEY": "secret-of-the-deployment",
        }
        with langgraph_dev(config, tmp_path, env=env) as url:
            client = get_sync_client(url=url)
            attack(client, client.assistants.search(graph_id="pcm")[0]["assistant_id"], tmp_path, capture)
        assert capture.count("deployment") > 0  # the deployment's own LLM was asked
    assert any("bike" in c for c in memory_contents(tmp_path / "deployment", "alice"))


def test_served_graph_with_auth_refuses_deployment_settings_and_studio_needs_opt_in(tmp_path):
    """The project's own `langgraph.json`: data goes to the shell's `PCM_DATA_DIR`; a token-less
    Studio request runs as `PCM_STUDIO_USER`; an anonymous request without the header gets 401."""
    data = tmp_path / "from-shell"
    with (
        FaultServer() as capture,
        langgraph_dev(
            ROOT / "langgraph.json",
            tmp_path,
            cwd=ROOT,
            env={"PCM_DATA_DIR": str(data), "PCM_AUTH_TOKENS": json.dumps(TOKENS), "PCM_STUDIO_USER": "studio"},
        ) as url,
    ):
        alice = get_sync_client(url=url, headers={"Authorization": "Bearer token-of-alice"})
        assistant = alice.assistants.search(graph_id="pcm")[0]["assistant_id"]
        attack(alice, assistant, tmp_path, capture)
        with pytest.raises(Exception, match="Authorization: Bearer"):
            get_sync_client(url=url).threads.create()
        studio = get_sync_client(url=url, headers={"x-auth-scheme": "langsmith"})
        studio.runs.wait(
            None, assistant, input={"user_input": "Studio notes: the demo is on Friday.", "user_id": "alice"}
        )
    assert any("bike" in c for c in memory_contents(data, "alice"))
    assert any("Friday" in c for c in memory_contents(data, "studio"))
    assert not any("Friday" in c for c in memory_contents(data, "alice"))
    assert not (ROOT / "data" / "memory.sqlite").exists()  # not under the server's working directory


def test_token_less_studio_requests_need_the_deployment_to_opt_in(monkeypatch):
    header = {b"x-auth-scheme": b"langsmith"}
    monkeypatch.delenv("PCM_STUDIO_USER", raising=False)
    assert studio_user(header, {"client": ("127.0.0.1", 5000)}) is None
    monkeypatch.setenv("PCM_STUDIO_USER", "studio")
    assert studio_user(header, {"client": ("127.0.0.1", 5000)}) == "studio"
    assert studio_user(header, {"client": ("10.0.0.7", 5000)}) is None  # only from loopback
    assert studio_user({}, {"client": ("127.0.0.1", 5000)}) is None  # only Studio's header
