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


def _changes(out: dict) -> list[dict]:
    """A turn's memory changes, as a tool reports them."""
    fields = ("old_weight", "new_weight", "reason")
    return [{"id": c["node_id"], **{name: c[name] for name in fields}} for c in out["changes"]]


class MemoryTools:
    """The tools of one user's memory (`make_memory_tools`); each method is one tool."""

    def __init__(self, pcm: PCM, user_id: str, thread_id: str):
        self.pcm, self.user_id, self.thread_id = pcm, user_id, thread_id

    def search_memory(self, query: str, k: int = 5) -> list[dict]:
        """Intent-masked retrieval from the user's long-term memory: content, type, weight (confidence), age."""
        found = self.pcm.search(query, user_id=self.user_id, top_k=k)
        return [
            {
                "id": m.id,
                "content": m.content,
                "type": m.type.value,
                "weight": round(m.weight, 3),
                "score": round(m.score, 4),
                "age_days": _age_days(m.updated_at),
            }
            for m in found
        ]

    def remember(self, text: str) -> dict:
        """Tell the memory something about the user; it decides (by surprise) how memory evolves."""
        out = self._process(text)
        return {"level": out["surprisal"]["level"], "agent": out["agent"], "changes": _changes(out)}

    def correct_memory(self, memory_id: str, correction: str, reason: str) -> dict:
        """Mark a memory as wrong or outdated: it is decayed (never deleted) and the correction supersedes it."""
        if not reason.strip():
            raise ToolException("reason must not be empty: it is recorded in the audit log")
        if not self.pcm.services.store.exists(self.user_id) or memory_id not in self.pcm.memory(self.user_id):
            raise ToolException(f"no memory with id {memory_id!r} for this user; use search_memory to find ids")
        out = self._process(correction, force_level="high", target_ids=[memory_id], note=reason)
        return {"agent": out["agent"], "changes": _changes(out)}

    def memory_profile(self, limit: int = 10) -> dict:
        """The user's strongest facts and the open hypotheses about them."""
        if not self.pcm.services.store.exists(self.user_id):
            return {"facts": [], "hypotheses": []}
        graph = self.pcm.memory(self.user_id)

        def strongest(node_type: NodeType) -> list[dict]:
            nodes = sorted(graph.nodes(types=[node_type], include_dormant=False), key=lambda n: -n.weight)
            return [{"id": n.id, "content": n.content, "weight": round(n.weight, 3)} for n in nodes[:limit]]

        return {"facts": strongest(NodeType.FACT), "hypotheses": strongest(NodeType.HYPOTHESIS)}

    def _process(self, text: str, **options) -> dict:
        try:
            return self.pcm.process(text, user_id=self.user_id, thread_id=self.thread_id, **options)
        except ValueError as error:
            raise ToolException(str(error)) from None


def make_memory_tools(pcm: PCM, user_id: str, thread_id: str = "agent") -> list[BaseTool]:
    """search_memory, remember, correct_memory and memory_profile for one user."""
    tools = MemoryTools(pcm, user_id, thread_id)
    specs = [
        (tools.search_memory, SearchArgs),
        (tools.remember, RememberArgs),
        (tools.correct_memory, CorrectArgs),
        (tools.memory_profile, ProfileArgs),
    ]
    return [
        StructuredTool.from_function(fn, name=fn.__name__, description=fn.__doc__, args_schema=schema)
        for fn, schema in specs
    ]
