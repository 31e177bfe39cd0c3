"""The words a memory is found by in the lexical indexes, and how they are stored with it.

A retrievable memory's words are those of its own dated text, `WORDS_SEPARATOR`, then those of
its text in context (`pcm.world.representation`); the two lexical indexes take one part each.
They are stored beside the memory's row behind the tokeniser's fingerprint and the layout, so
that reopening a memory reads them instead of tokenising it again, and words that another
tokeniser or layout made are made again.
"""

from __future__ import annotations

from collections.abc import Mapping

from pcm.models import RETRIEVABLE_VALUES, MemoryNode
from pcm.world.representation import context_text, own_text
from pcm.world.text import lexical_terms, tokenizer_fingerprint

#: in a memory's stored words, between the words of its own dated text and those of its text in
#: context (`pcm.world.representation`); no content word contains it
WORDS_SEPARATOR = "||"
#: the layout of stored words: stored words of another layout are made again when loaded
WORDS_LAYOUT = "own||context"


def words_of(attrs: Mapping, node: MemoryNode | None = None) -> list[str]:
    """The words both lexical indexes need: own dated text, WORDS_SEPARATOR, text in context
    (none for memories not retrieved by similarity). `node`, when the caller has it, spares
    re-validating the attributes."""
    if attrs["type"] not in RETRIEVABLE_VALUES:
        return []
    node = node or MemoryNode.model_validate(attrs)
    own, context = lexical_terms(own_text(node)), lexical_terms(context_text(node))
    if not own and not context:
        return []
    return [*(own or [WORDS_SEPARATOR + "none"]), WORDS_SEPARATOR, *(context or [WORDS_SEPARATOR + "none"])]


def split_words(words: list[str]) -> tuple[list[str], list[str]]:
    """(own words, words in context) of stored words."""
    if WORDS_SEPARATOR not in words:
        return words, words
    cut = words.index(WORDS_SEPARATOR)
    return words[:cut], words[cut + 1 :]


def stored_words_prefix() -> str:
    """What stored words of this tokeniser and layout start with (the layout itself holds "|")."""
    return f"{tokenizer_fingerprint()}:{WORDS_LAYOUT}|"


def stored_words(words: list[str]) -> str:
    """Stored words: the tokeniser's fingerprint, then the words (none holds a space)."""
    return f"{stored_words_prefix()}{' '.join(words)}"


def parse_stored_words(stored: str) -> list[str] | None:
    """The stored words, or None if another tokeniser made them."""
    prefix = stored_words_prefix()
    return stored[len(prefix) :].split() if stored.startswith(prefix) else None
