"""PCM as a node of a larger agent graph: the README's embedding example, executed."""

from typing import Annotated

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from pcm import build_graph


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    user_id: str
    retrieved: list[dict]
    surprisal: dict
    changes: list[dict]


def test_pcm_runs_as_a_subgraph_of_an_agent(ctx):
    memory = build_graph()
    agent = StateGraph(AgentState)
    agent.add_node("memory", memory)
    agent.add_edge(START, "memory")
    app = agent.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [HumanMessage("I'm a nurse in a children's hospital.")], "user_id": "nina"},
               config, context=ctx)
    out = app.invoke({"messages": [HumanMessage("Night shift again at the children's hospital.")],
                      "user_id": "nina"}, config, context=ctx)
    assert out["surprisal"]["level"] in ("low", "medium", "high")
    assert any("nurse" in m["content"] for m in out["retrieved"])
    assert all({"weight", "score", "type"} <= set(m) for m in out["retrieved"])
    assert out["changes"] and all({"node_id", "old_weight", "new_weight", "reason"} <= set(c) for c in out["changes"])
    assert [m.content for m in out["messages"]][-1] == "Night shift again at the children's hospital."
