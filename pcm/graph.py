"""The PCM workflow as a LangGraph StateGraph.

[input validated on the entry edge] → initial retrieval → perceive (working memory,
intent, surprise, and the level `pcm.routing` decides) → intent-masked retrieval →
[`branch_of_level`] correction | profiling | maintenance (each a compiled subgraph) →
consolidate evicted turns → respond (LLM only) → persist.

The input is checked on the edge from START: an edge's error discards the run's input
writes, so a rejected turn leaves nothing behind that a later turn of the thread could
inherit (a check inside the first node would leave the bad input in the checkpoint).

`graph` is what `langgraph.json` serves (the server supplies the checkpointer);
`build_graph(...)` compiles one for applications, tests and parent agents.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from pcm.config import PCMContext, resolve_context
from pcm.nodes import evolution, memory, perception, turn_user, user_of
from pcm.routing import BRANCH_OF_LEVEL, branch_of_level
from pcm.services import Services
from pcm.state import InputState, OutputState, PCMState
from pcm.validation import admit_turn


def _bind(step: Callable, services: Services | None) -> Callable:
    """Adapt `step(state, [config,] ctx, services)` to a LangGraph node taking the runtime context.

    If the step raises, the turn it belongs to is rolled back before the error propagates: this
    is what makes a turn atomic in any host (`PCM.process`, `langgraph dev`, a parent graph).
    """
    wants_config = "config" in inspect.signature(step).parameters

    @functools.wraps(step)
    def node(state: PCMState, config: RunnableConfig, runtime: Runtime[PCMContext]) -> dict:
        ctx = resolve_context(runtime.context)
        bound = services or Services.for_context(ctx)
        try:
            return step(state, config, ctx, bound) if wants_config else step(state, ctx, bound)
        except BaseException:
            turn = bound.store.open_turn(user_of(state), state["turn_owner"]) if state.get("turn_owner") else None
            if turn is not None:
                turn.abort()
            raise

    del node.__wrapped__
    return node


def _admission(services: Services | None) -> Callable:
    """The entry edge: the turn is admitted (`pcm.validation.admit_turn`: every input field,
    the named target memories, a message id not stored yet) before it can change anything;
    then it starts at `retrieve_initial`."""

    def admit(state: PCMState, config, runtime: Runtime[PCMContext]) -> str:
        ctx = resolve_context(runtime.context)
        admit_turn(state, turn_user(state, config), (services or Services.for_context(ctx)).store, ctx)
        return "retrieve_initial"

    return admit


def _branch(name: str, steps: list[Callable], services: Services | None):
    builder = StateGraph(PCMState, context_schema=PCMContext)
    previous = START
    for step in steps:
        builder.add_node(step.__name__, _bind(step, services))
        builder.add_edge(previous, step.__name__)
        previous = step.__name__
    builder.add_edge(previous, END)
    return builder.compile(name=name)


def build_graph(services: Services | None = None, checkpointer=None, name: str = "pcm"):
    """Compile the PCM graph. `services=None` loads models lazily from the runtime context."""
    builder = StateGraph(PCMState, context_schema=PCMContext, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve_initial", _bind(perception.retrieve_initial, services))
    builder.add_node("perceive", _bind(perception.perceive, services))
    builder.add_node("retrieve_masked", _bind(perception.retrieve_masked, services))
    builder.add_node("correction", _branch("correction", [evolution.diagnose_conflicts, evolution.correct], services))
    builder.add_node("profiling", _branch("profiling", [evolution.profile], services))
    builder.add_node("maintenance", _branch("maintenance", [evolution.maintain], services))
    builder.add_node("consolidate", _bind(memory.consolidate, services))
    builder.add_node("respond", _bind(memory.respond, services))
    builder.add_node("persist", _bind(memory.persist, services))
    builder.add_conditional_edges(START, _admission(services), ["retrieve_initial"])
    builder.add_edge("retrieve_initial", "perceive")
    builder.add_edge("perceive", "retrieve_masked")
    builder.add_conditional_edges("retrieve_masked", branch_of_level, list(BRANCH_OF_LEVEL.values()))
    for branch in ("correction", "profiling", "maintenance"):
        builder.add_edge(branch, "consolidate")
    builder.add_edge("consolidate", "respond")
    builder.add_edge("respond", "persist")
    builder.add_edge("persist", END)
    return builder.compile(checkpointer=checkpointer, name=name)


graph = build_graph()
