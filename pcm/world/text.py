"""Language-aware word splitting and entity extraction (English and Chinese).

Chinese has no spaces, so words come from `jieba`; entities come from jieba's
part-of-speech tags (names, places, organisations, other proper nouns, Latin words)
and, for Latin script, from capitalised words and technical tokens.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache

import jieba
import jieba.posseg

jieba.setLogLevel(logging.WARNING)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#._'-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
STOPWORDS = frozenset(
    "a an the and or but if then so of to in on at for with by from as is are was were be been being "
    "i me my mine we our you your he him his she her it its they them their this that these those "
    "do does did doing have has had having not no yes can could will would should may might must "
    "just also very really too about into over after before than what which who whom whose when "
    "where why how all any some such own same other more most much many up down out off again "
    "there here am im i'm it's don't didn't doesn't isn't wasn't i've i'll i'd".split()
)
ZH_STOPWORDS = frozenset("的 了 是 我 你 他 她 它 们 在 和 也 就 都 而 及 与 着 或 一个 没有 我们 你们 这 那 有 吧 啊 呢 吗 很 又 还 被 把 给 让 对 从 到 说 要 会 能 去 来 上 下 不".split())
_ENTITY_TAGS = {"nr", "ns", "nt", "nz", "eng", "nrt", "nrfg"}


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


@lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    if not has_cjk(text):
        return tuple(_WORD.findall(text))
    out: list[str] = []
    for piece in jieba.lcut(text):
        piece = piece.strip()
        if piece and (has_cjk(piece) or _WORD.fullmatch(piece)):
            out.append(piece)
    return tuple(out)


def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` without stopwords or punctuation (for BM25 and overlap)."""
    return [w.lower() for w in _words(text) if w.lower() not in STOPWORDS and w not in ZH_STOPWORDS]


def extract_entities(text: str, limit: int = 8) -> list[str]:
    """Proper nouns and technical names in `text`, in order of appearance, deduplicated."""
    found: list[str] = []
    if has_cjk(text):
        for pair in jieba.posseg.lcut(text):
            word, flag = pair.word.strip(), pair.flag
            if flag in _ENTITY_TAGS and len(word) > 1:
                found.append(word)
    tokens = _WORD.findall(text)
    for index, token in enumerate(tokens):
        if token.lower() in STOPWORDS or len(token) < 2:
            continue
        capitalised = token[0].isupper() and (index > 0 or token.isupper() or any(c.isupper() for c in token[1:]))
        technical = any(c in token for c in "+#.") or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
        if capitalised or technical:
            found.append(token.strip("."))
    seen: set[str] = set()
    unique = []
    for name in found:
        key = name.lower()
        if key not in seen:
            seen.add(key)
            unique.append(name)
    return unique[:limit]


def speakers_named(text: str, speakers: Iterable[str]) -> list[str]:
    """The speakers whose name (or first name) `text` mentions as a word, case-insensitively."""
    found = []
    for speaker in speakers:
        names = {speaker, speaker.split()[0]} if speaker.split() else set()
        if any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) for name in names):
            found.append(speaker)
    return found
