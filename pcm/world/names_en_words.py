"""The English word classes and word lists `pcm.world.names_en` reads names by: words that are never names
(interjections, dates, kinship words, common abbreviations), the listed first names, surnames, places and
organisations of `data/`, and how English a word is (its frequency, and its specificity against other
languages that spell names as English does)."""

from __future__ import annotations

from functools import lru_cache

from pcm.formulas import english_specificity
from pcm.world.text import word_list

#: interjections, greetings and thanks: a closed class of words that open chat turns, never names
INTERJECTIONS = frozenset(
    "hey hi hello hiya yo howdy bye goodbye cya thanks thank thx ty congrats congratulations cheers "
    "welcome wow whoa woah oh ooh ah aah aw aww ugh ouch oops yay yeah yea yes yep yup nope nah ok okay "
    "hmm hm mm mmm haha hah ha hehe lol lmao rofl omg btw fyi ttyl brb idk imo tbh sure please sorry "
    "alright anyway indeed morning evening night dear phew oof dang damn darn gosh geez jeez woo woohoo "
    "yikes bravo hooray hurray yum yummy kudos gotcha bingo uh um er wait looky".split()
)
#: abbreviations of common things, written in capitals but never names ("HR", "PPT", "KPI")
ABBREVIATIONS = frozenset(
    "HR PPT KPI OKR CEO CFO CTO COO VP PM HRBP APP VIP OK PK AI IT GDP DIY PDF USB SUV MBA PS ID IP UP CP DDL ICU ATM "
    "QR PR FAQ ASAP FYI DM PC TV BBQ".split()
)
#: prepositions, conjunctions and sentence adverbs (of time too) that open a sentence before a name
#: ("During Thanksgiving", "Besides Italy", "Sometimes Pixie"); the STOPWORDS hold the commonest
CONNECTIVES = frozenset(
    "besides during since until till unless although though because while whereas despite unlike like "
    "except without within across along among around behind beside between beyond near toward towards "
    "upon via plus maybe perhaps still yet even already instead otherwise meanwhile speaking sometimes "
    "often always never once soon later today tonight yesterday tomorrow".split()
)
#: weekdays, months (and their abbreviations) and holidays: dates, not entities (also in the plural: "Sundays")
CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "christmas xmas thanksgiving halloween easter hanukkah diwali ramadan".split()
)
#: what family call each other ("Dinner at Grandma's", "Aunt Sarah"): a kinship word is no name nor part of one
KINSHIP_WORDS = frozenset(
    "mom mum mommy mummy dad daddy grandma grandpa granny grandad nana papa mama auntie aunt uncle".split()
)
#: above this specificity a word is English's own, not a name ("European" 1.4, "Definitely" 2.9,
#: "Learning" 1.9; names: "Paris" 0.3, "Brian" 0.3, "Christian" 0.8)
ENGLISH_WORD_SPECIFICITY = 1.0
#: a first name opening a sentence counts when rarer than this in English ("Emma" 4.2; "Tom" 4.8 does not)
FIRST_NAME_ZIPF = 4.5
#: a first name with a possessive opening a sentence counts when rarer than this ("Max's" 4.7; not "Art's"
#: 5.3, "Hope's", where the 's may be "is")
POSSESSIVE_NAME_ZIPF = 5.0
#: below this Zipf frequency a word is missing from the other languages' small word lists whatever it is, so
#: its specificity says nothing: a first name this rare counts ("Kayla" 3.1)
RARE_WORD_ZIPF = 3.5
#: in text typed without capitals a first name must keep its spelling across languages more strictly ("emma"
#: 0.1, "maria" −0.4; "buddy", "chase", "drew" 0.9–1.0 are English words there)
LOWER_CASE_NAME_SPECIFICITY = 0.5
#: articles and possessives: a listed organisation's one word after them is a common noun ("a visa")
DETERMINERS = frozenset("a an the my your his her our their its some any this that".split())
#: listed brands that are English words too, in lower case ("apple", "visa", "zoom in")
ORDINARY_BRAND_WORDS = frozenset(
    "apple affirm canon delta discord visa zoom meta sprite pandora hinge vox ford bing tlc tnt sap dell citi".split()
)


def is_first_name(lowered: str, most_specific: float = ENGLISH_WORD_SPECIFICITY) -> bool:
    """A first name (`data/en_first_names.txt`) that is no common English word: "Emma", "Jake", "Kayla";
    not "Will", "Hope" (English's own words) nor "Mark", "Art", "Baby" (as common as names get)."""
    if lowered not in first_names():
        return False
    frequency = zipf(lowered)
    return frequency < RARE_WORD_ZIPF or (frequency < FIRST_NAME_ZIPF and specificity(lowered) <= most_specific)


def is_place(lowered: str) -> bool:
    """A place (`data/en_places.txt`: countries, US states, cities of 100,000 people; its builder leaves out
    those spelt as common English words, "Mobile", "Reading"): "Paris", "Edinburgh", "Tokyo"."""
    return lowered in word_list("en_places.txt")


def organisations() -> frozenset[str]:
    """The organisations of `data/en_organisations.txt`, as written ("Starbucks", "Trader Joe's")."""
    return word_list("en_organisations.txt")


@lru_cache(maxsize=1)
def lower_case_organisations() -> frozenset[str]:
    """The organisations in lower case, but those that open with "the" ("the sun" is no name in chat)."""
    return frozenset(name.lower() for name in organisations() if not name.lower().startswith("the "))


@lru_cache(maxsize=1)
def lower_case_titles() -> frozenset[str]:
    """The titles of `data/en_titles.txt` in lower case ("breaking bad", "the last of us")."""
    return frozenset(title.lower() for title in word_list("en_titles.txt"))


def is_listed_title(name: str) -> bool:
    """Whether a name is a listed title or organisation as written, its "The" included ("The Last of Us",
    "The North Face")."""
    return name.lower() in lower_case_titles() or name in organisations()


def first_names() -> frozenset[str]:
    """The first names of `data/en_first_names.txt`, lower-cased."""
    return word_list("en_first_names.txt")


def specificity(lowered: str) -> float:
    """How much more often English writes the word than the other languages do (`english_specificity`)."""
    return english_specificity(zipf(lowered), _other_zipfs(lowered))


@lru_cache(maxsize=16384)
def zipf(word: str) -> float:
    """The word's Zipf frequency in English (`wordfreq`)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


#: languages whose text spells names as English does; their small word lists (`wordfreq`) suffice
OTHER_LANGUAGES = ("de", "fr", "es", "it", "nl", "pt")


@lru_cache(maxsize=16384)
def _other_zipfs(word: str) -> tuple[float, ...]:
    from wordfreq import zipf_frequency

    return tuple(zipf_frequency(word, language, wordlist="small") for language in OTHER_LANGUAGES)
