"""What kind of thing a question asks for, and which memories name one: a question that asks for
places ("Which cities has Tim visited?", "去过哪些城市?") or for titles ("What books has John read?",
"看过什么电影?") is answered by memories that name a place or a title, which often share none of its
words ("…my trip to the Smoky Mountains last year", "I'm reading "Dune""). Classic question
answering calls this the answer type.

A memory names a place when an entity it mentions (`mentions` edges, `pcm.world.names`) is one: a
listed place (`data/en_places.txt`, `data/zh_places.txt`), a name ending in one ("Downtown Austin";
not "Paris Hilton") or in a place word ("Smoky Mountains", "西湖"). It names a title when it quotes one ("Dune",
《三体》) or mentions a listed title. Retrieval raises such a memory's similarity by
`answer_type_weight` (`pcm.formulas.raise_similarity`) and adds the nearest of them to the
candidates (`pcm.world.retrieval`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice

from pcm.formulas import raise_similarity
from pcm.models import NodeType
from pcm.world.names_en_words import is_place, lower_case_titles
from pcm.world.text import has_cjk, word_list

PLACE = "place"
TITLE = "title"

#: an English question: it ends asking, or opens with a question word (an agent's "which cities Tim visited")
_QUESTION_EN = re.compile(r"^\W*(?:where|which|what|who|name|list)\b|\?\W*$", re.IGNORECASE)
_ASKS_PLACE_EN = re.compile(
    r"^\s*where\b|\b(?:cit(?:y|ies)|countr(?:y|ies)|states?|places?|locations?|destinations?|areas?|towns?)\b",
    re.IGNORECASE,
)
_ASKS_TITLE_EN = re.compile(
    r"\b(?:books?|movies?|films?|shows?|songs?|series|novels?|albums?|authors?|artists?|bands?)\b", re.IGNORECASE
)
_ASKS_PLACE_ZH = re.compile(r"哪里|哪儿|去过哪|在哪|(?:哪|哪个|哪些|什么)(?:地方|城市|国家|省|地区)")
_ASKS_TITLE_ZH = re.compile(r"(?:哪|哪本|哪部|哪首|哪些|什么)(?:书|电影|剧|片|歌|小说|节目|综艺|动漫|番)")
#: the last word of a multi-word English place name ("Smoky Mountains", "Fox Hollow Park")
_PLACE_WORDS_EN = frozenset(
    "mountains mountain park lake beach city island islands river canyon valley falls bay coast national".split()
)
_PLACE_ENDINGS_ZH = tuple("市省县区镇村山湖岛江河海湾")
_QUOTED_TITLE = re.compile(r'"[^"\n]{2,60}"|“[^”\n]{2,60}”|《[^》\n]{1,40}》')


def asked_types(query: str) -> frozenset[str]:
    """The kinds of answer `query` asks for: {PLACE}, {TITLE}, both, or none (a sentence that is no
    question asks for none: "I moved to a new city")."""
    if has_cjk(query):
        place, title = _ASKS_PLACE_ZH.search(query), _ASKS_TITLE_ZH.search(query)
    elif not _QUESTION_EN.search(query):
        return frozenset()
    else:
        place, title = _ASKS_PLACE_EN.search(query), _ASKS_TITLE_EN.search(query)
    return frozenset(kind for kind, asked in ((PLACE, place), (TITLE, title)) if asked)


@lru_cache(maxsize=65536)
def entity_types(name: str) -> frozenset[str]:
    """The kinds of answer an entity's name is: a place, a title, or neither."""
    kinds = set()
    if has_cjk(name):
        if name in word_list("zh_places.txt") or (len(name) > 1 and name.endswith(_PLACE_ENDINGS_ZH)):
            kinds.add(PLACE)
    else:
        lowered = name.lower()
        words = lowered.split()
        if words and (is_place(lowered) or is_place(words[-1]) or (len(words) > 1 and words[-1] in _PLACE_WORDS_EN)):
            kinds.add(PLACE)
    if name.lower() in lower_case_titles():
        kinds.add(TITLE)
    return frozenset(kinds)


def quotes_a_title(text: str) -> bool:
    """Whether `text` quotes something a title could be ("Dune", “Dune”, 《三体》)."""
    return _QUOTED_TITLE.search(text) is not None


def answers_raised(graph, scored: list, kinds: frozenset[str], strength: float) -> list:
    """Each (id, sim, P(d|I), score) of `scored` whose memory names an answer of one of `kinds`
    (`answering_memories`) with sim raised by `strength` (`raise_similarity`, evidence 1) and its
    score with it: Score = sim·P(d|I)·w, so it scales by sim'/sim."""
    answering = answering_memories(graph, [hit[0] for hit in scored], kinds) if strength > 0 else set()
    raised = []
    for node_id, similarity, relevance, score in scored:
        if node_id in answering and similarity > 0:
            higher = raise_similarity(similarity, 1.0, strength)
            similarity, score = higher, score * higher / similarity
        raised.append((node_id, similarity, relevance, score))
    return raised


def answering_memories(graph, node_ids, kinds: frozenset[str]) -> set[str]:
    """The memories among `node_ids` of `graph` (a `WeightedKnowledgeGraph` or a view of one as of a
    moment) that name an answer of one of `kinds`: an entity of that kind, or, for titles, a quoted
    one. A speaker's name is no answer (Jordan, Austin: a place name, but it names who talks)."""
    if not kinds:
        return set()
    speakers = _speakers(graph)
    found = set()
    for node_id in node_ids:
        mentioned = (str(graph.attrs(entity)["content"]) for entity, _ in graph.out_edges(node_id, "mentions"))
        if any(kinds & entity_types(name) for name in mentioned if name.lower() not in speakers) or (
            TITLE in kinds and quotes_a_title(str(graph.attrs(node_id)["content"]))
        ):
            found.add(node_id)
    return found


def nearest_answering(graph, query_vector, kinds: frozenset[str], known, n: int) -> dict[str, float]:
    """The cosine with `query_vector` of the `n` memories nearest it among those that mention an
    entity of one of `kinds` and are not `known` candidates already."""
    if not kinds or n <= 0:
        return {}
    typed = [i for i in mentioning_memories(graph, kinds) if i not in known]
    return dict(sorted(graph.cosine(query_vector, typed).items(), key=lambda item: -item[1])[:n])


def mentioning_memories(graph, kinds: frozenset[str], limit: int = 500) -> list[str]:
    """The retrievable memories (not dormant) of `graph` (a `WeightedKnowledgeGraph` or a view of one
    as of a moment) that mention an entity of one of `kinds`, at most the `limit` newest."""
    speakers = _speakers(graph)
    mentioning = {
        source
        for entity_id, name in graph.contents(NodeType.ENTITY)
        if kinds & entity_types(name) and name.lower() not in speakers
        for source, _ in graph.in_edges(entity_id, "mentions")
    }
    newest_first = sorted(mentioning, key=graph.insertion_order, reverse=True)
    live = islice((i for i in newest_first if graph.weight(i) >= graph.dormant_floor), limit)
    return list(live)[::-1]


def _speakers(graph) -> set[str]:
    return {name.lower() for name in graph.speakers()}
