"""PCM's LLM path over a real wire: the shipped SmolLM2-135M served by `transformers serve` on
loopback (`pcm.llm_server`, the same server as `pcm serve-llm`).

A 135M model judges nothing well and often ignores the JSON format; these tests check what
PCM does with a real server's replies, latency and malformed output: every request of the
LLM path is made and counted with the server's token counts, and only replies that passed
validation become memory, an answer or a score. The model folder is converted once and
cached in the model cache (`~/.cache/pcm/models`), as the surprise model uses it.
"""

from pathlib import Path

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver
from servers import ROOT

from evals.bench.locomo import _answer, answerable
from evals.bench.metrics import aggregate
from pcm.api import PCM
from pcm.datasets.locomo import load_locomo
from pcm.llm import build_chat_model, check_text
from pcm.llm_server import LocalLLMServer
from pcm.model_files import model_cache, prepare_model
from pcm.models import NodeType
from pcm.services import Services

pytestmark = pytest.mark.llm_server
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo" / "conv-26.json"
#: short replies, and patience for a busy CPU: what is tested is the path, not the speed
PATIENT = {"llm_max_tokens": 48, "llm_timeout": 120.0, "llm_turn_deadline": 300.0, "llm_breaker_failures": 20}


@pytest.fixture(scope="module")
def local_llm(tmp_path_factory):
    folder = prepare_model(model_cache())
    with LocalLLMServer(folder, log_path=tmp_path_factory.mktemp("llm") / "serve.log") as server:
        yield server


class ReplyRecorder(BaseCallbackHandler):
    """Every (system prompt, raw reply) that came over the wire."""

    def __init__(self):
        self.prompts: list[str] = []
        self.replies: list[tuple[str, str]] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):
        self.prompts.append(messages[0][0].content)

    def on_llm_end(self, response, **kwargs):
        self.replies.append((self.prompts[-1], response.generations[0][0].text))


def llm_services(ctx, server):
    recorder = ReplyRecorder()
    model = build_chat_model(ctx)
    model.callbacks = [recorder]
    return Services(ctx, chat_model=model), recorder


def is_valid_text(text: str) -> bool:
    try:
        check_text(text)
        return True
    except ValueError:
        return False


def test_turns_over_the_real_wire_and_only_valid_replies_become_memory(ctx, local_llm):
    ctx = ctx.replace(
        **local_llm.settings(), **PATIENT, llm_intent_confidence=1.0, token_budget=30, eviction_size=1, llm_fact_batch=4
    )
    services, recorder = llm_services(ctx, local_llm)
    pcm = PCM(ctx, services, checkpointer=InMemorySaver())
    outs = [
        pcm.process("I work at Google as a software engineer on the search team.", user_id="e2e"),
        pcm.process(
            "First week at Microsoft is going great, the onboarding is smooth.", user_id="e2e", force_level="high"
        ),
        pcm.process(
            "I've started reading about Kubernetes operators on weekends.", user_id="e2e", force_level="medium"
        ),
    ]
    pcm.flush("e2e")
    asked = " ".join(recorder.prompts)
    for marker in (
        "Classify the user's message",
        "Decide how the new message relates",
        "testable hypothesis",
        "Extract the atomic facts",
        "helpful assistant with a long-term memory",
    ):
        assert marker in asked, marker  # intent, relation, hypothesis, facts, reply
    usage = services.llm.usage
    assert usage.calls == len(recorder.prompts) >= 9 and usage.input_tokens > 0 and usage.output_tokens > 0
    assert sum(out["llm_usage"]["calls"] for out in outs) <= usage.calls
    raw = [text.strip() for _, text in recorder.replies]
    invalid_replies = [text for text in raw if not is_valid_text(text)]
    graph = pcm.memory("e2e")
    contents = [n.content for n in graph.nodes()]
    assert not any(text in contents for text in invalid_replies)
    for out in outs:
        assert out["response"] is None or (out["response"] in raw and is_valid_text(out["response"]))
    hypothesis = next(n for n in graph.nodes() if n.type == NodeType.HYPOTHESIS)
    assert is_valid_text(hypothesis.content)
    assert hypothesis.content.startswith("Possibly") or any(hypothesis.content in r for r in raw)
    atomic = [n for n in graph.nodes() if any("extracted by the LLM" in e.reason for e in graph.history(n.id))]
    assert all(is_valid_text(n.content) and any(n.content in r for r in raw) for n in atomic)
    assert outs[1]["agent"] == "correction" and outs[2]["agent"] == "profiling"


def test_locomo_qa_slice_with_exact_match_f1_and_judge(ctx, local_llm):
    conversation = load_locomo(LOCOMO)[0]
    turns = conversation.turns[:16]
    offline = PCM(ctx, checkpointer=InMemorySaver())
    for turn in turns:
        offline.process(
            turn.full_text, user_id=f"locomo-{conversation.sample_id}", speaker=turn.speaker, dialog_ids=[turn.dia_id]
        )
    turn_ids = {t.dia_id for t in turns}
    assert len(answerable(conversation, turn_ids)) >= 3
    llm_ctx = ctx.replace(**local_llm.settings(), **PATIENT)
    services, recorder = llm_services(llm_ctx, local_llm)
    reader = PCM(llm_ctx, services, checkpointer=InMemorySaver())
    rows = _answer(reader, services, conversation, turn_ids, judge=True, limit=3)
    assert len(rows) == 3
    summary = aggregate(rows)["overall"]
    assert {"exact_match", "token_f1", "contains_match"} <= set(summary)
    assert 0.0 <= summary["token_f1"] <= 1.0
    answers = [text for prompt, text in recorder.replies if prompt.startswith("Answer the question")]
    judged = [text for prompt, text in recorder.replies if prompt.startswith("You grade answers")]
    assert len(answers) >= 3 and len(judged) >= 1
    assert all(row.get("llm_judge") in (0.0, 1.0, None) for row in rows)
    assert services.llm.usage.calls >= 4 and services.llm.usage.input_tokens > 0


def test_serve_llm_command_prints_the_settings_and_sigterm_stops_its_server(local_llm, tmp_path):
    """`pcm serve-llm` starts the server in its own session; a SIGTERM to the command (a service
    manager, `timeout`) must stop the server too, not leave it running on its port."""
    import os
    import signal
    import subprocess
    import sys

    import httpx

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    command = [str(Path(sys.executable).with_name("pcm")), "serve-llm", "--data-dir", str(data_dir)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [process.stdout.readline().strip() for _ in range(2)]
        assert lines[0].startswith("export PCM_LLM_BASE_URL=http://127.0.0.1:") and lines[1].startswith(
            "export PCM_LLM_MODEL="
        )
        base_url = lines[0].split("=", 1)[1]
        assert httpx.get(base_url.removesuffix("/v1") + "/health", timeout=5).status_code == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        with pytest.raises(httpx.ConnectError):
            httpx.get(base_url.removesuffix("/v1") + "/health", timeout=5)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)


def test_surprise_model_loads_the_converted_folder_with_the_ggufs_exact_scores(ctx, tmp_path):
    from pcm.model_files import default_language_model
    from pcm.perception.language_model import CausalLMScorer, surprise_model_source

    folder, gguf_file = surprise_model_source(ctx)
    assert folder == str(prepare_model(model_cache())) and gguf_file == ""
    converted, original = CausalLMScorer(folder), CausalLMScorer(*default_language_model())
    for text, context in [
        ("Grilled a steak for dinner tonight.", "I'm a vegetarian."),
        ("我搬到了上海。", "我住在北京。"),
    ]:
        assert converted.nll(text, context) == original.nll(text, context)
    assert converted.start_id == original.start_id
    # a configured cache folder is used as given; an unwritable one falls back to the GGUF itself
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert surprise_model_source(ctx.replace(model_cache=str(blocked / "models"))) == default_language_model()
