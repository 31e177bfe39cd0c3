"""A small tool-calling agent whose memory is PCM.

Every user turn first goes through PCM (as a subgraph node); the retrieved memories,
with their confidence weights, are injected into the model's prompt; the model can call
the memory tools (search, remember, correct, profile). Run it with any chat model that
supports tool calling, e.g. `ChatOpenAI(model="gpt-4o-mini")`; the test runs it with a
fake model.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AnyMessage, SystemMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from pcm.api import PCM
from pcm.graph import build_graph
from pcm.tools import make_memory_tools


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    user_id: str
    retrieved: list[dict]
    surprisal: dict


def build_agent(chat_model, pcm: PCM, user_id: str, checkpointer=None):
    """Agent graph: PCM memory step → model (memories in its prompt) ⇄ memory tools."""
    tools = make_memory_tools(pcm, user_id)
    model = chat_model.bind_tools(tools)

    def call_model(state: AgentState) -> dict:
        memories = (
            "\n".join(
                f"- ({m['type']}, confidence {m['weight']:.2f}) {m['content']}" for m in state.get("retrieved") or []
            )
            or "- (nothing yet)"
        )
        prompt = SystemMessage(f"You are a helpful assistant. What you remember about the user:\n{memories}")
        return {"messages": [model.invoke([prompt, *state["messages"]])]}

    graph = StateGraph(AgentState)
    graph.add_node("memory", build_graph(pcm.services))
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "memory")
    graph.add_edge("memory", "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


if __name__ == "__main__":
    import sys

    from langchain_openai import ChatOpenAI

    from pcm.config import load_context

    ctx = load_context()
    agent = build_agent(ChatOpenAI(model=ctx.llm_model or "gpt-4o-mini"), PCM(ctx, checkpointer=None), "demo-user")
    result = agent.invoke(
        {"messages": [("user", " ".join(sys.argv[1:]) or "Hi, I just moved to Lisbon!")], "user_id": "demo-user"},
        context=ctx,
    )
    print(result["messages"][-1].content)
