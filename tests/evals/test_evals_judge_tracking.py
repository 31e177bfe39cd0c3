"""The LLM judge (Mem0's protocol) and the LangSmith wiring, both without any network."""

import socket

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from evals import tracking
from evals.bench.judge import judge_answer
from pcm.llm import LLMClient

ITEMS = [
    {
        "id": i,
        "inputs": {"question": f"q{i}"},
        "reference": {"answer": "a"},
        "outputs": {"recall@10": i / 2, "ndcg@10": None if i == 0 else 1.0},
    }
    for i in range(3)
]


def fake_llm(*replies):
    return LLMClient(GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies])))


def test_judge_reads_the_verdict():
    assert judge_answer(fake_llm('{"reasoning": "same day", "label": "CORRECT"}'), "When?", "7 May", "May 7th") == 1.0
    assert judge_answer(fake_llm('{"reasoning": "other city", "label": "WRONG"}'), "Where?", "Paris", "Rome") == 0.0


def test_judge_gives_no_score_for_malformed_verdicts():
    llm = fake_llm("CORRECT I think", '{"label": "MAYBE"}')
    assert judge_answer(llm, "Where?", "Paris", "Paris") is None
    assert llm.usage.failures == 2


@pytest.fixture
def no_network(monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("no network in tests")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def test_without_a_key_nothing_is_traced_or_logged(monkeypatch, no_network):
    import langsmith

    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setattr(langsmith, "Client", lambda *a, **k: pytest.fail("a LangSmith client was created"))
    assert tracking.configure_tracing() is False
    assert tracking.langsmith_enabled() is False
    assert tracking.log_experiment("locomo", ITEMS, ["recall@10"]) is None
    import os

    assert os.environ["LANGSMITH_TRACING"] == "false" and not no_network


def test_with_a_key_tracing_is_switched_on(monkeypatch):
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-test")
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    assert tracking.configure_tracing() is True


def test_experiment_reports_the_measured_metrics(monkeypatch, no_network):
    from langsmith import Client

    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    tracking.configure_tracing()
    client = Client(api_key="offline", api_url="http://127.0.0.1:9", auto_batch_tracing=False, info={})
    logged = tracking.log_experiment("locomo", ITEMS, ["recall@10", "ndcg@10"], client=client, upload=False)
    assert logged["dataset"] == "pcm-locomo" and logged["uploaded"] is False
    assert logged["means"] == {"recall@10": pytest.approx(0.5), "ndcg@10": 1.0}
    assert not no_network


class RecordingClient:
    def __init__(self):
        self.calls = []

    def has_dataset(self, dataset_name):
        self.calls.append(("has_dataset", dataset_name))
        return False

    def create_dataset(self, dataset_name, description):
        self.calls.append(("create_dataset", dataset_name))

    def create_examples(self, dataset_name, examples):
        self.calls.append(("create_examples", dataset_name, examples))


def test_upload_creates_the_dataset_then_evaluates_on_it(monkeypatch):
    import langsmith

    seen = {}

    class Results(list):
        experiment_name = "pcm-locomo-1"

    def fake_evaluate(target, data, evaluators, client, upload_results, **kwargs):
        seen.update(data=data, upload=upload_results, output=target({"id": "1"}), keys=[e.__name__ for e in evaluators])
        return Results()

    monkeypatch.setattr(langsmith, "evaluate", fake_evaluate)
    client = RecordingClient()
    logged = tracking.log_experiment("locomo", ITEMS, ["recall@10"], client=client, upload=True)
    assert [c[0] for c in client.calls] == ["has_dataset", "create_dataset", "create_examples"]
    examples = client.calls[2][2]
    assert len(examples) == 3 and examples[1]["inputs"] == {"id": "1", "question": "q1"}
    assert seen == {"data": "pcm-locomo", "upload": True, "output": ITEMS[1]["outputs"], "keys": ["recall_at_10"]}
    assert logged["experiment"] == "pcm-locomo-1"
