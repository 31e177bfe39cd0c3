"""Memory tools for agents, and the example agent, driven by a fake tool-calling model."""

import importlib.util
import sys
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import ToolException
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError

from pcm.tools import make_memory_tools

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_with_pcm_memory.py"


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's fake chat model, accepting tools like a real tool-calling model."""

    def bind_tools(self, tools, **kwargs):
        return self


@pytest.fixture
def tools(pcm):
    return {t.name: t for t in make_memory_tools(pcm, "tess")}


def test_remember_goes_through_the_graph_and_search_finds_it(tools, pcm):
    result = tools["remember"].invoke({"text": "I work at Google as a site reliability engineer."})
    assert result["agent"] == "maintenance" and result["changes"][0]["old_weight"] is None
    found = tools["search_memory"].invoke({"query": "Where does the user work?", "k": 3})
    assert found[0]["content"].startswith("I work at Google") and found[0]["type"] == "fact"
    assert {"weight", "age_days", "id"} <= set(found[0])
    assert pcm.memory("tess").history(found[0]["id"])[0].agent == "maintenance"


def test_correct_memory_decays_it_and_audits_the_reason(tools, pcm):
    tools["remember"].invoke({"text": "I work at Google as a site reliability engineer."})
    old_id = tools["search_memory"].invoke({"query": "employer"})[0]["id"]
    result = tools["correct_memory"].invoke(
        {"memory_id": old_id, "correction": "I now work at Microsoft.", "reason": "user changed jobs in May"}
    )
    assert result["agent"] == "correction"
    decayed = next(c for c in result["changes"] if c["id"] == old_id)
    assert decayed["new_weight"] < decayed["old_weight"]
    assert "user changed jobs in May" in pcm.memory("tess").history(old_id)[-1].reason
    profile = tools["memory_profile"].invoke({})
    assert profile["facts"][0]["content"] == "I now work at Microsoft."


def test_bad_arguments_are_clear_errors(tools):
    with pytest.raises(ValidationError, match="query must not be empty"):
        tools["search_memory"].invoke({"query": "  "})
    with pytest.raises(ValidationError):
        tools["search_memory"].invoke({"query": "x", "k": 0})
    with pytest.raises(ToolException, match="no memory with id"):
        tools["correct_memory"].invoke({"memory_id": "m-nope", "correction": "x", "reason": "y"})
    with pytest.raises(ToolException, match="empty"):
        tools["remember"].invoke({"text": ""})
    assert tools["memory_profile"].invoke({}) == {"facts": [], "hypotheses": []}


def test_tools_are_bound_to_one_user(pcm):
    make_memory_tools(pcm, "alice")[1].invoke({"text": "My safe code is 2468."})
    bob_search = make_memory_tools(pcm, "bob")[0]
    assert bob_search.invoke({"query": "safe code"}) == []


def test_example_agent_uses_memory_and_tools(pcm, ctx):
    spec = importlib.util.spec_from_file_location("agent_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    sys.modules["agent_example"] = example
    spec.loader.exec_module(example)
    replies = iter(
        [
            AIMessage(
                content="",
                tool_calls=[{"name": "remember", "args": {"text": "The user's dog is called Rex."}, "id": "call-1"}],
            ),
            AIMessage(content="Nice to meet Rex!"),
            AIMessage(
                content="", tool_calls=[{"name": "search_memory", "args": {"query": "dog name"}, "id": "call-2"}]
            ),
            AIMessage(content="Your dog is Rex."),
        ]
    )
    agent = example.build_agent(ToolCallingFake(messages=replies), pcm, "owner", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "chat"}}
    first = agent.invoke(
        {"messages": [HumanMessage("I adopted a dog named Rex.")], "user_id": "owner"}, config, context=ctx
    )
    assert first["messages"][-1].content == "Nice to meet Rex!"
    second = agent.invoke(
        {"messages": [HumanMessage("What's my dog's name?")], "user_id": "owner"}, config, context=ctx
    )
    assert second["messages"][-1].content == "Your dog is Rex."
    assert any("Rex" in m["content"] for m in second["retrieved"])
    tool_output = [m for m in second["messages"] if m.type == "tool"][-1].content
    assert "Rex" in tool_output
