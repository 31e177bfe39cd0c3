"""Language-aware word splitting and entity extraction (English and Chinese).

Chinese has no spaces, so words come from `jieba` (and, for BM25, also their characters:
`lexical_terms`, which holds English words by their Snowball stem); entities come from jieba's
part-of-speech tags (names, places, organisations, other proper nouns, Latin words)
and, for Latin script, from capitalised words and technical tokens.

jieba's POS tagger costs milliseconds per character on runs of characters missing from
its dictionary (20,000 rare characters took over 100 s), so it reads the text in short
pieces and stops after `POS_TIME_BUDGET` seconds: pathological text cannot stall a turn.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import jieba
import jieba.posseg

jieba.setLogLevel(logging.WARNING)
logger = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#._'-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
STOPWORDS = frozenset(
    "a an the and or but if then so of to in on at for with by from as is are was were be been being "
    "i me my mine we our you your he him his she her it its they them their this that these those "
    "do does did doing have has had having not no yes can could will would should may might must "
    "just also very really too about into over after before than what which who whom whose when "
    "where why how all any some such own same other more most much many up down out off again "
    "there here am im i'm it's don't didn't doesn't isn't wasn't i've i'll i'd "
    # the conversation's roles: they label the turns of every memory's context, and "the user" of
    # a query names whose memory it is, not what it is about
    "user assistant".split()
)
ZH_STOPWORDS = frozenset(
    "的 了 是 我 你 他 她 它 们 在 和 也 就 都 而 及 与 着 或 一个 没有 我们 你们 这 那 有 吧 啊 呢 吗 很 又 还 被 "
    "把 给 让 对 从 到 说 要 会 能 去 来 上 下 不 "
    # as in the English list: question words, quantifiers, demonstratives, degree words, connectives
    "什么 怎么 怎样 怎么样 如何 为什么 哪 哪个 哪些 哪里 哪儿 谁 多少 几 几个 可以 可能 应该 一些 有些 一下 "
    "这个 那个 这些 那些 这里 那里 这么 那么 非常 特别 真 太 更 最 如果 然后 所以 但是 可是 因为 或者 还是 跟 比 "
    "只 刚 没 其他 别的 任何 所有 关于".split()
)
_ENTITY_TAGS = {"nr", "ns", "nt", "nz", "eng", "nrt", "nrfg"}
#: pieces POS-tagged one at a time: runs between punctuation, at most 40 characters
_PIECE = re.compile(r"[^\s。！？；，、：,.!?;:]{1,40}")
POS_TIME_BUDGET = 0.2


@lru_cache(maxsize=16)
def word_list(name: str) -> frozenset[str]:
    """The entries of the word list `pcm/world/data/<name>`, one per line, comments aside."""
    lines = (Path(__file__).parent / "data" / name).read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


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


@lru_cache(maxsize=1)
def tokenizer_fingerprint() -> str:
    """Changes whenever `content_words` or `lexical_terms` could split a text differently (stored words
    are then recomputed): a hash of the word pattern, the stopword lists and the jieba version."""
    import hashlib

    parts = [
        _WORD.pattern,
        " ".join(sorted(STOPWORDS)),
        " ".join(sorted(ZH_STOPWORDS)),
        jieba.__version__,
        LEXICAL_TERMS_SCHEME,
    ]
    return hashlib.sha1("\n".join(parts).encode("utf-8")).hexdigest()[:12]


def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` without stopwords or punctuation (for BM25 and overlap)."""
    return [w.lower() for w in _words(text) if w.lower() not in STOPWORDS and w not in ZH_STOPWORDS]


#: names how `lexical_terms` extends the content words (part of `tokenizer_fingerprint`)
LEXICAL_TERMS_SCHEME = "content words, English ones by their Snowball stem, + characters of Chinese words"


@lru_cache(maxsize=1)
def _english_stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def lexical_forms(words: list[str]) -> list[str]:
    """The forms content words are indexed under: an English word by its Snowball stem, so a query
    meets the other forms of its words ("research" finds "Researching", "camped" "camping"); a
    Chinese word as it is."""
    stems = iter(_english_stemmer().stemWords([w for w in words if not has_cjk(w)]))
    return [w if has_cjk(w) else next(stems) for w in words]


def lexical_terms(text: str) -> list[str]:
    """What the BM25 indexes match: the content words (`lexical_forms`), then the characters of each
    Chinese word of two or more (stopwords aside). jieba may cut one phrase differently in a memory
    and in a query ("我家养了一只橘猫" gives 家养, "用户养了什么宠物" gives 养); characters still meet,
    as in character-based Chinese retrieval, while whole words keep the higher scores they share."""
    words = content_words(text)
    return lexical_forms(words) + [
        c for w in words if len(w) > 1 and has_cjk(w) for c in w if has_cjk(c) and c not in ZH_STOPWORDS
    ]


def extract_entities(text: str, limit: int = 8) -> list[str]:
    """Proper nouns and technical names in `text`, in order of appearance, deduplicated."""
    found = _tagged_names(text) if has_cjk(text) else []
    tokens = _WORD.findall(text)
    for index, token in enumerate(tokens):
        if token.lower() in STOPWORDS or len(token) < 2:
            continue
        capitalised = token[0].isupper() and (index > 0 or token.isupper() or any(c.isupper() for c in token[1:]))
        technical = any(c in token for c in "+#.") or (
            any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        )
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


def _tagged_names(text: str) -> list[str]:
    """Words jieba tags as names, read piece by piece within POS_TIME_BUDGET seconds."""
    return [
        pair.word.strip()
        for _, pairs in tagged_pieces(text)
        for pair in pairs
        if pair.flag in _ENTITY_TAGS and len(pair.word.strip()) > 1
    ]


def tagged_pieces(text: str) -> Iterator[tuple[int, list[jieba.posseg.pair]]]:
    """jieba's part-of-speech tags of the Chinese pieces of `text` (runs between punctuation, at
    most 40 characters), each with where it starts, until POS_TIME_BUDGET seconds have passed."""
    deadline = time.perf_counter() + POS_TIME_BUDGET
    for piece in _PIECE.finditer(text):
        if not has_cjk(piece.group()):
            continue
        if time.perf_counter() > deadline:
            logger.debug("entity tagging stopped after %.1f s", POS_TIME_BUDGET)
            break
        yield piece.start(), jieba.posseg.lcut(piece.group())


def _mentions(text: str, speaker: str) -> list[re.Match]:
    """Where `text` mentions `speaker` by their name or first name, as a word, case-insensitively."""
    names = {speaker, speaker.split()[0]} if speaker.split() else set()
    return [m for name in names for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE)]


def speakers_named(text: str, speakers: Iterable[str]) -> list[str]:
    """The speakers whose name (or first name) `text` mentions as a word, case-insensitively."""
    return [speaker for speaker in speakers if _mentions(text, speaker)]


#: words after which a name is not who a question asks about: prepositions and conjunctions
#: ("suggest to John", "hear from Joanna", "Tim and John")
_NOT_DOER_AFTER = frozenset("to with for from about at of by on toward towards than between like and or &".split())


#: "the user interface", "the user account", 用户界面 … name a thing, not the user
_NOT_THE_PERSON = (
    r"(?!\s+(?:interface|account|name|experience|manual|guide|base|data|id|profile|settings|story|stories))"
)
#: how an agent's question names the user whose memory it searches, and the first person the user's
#: own turns say it in: "Does the user own a home?" → "Do I own a home?", 用户的老婆 → 我的老婆
_USER_IN_QUESTIONS = (
    (re.compile(r"\bthe\s+user['’]s\b", re.IGNORECASE), "my"),
    (re.compile(r"\b(?:do|does)\s+the\s+user\b" + _NOT_THE_PERSON, re.IGNORECASE), "do I"),
    (re.compile(r"\bis\s+the\s+user\b" + _NOT_THE_PERSON, re.IGNORECASE), "am I"),
    (re.compile(r"\bhas\s+the\s+user\b" + _NOT_THE_PERSON, re.IGNORECASE), "have I"),
    (re.compile(r"\bthe\s+user\b" + _NOT_THE_PERSON, re.IGNORECASE), "I"),
    (re.compile("用户(?!界面|名|体验|协议|手册|数据|账号|账户)"), "我"),
)


def in_first_person(question: str) -> str:
    """`question` with "the user" (用户) said as the user says it of themselves, for the sentence
    encoder: a question in the third person is far from the first-person turns that answer it
    (MiniLM: "What does the user do for work?" and "I teach chemistry at Lincoln High" 0.07;
    "What do I do for work?" 0.20)."""
    for pattern, first_person in _USER_IN_QUESTIONS:
        question = pattern.sub(lambda m: _same_case(m.group(), first_person), question)
    return question


def _same_case(said: str, replacement: str) -> str:
    """`replacement` capitalised when `said` was ("Does the user" → "Do I")."""
    return replacement[:1].upper() + replacement[1:] if said[:1].isupper() else replacement


def speaker_asked_about(question: str, speakers: Iterable[str]) -> str | None:
    """The one speaker `question` asks about: the only speaker it names or, when it names several, the
    only one it names as the doer ("What did Tim suggest to John?": Tim), that is not possessive
    ("Caroline's decision"), after a preposition or conjunction, or in a list ("James, Sam and John").
    Two names neither rules out ("What did John tell James?") leave it open: None."""
    named = speakers_named(question, speakers)
    if len(named) < 2:
        return named[0] if named else None
    doers = set()
    for speaker in named:
        for mention in _mentions(question, speaker):
            before = re.findall(r"[\w&]+", question[: mention.start()].lower())
            joined = re.match(r"\s*(?:['’]|,|(?:and|or|&)(?!\w))", question[mention.end() :], re.IGNORECASE)
            if not joined and not (before and before[-1] in _NOT_DOER_AFTER):
                doers.add(speaker)
    return doers.pop() if len(doers) == 1 else None
