"""Life states that exclude each other: knowledge the offline pair model lacks.

"I've been vegetarian for eleven years" and "Smoked a pork shoulder for nine hours" share almost no
words and sit far apart in embedding space, yet one revises the other. The relation model judges
such implicit revisions at chance (`pcm.perception.relation`), so PCM also reads a small table of
*facets* of a person's life, each with states that exclude each other, written as general English
and Chinese expressions (not the words of any one scenario), the categories in which implicit
contradictions live:

- the table (`pcm.life_facets`, diet and habits in `pcm.life_facets_diet`, pets in `pcm.life_facets_pets`):
  meat, seafood, shellfish, dairy, peanuts, gluten, carbs, alcohol, coffee, smoking, spicy food (abstains /
  consumes); cats and dogs (lost / avoids / has); pets (lost / none / has); children, siblings, a car, regular
  medication (none / has); pregnancy (trying / expecting); partner (single / partnered); work (retired /
  self-employed / employed); shift (nights / days); schooling (high school / university / postgraduate /
  graduated); flying; housing (rents / owns);
- open values (`pcm.life_values`): home, employer and field of study clash when disjoint;
- languages (`pcm.life_values`): `skill:<language>`, lacks / uses;
- sports (`pcm.life_sports`): `sport:<name>`, does / stopped;
- medicines (`pcm.life_medicines`): `medicine:<class>`, the drugs of a class taken now, clashing when disjoint;
- a pet's loss told by the name a fact gave it ("团子走了" after "我养了一只兔子，叫团子"): `states_with_pets_named`.

`life_states(text)` reads the states a text asserts about its speaker (a clause about a third
person, "my sister is vegan", the listener, "your steak", or the past, "when I was a kid", asserts
nothing about the speaker now); `clashes(text, memory_text)` the facets on which two texts assert
different states. `told_of_someone_else(text)` names the person a turn tells a change of when the
speaker is not part of it ("My brother sold his motorbike"): routing keeps such a turn from
correcting what was not said of them (`pcm.routing.routers`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from pcm.life_facets import FACETS
from pcm.life_facets_pets import loses_a_pet_named, may_lose_a_pet, pet_names
from pcm.life_medicines import medicines_taken
from pcm.life_sports import sport_habits
from pcm.life_values import language_skills, open_values

_CLAUSE_END = re.compile(r"[.!?;:,，。！？；：]")
#: the people in a speaker's life, each one person or a group the speaker is not part of
_PEOPLE_EN = (
    r"mom|mum|dad|mother|father|parents|sister|brother|friends?|son|daughter|wife|husband|boyfriend|"
    r"girlfriend|gf|bf|hubby|partner|fianc[ée]e?|roommates?|flatmates?|coworkers?|colleagues?|boss|manager|"
    r"neighbou?rs?|cousins?|aunt|uncle|grandma|grandpa|kids?|in-laws"
)
_PEOPLE_ZH = (
    r"爸爸|妈妈|父母|朋友|闺蜜|同事|老公|老婆|丈夫|妻子|男朋友|女朋友|孩子|儿子|女儿|[表堂]?(?:哥哥?|姐姐?|弟弟?|妹妹?)|"
    r"室友|邻居|领导|老板|经理|舅舅|叔叔|阿姨|姑姑|爷爷|奶奶|外婆|外公"
)
#: a clause whose subject is another person: what it says is not about the speaker
_THIRD_PERSON_EN = re.compile(
    rf"\b(?:he|she|they|him|them|his|her|their|you|your|those|"
    rf"(?:my|our|a|the) (?:(?:little|older|younger|big|best|baby|twin|new|ex|old|close|step)[- ])?"
    rf"(?:{_PEOPLE_EN}|family|guests?|team|classmates?)|everyone|everybody|people|others)\b",
    re.I,
)
_THIRD_PERSON_ZH = re.compile(rf"大家|别人|其他人|他|她|你|爸|妈|同学|家人|{_PEOPLE_ZH}")
#: a text that opens on someone the speaker knows ("So my brother…", "我表哥…", "我们领导…")
_OPENS_ON_SOMEONE_EN = re.compile(
    rf"^\W*(?:(?:so|and|well|oh|also|btw|just)\W+)*(?:my|our) (?:best |close |older |younger )?({_PEOPLE_EN})\b", re.I
)
_OPENS_ON_SOMEONE_ZH = re.compile(rf"^\W*(?:我们?的?)?({_PEOPLE_ZH})")
#: the speaker as subject or object ("I", "we", "me", "us", 我 or 我们 not before a person: "我老婆" is hers)
_SPEAKER_EN = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|we|we're|we've|we'll|we'd|us|myself|ourselves)\b", re.I)
_SPEAKER_ZH = re.compile(rf"我们?+(?!的?(?:{_PEOPLE_ZH}))")

#: a person named after these is company, not the clause's subject
_COMPANION_EN = re.compile(r"\b(?:with|and)\s+$", re.I)
#: ... and so is a person named with the speaker ("my wife and I") or whose thing the speaker acts on
#: ("Made my friend's carnitas recipe": the person is the possessor of the speaker's object)
_WITH_SPEAKER_EN = re.compile(r"\s+and\s+(?:i|me)\b", re.I)
_SPEAKER_ACTS_ON_EN = re.compile(
    r"(?:^|\b(?:i|we)\s+)(?:just\s+)?(?:made|ate|had|tried|cooked|baked|grilled|ordered|finished|borrowed|used|"
    r"took|bought|fed|walked|watched|followed|loved)\s+$",
    re.I,
)
_COMPANION_ZH = re.compile(r"(?:跟|和|与|陪|同)$")

#: a clause about the speaker's past ("when I was in college", "以前") says nothing about them now,
_PAST_EN = re.compile(
    r"\b(?:used to|when i was|back when|back in|as a kid|growing up|years ago|formerly|previously)\b", re.I
)
_PAST_ZH = re.compile(r"以前|小时候|当年|曾经|那时候|(?:上学|读书|大学|高中|初中|中学|小学)的时候")
#: ... nor does a clause about what might be, is wished or planned ("if I ever make it to Napa", "要是")
_UNREAL_EN = re.compile(
    r"\b(?:if|unless|i'?d (?:love|like) to|wants? to|wish|someday|one day|hope to|dream of|might|maybe|"
    r"thinking (?:about|of)|planning (?:to|on)|considering|for when|once (?:i|we)|when (?:i|we) (?:have|get|become))\b",
    re.I,
)
_UNREAL_ZH = re.compile(r"如果|要是|假如|万一|怕|想要|打算|梦想|以后想|考虑")


@lru_cache(maxsize=1)
def _compiled() -> dict[str, tuple[tuple[str, re.Pattern, re.Pattern], ...]]:
    return {
        facet: tuple((state, re.compile(en, re.I), re.compile(zh)) for state, en, zh in states)
        for facet, states in FACETS.items()
    }


def _about_speaker(text: str, start: int, chinese: bool) -> bool:
    """Whether the clause holding `text[start]` is about the speaker now: nothing before the match in
    its clause speaks of the past or names another person, except as company ("with my sister", "跟同事"),
    and a Chinese clause with no subject does not continue one about someone else (`_continues_someone_else`)."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, start)]
    before = text[ends[-1] if ends else 0 : start]
    companion = _COMPANION_ZH if chinese else _COMPANION_EN
    if (_PAST_ZH if chinese else _PAST_EN).search(before) or (_UNREAL_ZH if chinese else _UNREAL_EN).search(before):
        return False
    if chinese and ends and _continues_someone_else(text[ends[-2] if len(ends) > 1 else 0 : ends[-1]], before):
        return False
    return not any(
        not companion.search(before, 0, person.start()) and not (not chinese and _company_en(before, person))
        for person in (_THIRD_PERSON_ZH if chinese else _THIRD_PERSON_EN).finditer(before)
    )


def _continues_someone_else(previous: str, before: str) -> bool:
    """Whether a Chinese clause with no subject of its own (`before`: no 我, no person) continues a previous
    clause that opens on someone else ("她那个是期房，交房要两年": the flat is hers)."""
    if _SPEAKER_ZH.search(before) or _THIRD_PERSON_ZH.search(before):
        return False
    opens_on_other = _OPENS_ON_SOMEONE_ZH.match(previous) or re.match(r"\W*[他她]", previous)
    return bool(opens_on_other) and not _SPEAKER_ZH.search(previous)


def _company_en(before: str, person: re.Match) -> bool:
    """Whether a person an English clause names (in `before`, the clause up to a state's expression) is with
    the speaker ("my wife and I") or owns what the speaker acts on ("Made my friend's recipe"), so the clause
    is still about the speaker."""
    after = before[person.end() :]
    if _WITH_SPEAKER_EN.match(after):
        return True
    return after.startswith(("'s ", "’s ")) and bool(_SPEAKER_ACTS_ON_EN.search(before, 0, person.start()))


def _asserted(pattern: re.Pattern, text: str, chinese: bool) -> re.Match | None:
    return next((m for m in pattern.finditer(text) if _about_speaker(text, m.start(), chinese)), None)


@lru_cache(maxsize=65536)
def life_states(text: str) -> dict[str, str | frozenset[str]]:
    """The state of each facet `text` asserts about its speaker (facet → state; an open value such as
    "home" → the set of values named)."""
    states: dict[str, str | frozenset[str]] = {}
    for facet, options in _compiled().items():
        for state, english, chinese in options:
            if _asserted(english, text, chinese=False) or _asserted(chinese, text, chinese=True):
                if state is not None:
                    states[facet] = state
                break
    states.update(language_skills(text, _about_speaker))
    states.update(sport_habits(text, _about_speaker))
    states.update(medicines_taken(text, _about_speaker))
    states.update(open_values(text, _about_speaker))
    return states


def told_of_someone_else(text: str) -> str | None:
    """The person a text tells of when its first clause is about someone the speaker knows and the
    speaker is neither subject nor object anywhere in it ("My brother sold his motorbike and bought a
    minivan", "我老婆把她的车卖了，换了辆电动车"): the change it tells is theirs. None otherwise."""
    first = _CLAUSE_END.split(text.strip(), maxsplit=1)[0]
    english = _OPENS_ON_SOMEONE_EN.match(first)
    if english and not _SPEAKER_EN.search(text):
        return english.group(1).lower()
    chinese = _OPENS_ON_SOMEONE_ZH.match(first)
    if chinese and not _SPEAKER_ZH.search(text):
        return chinese.group(1)
    return None


def mentions_person(text: str, person: str) -> bool:
    """Whether `text` names `person` (a word of `told_of_someone_else`), as a word in English."""
    return bool(re.search(rf"(?<!\w){re.escape(person)}(?!\w)", text, re.I)) if person.isascii() else person in text


def excludes(state: str | frozenset[str], other: str | frozenset[str]) -> bool:
    """Whether two states of one facet exclude each other: different states, or open values with none in common."""
    return not (state & other) if isinstance(state, frozenset) else state != other


def holding_statements(said: dict[str, str], facets: Iterable[str]) -> list[str]:
    """Of `said` (id → text, oldest first), the ids of the statements of what their speaker holds now on each of
    `facets`: the latest statement about the facet, and every one before it that said the same since the state last
    changed ("we rent in Pudong", then "I'll tell the landlord"): each states what a turn revising it revises."""
    held: dict[str, tuple[str | frozenset[str], list[str]]] = {}  # facet → its state, the statements saying it
    for key, text in said.items():
        for facet, state in life_states(text).items():
            if facet in facets:
                last = held.get(facet)
                held[facet] = (state, [*last[1], key] if last and not excludes(state, last[0]) else [key])
    return list(dict.fromkeys(key for _, keys in held.values() for key in keys))


def clashes(text: str, memory_text: str) -> list[str]:
    """The facets on which `text` and `memory_text` assert states that exclude each other."""
    return states_clash(life_states(text), memory_text)


def states_clash(states: dict[str, str | frozenset[str]], memory_text: str) -> list[str]:
    """The facets on which `states` (a text's `life_states`) and `memory_text`'s exclude each other."""
    old = life_states(memory_text)
    return [facet for facet in states.keys() & old.keys() if excludes(states[facet], old[facet])]


def states_with_pets_named(text: str, said: Iterable[str]) -> dict[str, str | frozenset[str]]:
    """`text`'s life states, with the loss of a pet it names only by a name one of `said` gave a pet ("团子走了"
    after "我养了一只兔子，叫团子")."""
    states = life_states(text)
    if "pets" not in states and may_lose_a_pet(text):
        names = frozenset().union(*(pet_names(earlier) for earlier in said))
        if loses_a_pet_named(text, names):
            return {**states, "pets": "lost"}
    return states
