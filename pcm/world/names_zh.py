"""Chinese names for `pcm.world.names.named_entities`: titles in book-title marks (《原神》), the
words jieba tags as names of people, places, organisations and other proper nouns, a place joined
to the name it qualifies (杭州 + 西湖 → 杭州西湖), and pet or child names given after 叫 ("named":
金毛叫旺财) or written as a doubled character (咪咪, 豆豆) that is not a common word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pcm.world.text import ZH_STOPWORDS, has_cjk, tagged_pieces

_TITLE = re.compile(r"《([^《》\n]{1,30})》")
#: jieba's tags of names: people (nr, nrfg, nrt), places (ns), organisations (nt), other proper nouns (nz)
_NAME_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})
#: "named X" / "called X": the two or three characters after, up to punctuation or a particle
_NAMED = re.compile(
    r"(?:名叫|叫做|取名叫?|起名叫?|名字叫|叫)([\u4e00-\u9fff]{2,3}?)(?=[，。！？、,.!?\s~～]|$|[了的吧啊呢呀哦])"
)
#: a doubled character is a nickname (咪咪) only as a noun and when not a common word (哈哈, 宝宝)
_NICKNAME_TAGS = frozenset({"n", "nr", "nz", "ng", "o"})
#: below this Zipf frequency (`wordfreq`) a word is no common Chinese word: 旺财 2.7, 咪咪 3.7; 外卖 4.5
COMMON_ZH_ZIPF = 4.0


def chinese_names(text: str) -> Iterator[tuple[int, str]]:
    """Each Chinese name of `text` with where it starts (names may repeat)."""
    for match in _TITLE.finditer(text):
        yield match.start(1), match.group(1).strip()
    for match in _NAMED.finditer(text):
        if not _is_common(match.group(1)):
            yield match.start(1), match.group(1)
    for start, pairs in tagged_pieces(text):
        yield from _tagged_names(start, pairs)


def _tagged_names(start: int, pairs: list) -> Iterator[tuple[int, str]]:
    """The names among one piece's tagged words; a place (ns) and the name after it make one."""
    offset, pending = start, None
    for pair in pairs:
        word, flag = pair.word, pair.flag
        is_name = flag in _NAME_TAGS and _is_chinese_word(word)
        if is_name and pending is not None and pending[2] == "ns":
            pending = (pending[0], pending[1] + word, flag)
        else:
            if pending is not None:
                yield pending[0], pending[1]
            pending = (offset, word, flag) if is_name or _is_nickname(word, flag) else None
        offset += len(word)
    if pending is not None:
        yield pending[0], pending[1]


def _is_chinese_word(word: str) -> bool:
    return len(word) > 1 and has_cjk(word) and word not in ZH_STOPWORDS


def _is_nickname(word: str, flag: str) -> bool:
    return len(word) == 2 and word[0] == word[1] and has_cjk(word) and flag in _NICKNAME_TAGS and not _is_common(word)


@lru_cache(maxsize=4096)
def _is_common(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "zh") >= COMMON_ZH_ZIPF
