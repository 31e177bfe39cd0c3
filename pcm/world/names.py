"""Named entities of a turn, for the knowledge graph's ENTITY nodes: people, pets, places,
organisations, products, events and titles, multi-word ones whole ("Fox Hollow"), in English
(`pcm.world.names_en`) and Chinese (`pcm.world.names_zh`), each once and without a possessive
("Pixie's" is "Pixie", so both are one node: `WeightedKnowledgeGraph.entity_id`).

Profiling's keywords come from `pcm.world.text.extract_entities`, which stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pcm.world.names_en import KnownName, english_names
from pcm.world.names_zh import chinese_names
from pcm.world.text import has_cjk

__all__ = ["KnownName", "entity_key", "known_names", "named_entities"]

_POSSESSIVE = re.compile(r"['’]s$")
#: a product model: a number, or a model word (Mate60, X100, Mini 4 Pro, PLUS)
_MODEL = re.compile(r"\d|\b(?:pro|plus|max|mini|ultra|air|lite|note|se)\b", re.IGNORECASE)


def named_entities(text: str, known: KnownName | None = None, limit: int = 12) -> list[str]:
    """The names `text` mentions, in order of appearance, each once (case and a possessive aside),
    at most `limit`. `known(name)`: whether a name is already known (a speaker, an entity of the
    memory); a known name counts even where it opens a sentence."""
    chinese = has_cjk(text)
    found = list(chinese_names(text)) if chinese else []
    for start, name in english_names(text, known or (lambda name: False), cased=not chinese):
        _add_latin(found, text, start, name)
    unique: dict[str, str] = {}
    for _, name in sorted(found, key=lambda item: item[0]):
        if entity_key(name):
            unique.setdefault(entity_key(name), _POSSESSIVE.sub("", name.strip()))
    return list(unique.values())[:limit]


def _add_latin(found: list[tuple[int, str]], text: str, start: int, name: str) -> None:
    """Add a Latin-script name to the names `found`: a part of a Chinese one (理想L7) adds nothing, and a
    model right after a Chinese brand joins it (华为Mate60, 大疆 Mini 4 Pro)."""
    for index, (begin, chinese) in enumerate(found):
        end = begin + len(chinese)
        if begin <= start < end:
            return
        if has_cjk(chinese) and text[end:start].strip() == "" and start - end <= 1 and _MODEL.search(name):
            found[index] = (begin, text[begin : start + len(name)])
            return
    found.append((start, name))


def entity_key(name: str) -> str:
    """What makes two mentions one entity: lower case, no trailing possessive, no outer spaces."""
    return _POSSESSIVE.sub("", name.strip()).strip().lower()


def known_names(names: Iterable[str]) -> KnownName:
    """A `known` test for `named_entities` from names (the speakers): each, and its first word."""
    keys = set()
    for name in names:
        if name and name.split():
            keys.update({entity_key(name), entity_key(name.split()[0])})
    return lambda name: entity_key(name) in keys
