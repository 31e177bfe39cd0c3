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

A question about a facet of the user's life ("What diet does the user follow?", "用户喝酒吗？") asks
for a life state (`life:<kind>`): a candidate that states one of that facet about its speaker
(`pcm.life_states`: "I've been vegan for five years", "我戒酒三年了") is raised alike.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice

from pcm.formulas import raise_similarity
from pcm.life_states import life_states
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
#: a question about a facet of the user's life ("What diet does the user follow?", "用户喝酒吗？") is answered by
#: a memory that states a life state of it (`pcm.life_states`), often in none of its words ("I've been vegan
#: for five years", "我戒酒三年了"): each kind names the facets (`pcm.life_facets`, `pcm.life_values`) it covers
_ASKED_FACETS: tuple[tuple[str, re.Pattern, re.Pattern, frozenset[str]], ...] = tuple(
    (f"life:{kind}", re.compile(english, re.IGNORECASE), re.compile(chinese), frozenset(facets.split()))
    for kind, english, chinese, facets in (
        (
            "diet",
            r"\b(?:diet\w*|eats?|food|foods|vegetarian|vegan|meat|intoleran\w*|allerg\w*)\b",
            r"吃|饮食|忌口|过敏|素食",
            "meat seafood shellfish dairy peanuts gluten carbs spicy",
        ),
        ("alcohol", r"\b(?:drinks?|drinking|alcohol\w*|sober)\b", r"喝酒|饮酒|酒", "alcohol"),
        ("coffee", r"\b(?:coffee|caffeine)\b", r"咖啡", "coffee"),
        ("smoking", r"\b(?:smokes?|smoking|cigarettes?|vap(?:e|es|ing))\b", r"抽烟|吸烟|烟", "smoking"),
        ("pets", r"\b(?:pets?|dogs?|cats?|animals?)\b", r"宠物|狗|猫", "pets cats dogs"),
        ("children", r"\b(?:children|kids?|sons?|daughters?)\b", r"孩子|儿子|女儿|小孩", "children"),
        (
            "partner",
            r"\b(?:married|partner|single|relationship|dating|spouse|wife|husband|girlfriend|boyfriend)\b",
            r"结婚|单身|对象|恋爱|老婆|老公|丈夫|妻子",
            "partner",
        ),
        ("car", r"\b(?:cars?|drives?|vehicle)\b", r"车", "car"),
        ("medication", r"\b(?:medication|medicines?|pills?|meds)\b", r"药", "medication"),
        ("travel", r"\b(?:fly|flying|flights?|abroad|travel\w*)\b", r"飞机|出国|旅行", "flying abroad"),
        (
            "home",
            r"\b(?:live|lives|home|house|rent|rents|apartment|flat)\b",
            r"住|房子|租房|买房",
            "housing home",
        ),
        (
            "work",
            r"\b(?:work|works|job|jobs|living|occupation|profession|career|employ\w*|company|retired)\b",
            r"工作|职业|上班|公司|退休|做什么的",
            "work shift occupation employer",
        ),
        (
            "schooling",
            r"\b(?:stud(?:y|ies|ying|ent)|school|academic|education|degree|university|college|major)\b",
            r"读书|上学|学生|学校|专业|大学|读研|读博",
            "schooling field",
        ),
        ("languages", r"\b(?:languages?|speaks?)\b", r"语言|外语|说什么话", "skill"),
    )
)
#: the strongest candidates whose life states are read for a question about a facet (reading one takes about
#: a millisecond the first time a text is seen)
LIFE_STATE_CANDIDATES = 30
#: a Chinese question: its mark, a final particle or a question word
_QUESTION_ZH = re.compile(r"[?？]|[吗呢]\W*$|什么|哪|几|多少|是否|有没有|是不是|怎么|谁")
_QUOTED_TITLE = re.compile(r'"[^"\n]{2,60}"|“[^”\n]{2,60}”|《[^》\n]{1,40}》')


def asked_types(query: str) -> frozenset[str]:
    """The kinds of answer `query` asks for: PLACE, TITLE, the life states of a facet (`life:<kind>`),
    several, or none (a sentence that is no question asks for none: "I moved to a new city")."""
    chinese = has_cjk(query)
    if chinese:
        place, title = _ASKS_PLACE_ZH.search(query), _ASKS_TITLE_ZH.search(query)
    elif not _QUESTION_EN.search(query):
        return frozenset()
    else:
        place, title = _ASKS_PLACE_EN.search(query), _ASKS_TITLE_EN.search(query)
    facets = (
        (kind for kind, english, zh, _ in _ASKED_FACETS if (zh if chinese else english).search(query))
        if not chinese or _QUESTION_ZH.search(query)
        else ()
    )
    return frozenset([*(kind for kind, asked in ((PLACE, place), (TITLE, title)) if asked), *facets])


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
    asks_a_facet = any(kind.startswith("life:") for kind in kinds)
    strongest = (
        {hit[0] for hit in sorted(scored, key=lambda hit: -hit[3])[:LIFE_STATE_CANDIDATES]} if asks_a_facet else None
    )
    answering = answering_memories(graph, [hit[0] for hit in scored], kinds, strongest) if strength > 0 else set()
    raised = []
    for node_id, similarity, relevance, score in scored:
        if node_id in answering and similarity > 0:
            higher = raise_similarity(similarity, 1.0, strength)
            similarity, score = higher, score * higher / similarity
        raised.append((node_id, similarity, relevance, score))
    return raised


def answering_memories(graph, node_ids, kinds: frozenset[str], read_states: set[str] | None = None) -> set[str]:
    """The memories among `node_ids` of `graph` (a `WeightedKnowledgeGraph` or a view of one as of a
    moment) that name an answer of one of `kinds`: an entity of that kind, or, for titles, a quoted
    one, or, for a facet of the user's life, a life state of it (read of the `read_states` memories
    only, when given). A speaker's name is no answer (Jordan, Austin: a place name, but it names who talks)."""
    if not kinds:
        return set()
    speakers = _speakers(graph)
    facets = frozenset().union(*(covered for kind, _, _, covered in _ASKED_FACETS if kind in kinds))
    found = set()
    for node_id in node_ids:
        readable = read_states is None or node_id in read_states
        if facets and readable and _states_a_facet(str(graph.attrs(node_id)["content"]), facets):
            found.add(node_id)
            continue
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


def _states_a_facet(text: str, facets: frozenset[str]) -> bool:
    """Whether `text` states a life state of its speaker on one of `facets` ("skill" covers every language)."""
    return any(facet.split(":")[0] in facets for facet in life_states(text))
