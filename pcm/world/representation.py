"""What a memory is about, as the indexes see it: its own text, dated, and its text in context.

A conversation turn is short and leans on the turns before it ("That's awesome! What made you
pick it?"), so each memory is indexed twice: its *own* text with its date ("[8 May 2023]
Caroline: I went to a support group yesterday") and its *contextual* text, the preceding turns of
the same episode followed by it. Retrieval mixes the two evidences with `context_weight` μ
(`pcm.formulas.mix`): dense similarity against one vector (1 − μ)·e(own) + μ·e(context), whose
dot product with a unit query is exactly that mixture of cosines, and lexical evidence from one
BM25 index per text. Content shown to users and the LLM stays the memory's own words.
"""

from __future__ import annotations

import numpy as np

from pcm.formulas import mix
from pcm.models import MemoryNode


def own_text(node: MemoryNode) -> str:
    """The memory's words with the day they were said."""
    return f"[{node.created_at:%-d %B %Y}] {node.content}"


def context_text(node: MemoryNode) -> str:
    """The memory's words after the turns that preceded them (its own words when it has none)."""
    return f"{node.context}\n{node.content}" if node.context else node.content


def index_vectors(encode, nodes: list[MemoryNode], context_weight: float) -> np.ndarray:
    """One vector per memory: (1 − μ)·e(own text) + μ·e(contextual text); not unit length."""
    own = encode([own_text(n) for n in nodes])
    if context_weight <= 0:
        return own
    return mix(own, encode([context_text(n) for n in nodes]), context_weight)
