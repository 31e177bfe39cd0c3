"""Chinese names for `pcm.world.names.named_entities`.

Chinese writes no capitals, and jieba's part-of-speech tags, the first source of names, are noisy: its
dictionary tags 阿姨, 幼儿园 and 过敏 as people's names, 新鲜 as a place and 沙发 as a proper noun, and
knows few brands or apps (微信, 抖音, 美团). So a name is, by priority where two overlap:
1. a title in book-title marks (《原神》);
2. a word (or run of jieba's words) the lexicons list: China's administrative divisions and world
   places and sights (`data/zh_places.txt`), organisations, brands, platforms, products and events
   (`data/zh_names.txt`);
3. a surname with a title (张老师, 王总, 孙阿姨) or a nickname (老王, 小李, 大刘); a pet or child named
   after 叫 (金毛叫旺财; after a pet, even a common word: 兔子叫土豆) or after 我家 in a text about an
   animal (我家煤球又把猫砂刨了, 他家旺财); a Latin letter's site (B站); a rare word before the kind of
   organisation or place it names (徽商 + 银行); a title with no 《》 after watching (刷完了漫长的季节);
   a name opening a clause before its time or adverb: doubled (朵朵今天…) or, about an animal, a
   pet's (馒头最近掉毛…);
4. a word jieba tags as a name that looks like one: a person's name led by a surname, a nickname
   (阿强, 大伟, 婷婷) or a rare word (not a kinship or role word, an animal, nor a common noun: 胡辣汤);
   an organisation; a place that is no common word. (jieba's abbreviations, j, and other proper nouns,
   nz, are mostly common words: 外企, 期中考试, 沙发, 洗洁精; the lexicons hold the names among them.)
A place joins a guessed name or an event after it (巴黎 + 奥运会), not a listed place or division (深圳,
南山区; 重庆, 洪崖洞), and a name joins the kind of place it names (华西 + 医院 → 华西医院).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import jieba

from pcm.world import names_zh_words as words
from pcm.world.text import ZH_STOPWORDS, has_cjk, tagged_pieces, word_list

_TITLE = re.compile(r"《([^《》\n]{1,30})》")
#: "named X" / "called X": the two or three characters after, up to punctuation or a particle
_NAMED = re.compile(
    r"(?:名叫|叫做|取名叫?|起名叫?|名字叫|叫)([\u4e00-\u9fff]{2,3}?)(?=[，。！？、,.!?\s~～]|$|[了的吧啊呢呀哦])"
)
_PET_BEFORE_NAMED = re.compile(rf"(?:{words.PET_KINDS})$")
#: "我家煤球", "咱家大黄", "我家猫花卷", "他家旺财": two characters after someone's home (and an animal)
_AT_HOME = re.compile(rf"(?:我们|咱们|他们|她们|我|咱|他|她|你)家的?({words.PET_KINDS})?([\u4e00-\u9fff]{{2}})")
_NICKNAME = re.compile(rf"[小老大][{words.NICKNAME_SURNAMES}]")
_WITH_TITLE = re.compile(rf"[{''.join(sorted(words.SURNAMES))}](?:{words.TITLES})")
#: a Latin letter's video site (B站, A站)
_LATIN_SITE = re.compile(r"(?<![A-Za-z])[A-Za-z]站")
#: the last character of a division's name: such a name does not join the place before it (深圳 + 南山区)
_DIVISION_ENDS = tuple("省市县区镇乡村")
#: jieba's tags of people (nr, nrfg, nrt), places (ns), organisations (nt) and other proper nouns (nz)
_PERSON_TAGS = frozenset({"nr", "nrfg", "nrt"})
#: the tags under which 小, 老, 大 or 阿 and one character are a nickname (阿美 may be tagged nz)
_NICKNAME_NAME_TAGS = _PERSON_TAGS | {"nz"}
_NOUN_TAGS = frozenset({"n", "nz", "ns", "nr", "nt", "nrt", "nrfg", "j"})
_PET_NAME_TAGS = _NOUN_TAGS | {"ng", "a", "z"}
#: a doubled character is a nickname (咪咪) only as a noun and when not a common word (哈哈, 宝宝)
_NICKNAME_TAGS = frozenset({"n", "nr", "nz", "ng", "o"})
#: Zipf frequencies (`wordfreq`): at or above COMMON_ZH_ZIPF a word is a common Chinese word (外卖 4.5;
#: 旺财 2.7); the word before a kind must be below COMMON_NAME_ZIPF (徽商; 儿童 4.5), a place only jieba
#: tags below PLACE_ZIPF (新鲜 4.4, 芝士 3.4; 亚龙湾 2.2), a tagged name led by no surname below RARE_ZIPF
#: (香薰 2.6; 晓雯 1.2) or by one but with no given name's character below RARE_SURNAME_LED_ZIPF, a pet's
#: name after 我家 below PET_ZIPF (煤球 2.9, 花卷 3.7; 阳台 3.9, 空调 4.5)
COMMON_ZH_ZIPF = 4.0
COMMON_NAME_ZIPF = 3.5
PLACE_ZIPF = 3.0
RARE_ZIPF = 2.5
RARE_SURNAME_LED_ZIPF = 1.8
PET_ZIPF = 3.8
#: a pet's name after its animal (我家橘猫馒头) or before its clause's time or adverb (我家可乐今天…, 馒头最近…)
#: may be a common word up to PET_SUBJECT_ZIPF (可乐 4.0, 馒头 4.0; 空调 4.5); a doubled word opening
#: a clause is a child's or a pet's name below DOUBLED_NAME_ZIPF (朵朵 2.5, 豆豆 3.4; 默默 3.9, 刚刚 5.0)
PET_SUBJECT_ZIPF = 4.2
DOUBLED_NAME_ZIPF = 3.8
#: the longest name the lexicons list, in characters
MAX_LISTED_CHARS = 12


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    priority: int
    place: bool = False

    def overlaps(self, other: _Span) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class _Word:
    """One of jieba's words: where it starts and ends, its tag."""

    start: int
    end: int
    flag: str


def chinese_names(text: str) -> Iterator[tuple[int, str]]:
    """Each Chinese name of `text` with where it starts."""
    candidates = [_Span(m.start(1), m.end(1), 0) for m in _TITLE.finditer(text)]
    candidates += [_Span(m.start(), m.end(), 2) for m in _LATIN_SITE.finditer(text)]
    candidates += _named(text)
    tagged: list[_Word] = []
    clause_starts: set[int] = set()
    for start, pairs in tagged_pieces(text):
        clause_starts.add(start)
        candidates += _listed(start, pairs)
        candidates += _tagged(start, pairs)
        for pair in pairs:
            tagged.append(_Word(start, start + len(pair.word), pair.flag))
            start += len(pair.word)
    candidates += _patterned(text, tagged) + _pets_at_home(text, tagged) + _clause_subjects(text, tagged, clause_starts)
    candidates += _bare_titles(text, tagged)
    kept: list[_Span] = []
    for span in sorted(candidates, key=lambda s: (s.priority, s.start - s.end, s.start)):
        if not any(span.overlaps(other) for other in kept):
            kept.append(span)
    last_end = 0
    for span in _joined(text, sorted(kept, key=lambda s: s.start)):
        if span.start >= last_end:  # a name joined to its kind may have taken the next one (商丘 + 古城)
            yield span.start, text[span.start : span.end].strip()
            last_end = span.end


def _named(text: str) -> list[_Span]:
    """Names given after 叫 (after a pet, even a common word)."""
    found = []
    for match in _NAMED.finditer(text):
        if match.group(1)[0] in "我你他她它咱您":  # 叫我起床: a call, not a name
            continue
        if not _is_common(match.group(1)) or _PET_BEFORE_NAMED.search(text, 0, match.start()):
            found.append(_Span(match.start(1), match.end(1), 2))
    return found


def _pets_at_home(text: str, tagged: list[_Word]) -> list[_Span]:
    """Pets' names after 我家 (他家, 咱家; and an animal) in a text about an animal: jieba's words, a noun or an
    adjective (可乐), no kinship word and less common than household words (空调, 小区) unless its animal
    comes first or its clause goes on (我家可乐今天…)."""
    found = []
    for match in _AT_HOME.finditer(text):
        name = match.group(2)
        inside = [w for w in tagged if match.start(2) <= w.start and w.end <= match.end(2)]
        if sum(w.end - w.start for w in inside) != len(name) or name in words.KINSHIP or name in ZH_STOPWORDS:
            continue  # a word of jieba's crosses the name's edge
        if any(w.flag not in _PET_NAME_TAGS for w in inside):
            continue
        if not (match.group(1) or words.ANIMAL_CUES.search(text)):
            continue
        goes_on = match.group(1) or words.SUBJECT_FOLLOWERS.match(text, match.end(2))
        if words.zipf(name) < (PET_SUBJECT_ZIPF if goes_on else PET_ZIPF):
            found.append(_Span(match.start(2), match.end(2), 2))
    return found


def _bare_titles(text: str, tagged: list[_Word]) -> list[_Span]:
    """Titles written without 《》 after watching or listening (刷完了漫长的季节, 在追狂飙, 看完周处除三害，…演得):
    the words up to where a title ends, at jieba's word edges. After 看 the text must speak of a work
    (`WORK_WORDS`, a part: 三体第一部); one word alone counts after a series verb or before a part, if rare."""
    starts, ends = {w.start for w in tagged}, {w.end for w in tagged}
    found = []
    for match in words.WATCHING.finditer(text):
        end = words.TITLE_ENDS.search(text, match.end())
        begin, stop = match.end(), end.start() if end else len(text)
        title = text[begin:stop]
        if not 2 <= len(title) <= 10 or title[0] in words.NOT_TITLE_START or words.NOT_TITLE_END.search(title):
            continue
        if not {match.start(), begin} <= starts:
            continue
        inside = [w for w in tagged if begin <= w.start and w.end <= stop]
        if stop not in ends or any(w.flag in ("r", "v") and w.end == stop for w in inside):
            continue
        if any(text[w.start : w.end] in words.KINSHIP for w in inside):
            continue
        of_a_work = bool(words.WORK_PART.search(text)) or (bool(match.group("series")) and len(inside) == 1)
        of_a_work = of_a_work or (len(inside) > 1 and bool(match.group("series") or words.WORK_WORDS.search(text)))
        if of_a_work and (len(inside) > 1 or (not _is_common(title) and title not in ZH_STOPWORDS)):
            found.append(_Span(begin, stop, 2))
    return found


def _clause_subjects(text: str, tagged: list[_Word], clause_starts: set[int]) -> list[_Span]:
    """Names that open a clause before its time or adverb (朵朵今天…, 馒头最近…): a doubled word that is no
    common one, or in a text about an animal a noun or adjective no more common than PET_SUBJECT_ZIPF; and
    小 or 阿 with a given name's character that jieba cut apart, before an adverb, 说, 和 or 跟 (小美说…)."""
    found = []
    about_an_animal = bool(words.ANIMAL_CUES.search(text))
    for word in tagged:
        name = text[word.start : word.end]
        if word.start not in clause_starts or len(name) != 2 or not words.SUBJECT_FOLLOWERS.match(text, word.end):
            continue
        if name in words.KINSHIP or name in ZH_STOPWORDS or _never_a_name(name):
            continue
        if _is_doubled(name):
            named = words.zipf(name) < DOUBLED_NAME_ZIPF
        else:
            named = about_an_animal and word.flag in _PET_NAME_TAGS and not words.ANIMAL_CUES.search(name)
            named = named and words.zipf(name) < PET_SUBJECT_ZIPF
        if named:
            found.append(_Span(word.start, word.end, 3))
    for first, second in zip(tagged, tagged[1:]):  # 小美说…, 小美和阿杰…: jieba cuts 小 + 美
        nickname = text[first.start : second.end]
        if (
            first.start in clause_starts
            and len(nickname) == 2
            and nickname[0] in "小阿"
            and nickname[1] in words.GIVEN_NAMES
        ):
            if words.SUBJECT_FOLLOWERS.match(text, second.end) or text[second.end : second.end + 1] in "说和跟":
                found.append(_Span(first.start, second.end, 3))
    return found


def _patterned(text: str, tagged: list[_Word]) -> list[_Span]:
    """Surnames with titles, nicknames and a rare word before a kind (徽商 + 银行), none of them inside
    a longer word that is no name (紧张 + 老师, 大张旗鼓) nor after a measure word's cue (这位老师)."""

    def inside_a_word(start: int, end: int) -> bool:
        return any(
            w.flag not in _PERSON_TAGS
            and w.end - w.start > 1
            and w.start < end
            and start < w.end
            and not (start <= w.start and w.end <= end)
            for w in tagged
        )

    found = []
    for pattern in (_WITH_TITLE, _NICKNAME):
        for match in pattern.finditer(text):
            after_measure = match.group()[0] in words.MEASURE_WORDS and text[max(0, match.start() - 1) : match.start()]
            if after_measure and after_measure in words.BEFORE_MEASURE_WORD:
                continue
            if match.group() not in words.KINSHIP and not inside_a_word(match.start(), match.end()):
                found.append(_Span(match.start(), match.end(), 2))
    for before, kind in zip(tagged, tagged[1:]):
        word = text[before.start : before.end]
        if text[kind.start : kind.end] in words.KINDS and before.flag in _NOUN_TAGS and 1 < len(word) < 4:
            if has_cjk(word) and word not in ZH_STOPWORDS and words.zipf(word) < COMMON_NAME_ZIPF:
                found.append(_Span(before.start, kind.end, 2))
    return found


def _listed(start: int, pairs: list) -> list[_Span]:
    """The names the lexicons list in one piece, longest first at each place: where one cuts a word of
    jieba's, that word must be a guess (not in jieba's dictionary: 微信群 cut as 微 + 信群) or the name
    long (小红书 cut as 小红 + 书上); 京东 in 北京东路 is no name."""
    places, names = _lexicons()
    text = "".join(pair.word for pair in pairs)
    bounds, offset = [], 0
    for pair in pairs:
        bounds.append((offset, offset + len(pair.word), pair.word))
        offset += len(pair.word)
    found, index = [], 0
    while index < len(text):
        for length in range(min(MAX_LISTED_CHARS, len(text) - index), 1, -1):
            name = text[index : index + length]
            listed = (name in places or name in names) and name not in words.KINDS
            if not listed:
                continue
            if length > 2 or not _cuts_a_word(bounds, index, index + length, name in places):
                found.append(_Span(start + index, start + index + length, 1, place=name in places))
                index += length
                break
            county = _county_after(text, bounds, index, length) if name in places else 0
            if county:  # 信阳 + 光山, cut by jieba as 信 + 阳光 + 山
                found.append(_Span(start + index, start + index + length, 1, place=True))
                found.append(_Span(start + index + length, start + index + length + county, 1, place=True))
                index += length + county
                break
        else:
            index += 1
    return found


def _county_after(text: str, bounds: list[tuple[int, int, str]], index: int, length: int) -> int:
    """The length of a place right after the place at `index` where the two together cut no word of jieba's
    though each alone does (信阳光山: 信 + 阳光 + 山): listed, or a county's name without its level (光山县,
    left out of the list alone as too common a word, reads as a place after its prefecture); 0 if none."""
    places, _ = _lexicons()
    end = index + length
    for county in range(min(MAX_LISTED_CHARS, len(text) - end), 1, -1):
        name = text[end : end + county]
        listed = name in places or any(name + level in places for level in "县区市")
        if listed and not _cuts_a_word(bounds, index, end + county, True):
            return county
    return 0


def _cuts_a_word(bounds: list[tuple[int, int, str]], begin: int, end: int, place: bool) -> bool:
    """Whether [begin, end) cuts one of jieba's dictionary words, but for a locative cut off its end (太 +
    湖边: 太湖 is by the lake) or a brand's thing (耐克 + 鞋; a place's is a product: 普洱茶)."""

    def cut(s: int, e: int, word: str) -> bool:
        if not jieba.dt.FREQ.get(word, 0):
            return False
        ending = e - end == 1 and (word[-1] in words.LOCATIVES or (not place and word[-1] in words.NOUN_ENDINGS))
        return s < begin < e or (s < end < e and not ending)

    return any(cut(s, e, word) for s, e, word in bounds)


def _tagged(start: int, pairs: list) -> Iterator[_Span]:
    """The words jieba tags as names that look like names (see the module's docstring)."""
    offset, previous = start, ""
    for index, pair in enumerate(pairs):
        word, flag, at = pair.word, pair.flag, offset
        offset += len(word)
        counted = flag in _PERSON_TAGS and word[0] in words.MEASURE_WORDS and previous[-1:] in words.BEFORE_MEASURE_WORD
        previous = pair.word
        if counted:
            continue  # 办了张卡: 张 counts the card, it is no surname
        if flag in _PERSON_TAGS and word[0] in words.LEADING_PARTICLES and len(word) > 2:
            if word[1] in words.SURNAMES or _is_doubled(word[1:]):
                word, at = word[1:], at + 1
        if len(word) < 2 or not has_cjk(word) or word in ZH_STOPWORDS or _never_a_name(word):
            continue
        if _is_doubled(word) and index + 1 < len(pairs) and pairs[index + 1].word in ("的", "地"):
            continue  # 粉粉的: a doubled adjective
        if _looks_like_name(word, flag):
            yield _Span(at, at + len(word), 3, place=flag == "ns")


def _never_a_name(word: str) -> bool:
    """Kinship and role words, and words ending in one (高中同学), animals and breeds, kinds of place."""
    if word in words.KINSHIP or word in words.ANIMALS or word in words.KINDS:
        return True
    return word.endswith(words.ROLE_ENDINGS) and word not in words.ROLE_ENDINGS and not _WITH_TITLE.fullmatch(word)


def _looks_like_name(word: str, flag: str) -> bool:
    """Whether a word jieba tags as a name looks like one (see the module's docstring); its other proper
    nouns (nz) are names only when doubled (佳佳): the rest were 沙发, 英语, 洗洁精."""
    zipf = words.zipf(word)
    if flag in _NICKNAME_TAGS and _is_doubled(word):
        return zipf < COMMON_ZH_ZIPF
    if flag in _NICKNAME_NAME_TAGS and word[0] in "小老大阿" and len(word) == 2:
        return word[1] in words.SURNAMES or word[1] in words.GIVEN_NAMES  # 阿美, 小王
    if flag in _PERSON_TAGS:
        if flag == "nrt":
            return True
        if word[-1] in words.NOUN_ENDINGS:
            return False
        if word[0] in words.SURNAMES:  # 李明, 张子豪, 薛兆丰 (rare); not 黄焖 (2.1), 汤底
            return any(c in words.GIVEN_NAMES for c in word[1:]) or zipf < RARE_SURNAME_LED_ZIPF
        return zipf < RARE_ZIPF
    if flag == "ns":  # four characters: an idiom (人山人海); a kind of place at the end: 黄河路, 苏堤, 金字塔
        return len(word) < 4 and zipf < (COMMON_NAME_ZIPF if word[-1] in words.PLACE_ENDINGS else PLACE_ZIPF)
    return flag == "nt"


def _joined(text: str, spans: list[_Span]) -> Iterator[_Span]:
    """Spans with a place joined to the guessed name or event after it, and a name to its kind."""
    pending: _Span | None = None
    for span in spans:
        if pending is not None and pending.place and span.start == pending.end and _joins_a_place(text, span):
            pending = _Span(pending.start, span.end, pending.priority, place=True)
            continue
        if pending is not None:
            yield _with_kind(text, pending)
        pending = span
    if pending is not None:
        yield _with_kind(text, pending)


def _joins_a_place(text: str, span: _Span) -> bool:
    """Whether a name after a place is part of its name: an event (奥运会) or a guessed name (东野 +
    圭吾), not a division or a listed name of its own (深圳 + 南山区, 重庆 + 洪崖洞, 南阳 + 中石化)."""
    name = text[span.start : span.end]
    if name.endswith(words.EVENT_ENDS):
        return True
    return span.priority == 3 and not name.endswith(_DIVISION_ENDS)


def _with_kind(text: str, span: _Span) -> _Span:
    """The span with the kind of place after it (华西 + 医院), or a sequel's number after a name that is no
    place (冰雪奇缘 + 2; not 上海 + 3天)."""
    kind = words.KIND_AFTER_NAME.match(text, span.end)
    if kind is None and not span.place:
        kind = words.SEQUEL_NUMBER.match(text, span.end)
    return _Span(span.start, kind.end(), span.priority, span.place) if kind else span


def _is_doubled(word: str) -> bool:
    return len(word) == 2 and word[0] == word[1]


def _lexicons() -> tuple[frozenset[str], frozenset[str]]:
    """(places, other names) of the lexicons in `data/`."""
    return word_list("zh_places.txt"), word_list("zh_names.txt")


def _is_common(word: str) -> bool:
    return words.zipf(word) >= COMMON_ZH_ZIPF
