"""Layer 3, cognitive evolution: how one turn changes long-term memory.

`correction` (high surprise), `profiling` (medium), `maintenance` (low) and
`consolidation` (turns evicted from working memory). Each function works on one user's
WeightedKnowledgeGraph and returns the MemoryChange events it caused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pcm.config import PCMContext
from pcm.formulas import informativeness
from pcm.models import MemoryChange, MemoryNode, MemorySource, NodeType, RetrievedMemory
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.text import content_words, has_cjk


@dataclass
class TurnInfo:
    """The input being processed and where it comes from."""

    text: str
    turn: int
    thread_id: str | None
    timestamp: datetime
    domain: str | None = None
    speaker: str | None = None
    dialog_ids: list[str] = field(default_factory=list)
    domains: dict[str, float] | None = None
    context: str | None = None
    router_posterior: list[float] | None = None

    @property
    def content(self) -> str:
        """What the memory stores: the words, prefixed by the speaker when there is one."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text

    def source(self) -> MemorySource:
        return MemorySource(
            thread_id=self.thread_id,
            turn=self.turn,
            dialog_ids=self.dialog_ids,
            speaker=self.speaker,
            session_time=self.timestamp,
        )


def write_memory(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    content: str,
    node_type: NodeType,
    weight: float,
    ctx: PCMContext,
    *,
    agent: str,
    reason: str,
    keywords: list[str] | None = None,
) -> tuple[MemoryNode, MemoryChange]:
    """Create one memory from this turn, with its provenance and an audit event. `weight` is the
    branch's; a stated fact starts at its `stated_weight`."""
    if node_type == NodeType.FACT:
        weight = stated_weight(weight, content, ctx)
    node = MemoryNode(
        content=content,
        type=node_type,
        domain=info.domain,
        domain_distribution=info.domains,
        weight=weight,
        created_at=info.timestamp,
        updated_at=info.timestamp,
        last_accessed=info.timestamp,
        keywords=keywords or [],
        source=info.source(),
        context=info.context if node_type != NodeType.HYPOTHESIS else None,
        router_posterior=info.router_posterior if node_type == NodeType.FACT else None,
    )
    change = graph.add_node(node, reason=reason, agent=agent, turn=info.turn, thread_id=info.thread_id)
    return node, change


def stated_weight(base: float, content: str, ctx: PCMContext) -> float:
    """The weight a stated fact starts at: its branch's `base` times π(n) of its n content words
    (`pcm.formulas.informativeness`), so that a memory holding more to remember starts higher."""
    return base * informativeness(
        len(content_words(content)), ctx.informativeness_saturation, ctx.informativeness_exponent
    )


def related_memories(
    retrieved: list[RetrievedMemory], ctx: PCMContext, relative: float = 0.75
) -> list[RetrievedMemory]:
    """The retrieved memories about the same subject as the input: direct hits with similarity at
    least `related_min_similarity` and at least `relative` times the best hit's."""
    hits = [m for m in retrieved if m.via == "search" and m.type != NodeType.ENTITY]
    if not hits:
        return []
    best = max(m.similarity for m in hits)
    floor = max(ctx.related_min_similarity, relative * best)
    related = [m for m in hits if m.similarity >= floor]
    return sorted(related, key=lambda m: -m.score)[: ctx.max_related]


#: Zipf frequency (log10 of occurrences per billion words, `wordfreq`) from which a word counts as
#: common in general use: 4.0 is once per 100,000 words ("lately" 4.4, "learning" 4.9, "bread" 4.5,
#: "pottery" 3.7, "Rust" 3.7; 最近 5.3, 陶艺 2.6).
COMMON_WORD_ZIPF = 4.0


def is_common_word(word: str) -> bool:
    """True for a word frequent in general English or Chinese (Zipf ≥ COMMON_WORD_ZIPF)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "zh" if has_cjk(word) else "en") >= COMMON_WORD_ZIPF


def informative_keywords(graph: WeightedKnowledgeGraph, words: list[str]) -> list[str]:
    """The words (order kept) that say what something is about: rare in the user's memory
    (`informative_words`) and not common in general use (`is_common_word`)."""
    rare = graph.informative_words(words)
    return [w for w in words if w in rare and not is_common_word(w)]


def closest_memory(retrieved: list[RetrievedMemory]) -> RetrievedMemory | None:
    return next((m for m in retrieved if m.via == "search"), None)
