"""Shared fixtures. Models load once per test process (Services shares them through a cache)."""

from __future__ import annotations

import json
import logging
import re

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from pcm.api import PCM
from pcm.config import load_context
from pcm.services import Services

logging.getLogger("bm25s").setLevel(logging.WARNING)


@pytest.fixture(autouse=True)
def no_langsmith(monkeypatch):
    """Tests never send anything to LangSmith, whatever the developer's environment holds."""
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    for name in list(__import__("os").environ):
        if name.startswith("PCM_"):
            monkeypatch.delenv(name)
    return load_context(data_dir=str(tmp_path / "data"))


@pytest.fixture
def pcm(ctx):
    return PCM(ctx, checkpointer=InMemorySaver())


class ScriptedChatModel(BaseChatModel):
    """A LangChain chat model that answers each PCM prompt kind with fixed JSON (or text).

    `broken` lists prompt kinds whose replies are malformed, to exercise retries and fallback.
    """

    broken: tuple[str, ...] = ()
    calls: list[str] = []
    intent: dict[str, float] = {"Coding": 0.1, "Academic": 0.1, "Personal": 0.1, "Casual": 0.1, "Professional": 0.6}

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _kind(self, system: str) -> str:
        for kind, marker in (
            ("intent", "Classify the user's message"),
            ("relation", "Decide how the new message"),
            ("hypothesis", "testable hypothesis"),
            ("facts", "Extract the atomic facts"),
            ("judge", "You grade answers"),
            ("qa", "Answer the question about the conversation"),
        ):
            if marker in system:
                return kind
        return "reply"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        system = messages[0].content if messages else ""
        kind = self._kind(system)
        self.calls.append(kind)
        if kind in self.broken:
            text = "I am not JSON at all"
        elif kind == "intent":
            text = json.dumps({"distribution": self.intent})
        elif kind == "relation":
            ids = re.findall(r"\[(m-[0-9a-f]+)\]", messages[-1].content)
            text = json.dumps(
                {
                    "relation": "contradiction",
                    "conflict_score": 0.9,
                    "conflicting_ids": ids[:1],
                    "supported_ids": [],
                    "reason": "job change",
                }
            )
        elif kind == "hypothesis":
            text = json.dumps(
                {
                    "monologue": "they mention a new employer",
                    "hypothesis": "The user changed jobs",
                    "evidence_keywords": ["microsoft"],
                }
            )
        elif kind == "facts":
            text = json.dumps({"facts": [{"turn": 1, "fact": "The user works at Microsoft."}]})
        elif kind == "judge":
            text = json.dumps({"reasoning": "names the same thing", "label": "CORRECT"})
        elif kind == "qa":
            text = "not mentioned"
        else:
            text = "Noted: you work at Microsoft now."
        message = AIMessage(content=text, usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def scripted_model():
    return ScriptedChatModel(calls=[])


@pytest.fixture
def llm_pcm(ctx, scripted_model):
    return PCM(ctx, Services(ctx, chat_model=scripted_model), checkpointer=InMemorySaver())


@pytest.fixture
def write_jsonl():
    """A function that writes rows to `path` as JSON lines (UTF-8, one row a line) and returns the path."""

    def write(path, rows):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        return path

    return write
