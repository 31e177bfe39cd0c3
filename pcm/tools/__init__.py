"""LangChain tools that give an agent its user's PCM memory.

`make_memory_tools(pcm, user_id)` binds the tools to one user, so a model can never
reach another user's memory, whatever arguments it invents. Writes go through the PCM
graph (the normal evolution path, audit log included), never around it.
"""

from __future__ import annotations

from datetime import datetime, timezone

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field, field_validator

from pcm.api import PCM
from pcm.models import NodeType


class SearchArgs(BaseModel):
    query: str = Field(description="what to look for in the user's memory")
    k: int = Field(5, ge=1, le=50, description="how many memories to return")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be empty")
        return value


class RememberArgs(BaseModel):
    text: str = Field(description="something the user said or revealed, in their words")


class CorrectArgs(BaseModel):
    memory_id: str = Field(description="id of the memory that is wrong or outdated (from search_memory)")
    correction: str = Field(description="the correct, current information")
    reason: str = Field(description="why the memory is being corrected; kept in the audit log")


class ProfileArgs(BaseModel):
    limit: int = Field(10, ge=1, le=50, description="how many facts and hypotheses at most")


def _age_days(moment: datetime | None) -> float | None:
    if moment is None:
        return None
    return round((datetime.now(timezone.utc) - moment).total_seconds() / 86400, 2)


def make_memory_tools(pcm: PCM, user_id: str, thread_id: str = "agent") -> list[BaseTool]:
    """search_memory, remember, correct_memory and memory_profile for one user."""

    def search_memory(query: str, k: int = 5) -> list[dict]:
        """Intent-masked retrieval from the user's long-term memory: content, type, weight (confidence), age."""
        return [{"id": m.id, "content": m.content, "type": m.type.value, "weight": round(m.weight, 3),
                 "score": round(m.score, 4), "age_days": _age_days(m.updated_at)}
                for m in pcm.search(query, user_id=user_id, top_k=k)]

    def remember(text: str) -> dict:
        """Tell the memory something about the user; it decides (by surprise) how memory evolves."""
        try:
            out = pcm.process(text, user_id=user_id, thread_id=thread_id)
        except ValueError as error:
            raise ToolException(str(error)) from None
        return {"level": out["surprisal"]["level"], "agent": out["agent"],
                "changes": [{"id": c["node_id"], "old_weight": c["old_weight"], "new_weight": c["new_weight"],
                             "reason": c["reason"]} for c in out["changes"]]}

    def correct_memory(memory_id: str, correction: str, reason: str) -> dict:
        """Mark a memory as wrong or outdated: it is decayed (never deleted) and the correction supersedes it."""
        if not reason.strip():
            raise ToolException("reason must not be empty: it is recorded in the audit log")
        if not pcm.services.store.exists(user_id) or memory_id not in pcm.memory(user_id):
            raise ToolException(f"no memory with id {memory_id!r} for this user; use search_memory to find ids")
        try:
            out = pcm.process(correction, user_id=user_id, thread_id=thread_id, force_level="high",
                              target_ids=[memory_id], note=reason)
        except ValueError as error:
            raise ToolException(str(error)) from None
        return {"agent": out["agent"], "changes": [{"id": c["node_id"], "old_weight": c["old_weight"],
                                                    "new_weight": c["new_weight"], "reason": c["reason"]}
                                                   for c in out["changes"]]}

    def memory_profile(limit: int = 10) -> dict:
        """The user's strongest facts and the open hypotheses about them."""
        if not pcm.services.store.exists(user_id):
            return {"facts": [], "hypotheses": []}
        graph = pcm.memory(user_id)

        def strongest(node_type: NodeType) -> list[dict]:
            nodes = sorted(graph.nodes(types=[node_type], include_dormant=False), key=lambda n: -n.weight)
            return [{"id": n.id, "content": n.content, "weight": round(n.weight, 3)} for n in nodes[:limit]]
        return {"facts": strongest(NodeType.FACT), "hypotheses": strongest(NodeType.HYPOTHESIS)}

    specs = [(search_memory, SearchArgs), (remember, RememberArgs), (correct_memory, CorrectArgs),
             (memory_profile, ProfileArgs)]
    return [StructuredTool.from_function(fn, name=fn.__name__, description=fn.__doc__, args_schema=schema)
            for fn, schema in specs]
