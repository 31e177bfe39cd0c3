"""English (Latin-script) names for `pcm.world.names.named_entities`.

English marks names with capitals, but a sentence's first word is capitalised whatever it is. So:
- a title-cased quotation is a title, whole ("Harry Potter and the Philosopher's Stone");
- a run of capitalised words, with the numbers after them and "of"/"the" between them, is a name
  ("Fox Hollow", "The Witcher 3", "Lord of the Rings", "J.K. Rowling");
- a word that opens a sentence counts only when it is known (a speaker, an entity already in the
  memory), written with capitals no sentence explains ("NYC", "LeBron"), a first name that is no
  common English word ("Emma", "Jake": `data/en_first_names.txt`) or a place ("Paris", "Edinburgh":
  `data/en_places.txt`): "Yeah", "Sometimes", "Got" open sentences, and so does "Max", which counts
  there only once met or when it owns something ("Max's vet appointment");
- a listed organisation (`data/en_organisations.txt`) counts where it opens a sentence ("Netflix");
- in text typed without capitals ("booked flights to tokyo"), known names, places, listed organisations
  and first names that keep their spelling across languages count in lower case;
- interjections and greetings ("Thanks", "Ttyl"), weekdays, months and holidays, kinship words
  ("Grandma"), words shouted in capitals ("JUST DOING IT") and demonyms ("European", "Chinese") are never
  names; an opening interjection, article or connective ("Hey Sam", "The Wolves", "During Thanksgiving") is
  not part of one.
Demonyms and connectives are English words far more frequent in English than in other languages'
text, as names are not (`pcm.formulas.english_specificity`, `wordfreq`). The word classes and lists are in
`pcm.world.names_en_words`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pcm.world import names_en_words as vocab
from pcm.world.text import STOPWORDS, word_list

#: a Latin word: letters and digits, with inner apostrophes, hyphens, dots, colons, "+" or "#"
_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9+#'’.:-]*[A-Za-z0-9+#])?")
#: what between two words ends a sentence or starts a quotation (the next word's capital then says nothing)
_BOUNDARY = re.compile(r"[.!?…:;\n\"“”‘'’()\[\]—–*]|\s-+\s|[\u2600-\u27bf\U0001f000-\U0001faff]")
#: a quotation, up to 80 characters: in double quotes, or in single ones after a space ("it's" inside)
_QUOTED = re.compile(
    r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|(?:^|(?<=[\s(]))['‘]((?:[^'‘’\n]|['’](?=[a-z])){1,80})['’](?=[\s.,!?;:)]|$)"
)
_POSSESSIVE = re.compile(r"['’]s$")
_CONTRACTION = re.compile(r"(?:n['’]t|['’](?:re|ll|ve|d|m)|^let['’]s)$", re.IGNORECASE)
#: watching, reading, playing or listening, right before a title typed in lower case ("just finished breaking bad")
_WATCHING = re.compile(
    r"\b(?:(?:re)?watch(?:ing|ed)?|binge[ds]?|binging|bingeing|finish(?:ed|ing)?|start(?:ed|ing)?|read(?:ing)?|"
    r"play(?:ing|ed)?|listening to|obsessed with)\s+$"
)
_LAUGHTER = re.compile(r"^(?:a?h+a+)+h*$|^(?:he)+h?$|^(?:lo)+l$", re.IGNORECASE)
#: an initial ("J", "J.K") or an abbreviated title ("Dr", "St"): its full stop ends no sentence
_INITIAL = re.compile(r"^(?:[A-Z](?:\.[A-Z])*|Mr|Mrs|Ms|Dr|St|Mt|Jr|Sr|Prof)$")
#: lower-case words joined inside a name when capitalised words stand either side ("Lord of the Rings")
_NAME_JOINERS = frozenset({"of", "the"})
#: lower-case words a quoted title may hold ("The Name of the Wind", "... and the Philosopher's Stone")
_TITLE_JOINERS = frozenset("a an and at by for from in into of on or the to vs with".split())
#: endings of demonyms ("European", "Mexican", "Chinese", "Spanish") and of words derived in English
#: (gerunds, adverbs, past participles: "Adding NYC", "Definitely Star Wars")
DEMONYM_ENDINGS = ("ean", "ian", "can", "ese", "ish")
DERIVED_ENDINGS = ("ing", "ly", "ed")
#: a run of more capitalised words (or characters) than this is title-cased text, not a name
MAX_NAME_WORDS = 6
MAX_NAME_CHARS = 80
#: a shouted word of five letters or more is a common English word (Zipf ≥ this), not an acronym
SHOUTED_WORD_ZIPF = 4.0
#: a surname joins the first name before it in lower case when rarer than this ("swift" 3.9; not "long",
#: "white", "park")
SURNAME_ZIPF = 4.5

KnownName = Callable[[str], bool]


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    end: int
    opens_sentence: bool


def english_names(text: str, known: KnownName, cased: bool) -> Iterator[tuple[int, str]]:
    """Each English name of `text` with where it starts (names may repeat). `cased`: whether the
    text's capitals follow English sentence case (not in Chinese text, where a capital is meant)."""
    masked = text
    for match in _QUOTED.finditer(text):
        title = _quoted_title(next(group for group in match.groups() if group is not None))
        if title:
            yield match.start(), title
            # a title is one name, its words not read again; a full stop inside it still ends the sentence
            masked = masked[: match.start()] + re.sub(r"[^.!?]", " ", match.group()) + masked[match.end() :]
    words = _words(masked)
    index = 0
    while index < len(words):
        if not _is_capitalised(words[index].text):
            index += 1
            continue
        end = _run_end(masked, words, index)
        name = _name(masked, words[index:end], known, cased)
        if name:
            yield name
        index = end
    if cased and _written_in_lower_case(text):
        yield from _lower_case_names(masked, words, known)


def _written_in_lower_case(text: str) -> bool:
    """Whether a text is chat typed without capitals: its first letter is lower-case ("booked flights to tokyo")."""
    first = next((c for c in text if c.isalpha()), "")
    return first.islower()


def _lower_case_names(text: str, words: list[_Word], known: KnownName) -> Iterator[tuple[int, str]]:
    """In text typed without capitals, the names written in lower case: places (up to three words: "new
    york"), and known names or first names (`_is_first_name`, stricter on specificity) with the first
    names and surnames after them ("logan roy", "taylor swift"); a possessive is no part of one."""
    bare = [_POSSESSIVE.sub("", w.text) for w in words]
    index = 0
    while index < len(words):
        end = (
            _lower_case_place(text, words, bare, index)
            or _lower_case_organisation(text, words, index)
            or _lower_case_title(text, words, index)
            or _lower_case_person(text, words, bare, index, known)
        )
        if end:
            last = words[end - 1]
            yield words[index].start, text[words[index].start : last.start + len(bare[end - 1])]
            index = end
        else:
            index += 1


def _lower_case_place(text: str, words: list[_Word], bare: list[str], index: int) -> int:
    """Where a place written in lower case from word `index` ends (exclusive); 0 if none starts there."""
    for length in (3, 2, 1):
        run = bare[index : index + length]
        if len(run) < length or not all(word.isalpha() and word.islower() for word in run):
            continue
        if not _single_spaced(text, words, index, length):
            continue
        name = " ".join(run)
        if (length > 1 and name in word_list("en_places.txt")) or (
            length == 1 and len(name) > 2 and name not in STOPWORDS and vocab.is_place(name)
        ):
            return index + length
    return 0


def _lower_case_organisation(text: str, words: list[_Word], index: int) -> int:
    """Where a listed organisation written in lower case from word `index` ends (exclusive), 0 if none:
    one word only when it is no common English word (`_is_first_name`'s test, not vocab.ORDINARY_BRAND_WORDS) nor
    after an article or a possessive ("at starbucks", "fly ryanair"; not "need visa", "an apple")."""
    listed = vocab.lower_case_organisations()
    for length in (4, 3, 2, 1):
        run = words[index : index + length]
        if len(run) < length or any(c.isupper() for w in run for c in w.text):
            continue
        if not _single_spaced(text, words, index, length):
            continue
        written = text[run[0].start : run[-1].end]
        name = _POSSESSIVE.sub("", written)
        if name not in listed and written not in listed:
            continue
        end = index + length
        if end < len(words) and words[end].text.isdigit() and _single_spaced(text, words, end - 1, 2):
            return end + 1  # a model's number: "iphone 15"
        if length > 1:
            return end
        before = words[index - 1].text.lower() if index else ""
        if len(name) < 3 or name in vocab.ORDINARY_BRAND_WORDS or before in vocab.DETERMINERS:
            continue
        if vocab.zipf(name) < vocab.RARE_WORD_ZIPF or vocab.specificity(name) <= vocab.LOWER_CASE_NAME_SPECIFICITY:
            return end
    return 0


def _lower_case_title(text: str, words: list[_Word], index: int) -> int:
    """Where a listed title written in lower case from word `index` ends (exclusive), 0 if none: only right
    after watching, reading, playing or listening ("finished breaking bad", "binge stranger things")."""
    if not _WATCHING.search(text, max(0, words[index].start - 30), words[index].start):
        return 0
    for length in range(MAX_NAME_WORDS, 0, -1):
        run = words[index : index + length]
        if len(run) < length or any(c.isupper() for w in run for c in w.text):
            continue
        written = text[run[0].start : run[-1].end]
        if _single_spaced(text, words, index, length) and _POSSESSIVE.sub("", written) in vocab.lower_case_titles():
            return index + length
    return 0


def _lower_case_person(text: str, words: list[_Word], bare: list[str], index: int, known: KnownName) -> int:
    """Where a person's name written in lower case from word `index` ends (exclusive); 0 if none starts
    there: a known name or a first name, with the first names and surnames after it ("logan roy"; "taylor
    swift", whose first name alone is too common a word)."""
    first = bare[index]
    if not (first.isalpha() and first.islower() and len(first) > 2 and first not in STOPWORDS):
        return 0
    if _is_date_or_kin(first):
        return 0
    end = index + 1
    while end < len(words) and words[end - 1].text == bare[end - 1] and _single_spaced(text, words, end - 1, 2):
        following = bare[end]
        if not (following.isalpha() and following.islower() and following not in STOPWORDS):
            break
        if following in vocab.first_names():  # "logan roy"; not "buddy drew", where "drew" is an English word
            if not vocab.is_first_name(following, vocab.LOWER_CASE_NAME_SPECIFICITY):
                break
        elif following not in word_list("en_last_names.txt") or vocab.zipf(following) >= SURNAME_ZIPF:
            break
        end += 1
    if (
        end > index + 1
        and first in vocab.first_names()
        and vocab.specificity(first) <= vocab.LOWER_CASE_NAME_SPECIFICITY
    ):
        return end  # a first name as common as "taylor" with a surname after it; not "love bowling"
    return end if known(first) or vocab.is_first_name(first, vocab.LOWER_CASE_NAME_SPECIFICITY) else 0


def _single_spaced(text: str, words: list[_Word], index: int, length: int) -> bool:
    return all(text[words[i].end : words[i + 1].start] == " " for i in range(index, index + length - 1))


def _quoted_title(quoted: str) -> str | None:
    """A quotation as a title when it is title-cased (every word capitalised but short joining
    words) and at most eight words; None for quoted speech ("I'm gonna make him an offer")."""
    title = quoted.strip().rstrip(".,!?;:").strip()
    words = title.split()
    if not words or len(words) > 8:
        return None
    for index, word in enumerate(words):
        bare = word.strip("\"'“”‘’()")
        if not bare or _CONTRACTION.search(bare):
            return None
        if not (bare[0].isupper() or bare[0].isdigit() or (index and bare.lower() in _TITLE_JOINERS)):
            return None
    if len(words) == 1 and not (title[0].isupper() and _is_name_word(title, False, lambda name: False)):
        return None
    return title


def _words(text: str) -> list[_Word]:
    words: list[_Word] = []
    for match in _TOKEN.finditer(text):
        gap = text[words[-1].end if words else 0 : match.start()]
        after_initial = bool(words) and gap == ". " and bool(_INITIAL.match(words[-1].text))
        opens = not words or (bool(_BOUNDARY.search(gap)) and not after_initial)
        words.append(_Word(match.group(), match.start(), match.end(), opens))
    return words


def _is_capitalised(word: str) -> bool:
    """Written with a capital as a name is: "Pixie", "LeBron", "iPhone"; not "I", "I'm", "Can't"."""
    if word == "I" or word[:2] in ("I'", "I’") or _CONTRACTION.search(word):
        return False
    return word[0].isupper() or (word[0].islower() and any(c.isupper() for c in word[1:]))


def _run_end(text: str, words: list[_Word], start: int) -> int:
    """Where the run of capitalised words from `start` ends (exclusive): words apart by one space
    (or an initial's full stop), a number after a word, "of" and "the" between capitalised words."""
    end = start + 1
    while end < len(words):
        previous, gap = words[end - 1], text[words[end - 1].end : words[end].start]
        if gap != " " and not (gap == ". " and _INITIAL.match(previous.text)):
            break
        word = words[end].text
        if _is_capitalised(word) or (word.isdigit() and not previous.text.isdigit()):
            end += 1
            continue
        joined = end
        while joined < len(words) and joined - end < 2 and words[joined].text in _NAME_JOINERS:
            joined += 1
        if joined == end or joined >= len(words) or not _is_capitalised(words[joined].text):
            break
        if text[previous.end : words[joined].start] != " " + " ".join(w.text for w in words[end:joined]) + " ":
            break
        end = joined + 1
    return end


def _name(text: str, run: list[_Word], known: KnownName, cased: bool) -> tuple[int, str] | None:
    """The name a run of capitalised words makes, if any: opening interjections, dates, articles and
    connectives dropped from its start, joining words and dates from its end, a possessive from its
    last word; a single word must pass `_is_name_word`."""
    if len(run) > MAX_NAME_WORDS:
        return None
    words = list(run)
    while words and (_is_interjection(words[0].text) or _is_date_or_kin(words[0].text)):
        words.pop(0)
    whole = _POSSESSIVE.sub("", text[words[0].start : words[-1].end]) if words else ""
    if len(words) > 1 and words[0].text == "The" and vocab.is_listed_title(whole):
        return words[0].start, whole  # "The Last of Us"
    while len(words) > 1 and words[0].opens_sentence and cased and _opens_before_name(words, known):
        words.pop(0)
    while words and words[0].text in _NAME_JOINERS:
        words.pop(0)
    while words and (words[-1].text in _NAME_JOINERS or _is_date_or_kin(words[-1].text)):
        words.pop()
    if not words or _is_shouted(words) or not any(c.isalpha() for w in words for c in w.text):
        return None
    if len(words) == 1 and words[0].text.upper() in vocab.ABBREVIATIONS:
        return None
    name = _POSSESSIVE.sub("", text[words[0].start : words[-1].end])
    if len(name) > MAX_NAME_CHARS:
        return None
    lettered = [w for w in words if not w.text.isdigit()]
    if len(lettered) == 1:  # one word, numbers aside ("Note 3" opening a sentence is no name; "Witcher 3" is)
        word = lettered[0]
        bare = _POSSESSIVE.sub("", word.text)
        # "Max's vet appointment": a first name that owns something, though as common a word as "Max"; not
        # "Art's awesome", where 's is "is" after a word far commoner still
        owned = bare != word.text and bare.lower() in vocab.first_names()
        owned = owned and vocab.zipf(bare.lower()) < vocab.POSSESSIVE_NAME_ZIPF
        if not owned and not _is_name_word(bare, word.opens_sentence and cased, known):
            return None
    return words[0].start, name


def _opens_before_name(words: list[_Word], known: KnownName) -> bool:
    """Whether a run's opening word only opens the sentence: an article or other stopword, a
    connective, an English-derived word ("Adding", "Definitely"), or any word before a known name."""
    first = words[0].text
    lowered = first.lower()
    if lowered in STOPWORDS or lowered in vocab.CONNECTIVES:
        return True
    if (
        lowered.endswith(DERIVED_ENDINGS)
        and first.isalpha()
        and vocab.specificity(lowered) > vocab.ENGLISH_WORD_SPECIFICITY
    ):
        return True
    if len(words) > 2 and words[1].text == "the" and vocab.specificity(lowered) > vocab.ENGLISH_WORD_SPECIFICITY:
        return True  # "Took the Toyota Corolla": an English word before "the" opens the sentence
    if len(words) > 2 and lowered not in vocab.first_names() and words[1].text.lower() in vocab.first_names():
        if vocab.specificity(lowered) > vocab.ENGLISH_WORD_SPECIFICITY:
            return True  # "Heard Ed Sheeran": an English word before a person's full name opens the sentence
    rest = _POSSESSIVE.sub("", " ".join(w.text for w in words[1:]))
    return not known(first) and known(rest)


def _is_date_or_kin(word: str) -> bool:
    """A weekday, month or holiday, in the singular or plural ("Sundays"), or a kinship word ("Grandma's")."""
    lowered = _POSSESSIVE.sub("", word.lower())
    singular = lowered[:-1] if lowered.endswith("s") else lowered
    return lowered in vocab.CALENDAR_WORDS or singular in vocab.CALENDAR_WORDS or lowered in vocab.KINSHIP_WORDS


def _is_interjection(word: str) -> bool:
    lowered = word.lower()
    return bool(
        lowered in vocab.INTERJECTIONS
        or re.sub(r"(.)\1+", r"\1\1", lowered) in vocab.INTERJECTIONS  # "Awww", "Yesss"
        or re.sub(r"(.)\1+", r"\1", lowered) in vocab.INTERJECTIONS  # "Heyy", "Sooo"
        or _LAUGHTER.match(lowered)
    )


def _is_shouted(words: list[_Word]) -> bool:
    """Words in capitals for emphasis ("JUST DOING IT", "SO", "INTENSE"), not an acronym ("NYC")."""
    if not all(w.text.isalpha() and w.text.isupper() for w in words):
        return False
    common = [w.text.lower() in STOPWORDS or vocab.zipf(w.text.lower()) >= SHOUTED_WORD_ZIPF for w in words]
    if len(words) > 1:
        return all(common)
    return words[0].text.lower() in STOPWORDS or (len(words[0].text) >= 5 and common[0])


def _is_name_word(word: str, opens_sentence: bool, known: KnownName) -> bool:
    """Whether one capitalised word is a name: never a stopword, interjection, date, contraction or
    demonym; where it opens a sentence, only a known name or one with capitals inside or throughout."""
    lowered = word.lower()
    if len(word) < 2 or lowered in STOPWORDS or _is_date_or_kin(word) or _is_interjection(word):
        return False
    if _CONTRACTION.search(word):
        return False
    if known(word):
        return True
    if lowered.endswith(DEMONYM_ENDINGS) and vocab.specificity(lowered) > vocab.ENGLISH_WORD_SPECIFICITY:
        return False
    if not opens_sentence or word.isupper() or any(c.isupper() for c in word[1:]):
        return True
    return vocab.is_first_name(lowered) or vocab.is_place(lowered) or word in vocab.organisations()
