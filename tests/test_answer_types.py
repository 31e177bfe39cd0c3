"""The answer type: a question asking for places or titles finds the memories that name one."""

import pytest

from pcm.models import MemoryEdge, MemorySource, NodeType
from pcm.services import Services
from pcm.world.answer_types import (
    PLACE,
    TITLE,
    answering_memories,
    answers_raised,
    asked_types,
    entity_types,
    quotes_a_title,
)
from pcm.world.retrieval import retrieve
from tests.test_world_model import fact


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Which cities has Tim visited?", {PLACE}),
        ("Where has Melanie camped?", {PLACE}),
        ("What European countries has Maria been to?", {PLACE}),
        ("What books has John read?", {TITLE}),
        ("What musical artists/bands has Melanie seen?", {TITLE}),
        ("What movies were filmed in which city?", {PLACE, TITLE}),
        ("What did Caroline research?", set()),
        ("When did Melanie go on a hike?", set()),
        ("which cities Tim has visited", {PLACE}),
        ("I moved to a new city last month", set()),
        ("她去过哪些城市？", {PLACE}),
        ("用户住在哪里？", {PLACE, "life:home"}),
        ("他最近看了什么电影？", {TITLE}),
        ("她喜欢吃什么？", {"life:diet"}),
        # a question about a facet of the user's life (`pcm.life_states`)
        ("What diet does the user follow?", {"life:diet"}),
        ("Does the user have any food intolerances?", {"life:diet"}),
        ("What does the user do for work?", {"life:work"}),
        ("What is the user's current academic status?", {"life:schooling"}),
        ("What pet does the user have?", {"life:pets"}),
        ("Where does the user live?", {PLACE, "life:home"}),
        ("用户喝酒吗？", {"life:alcohol"}),
        ("我戒酒三年了", set()),  # a statement asks for nothing
    ],
)
def test_the_kind_of_answer_a_question_asks_for(question, kinds):
    assert asked_types(question) == kinds


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("London", {PLACE}),
        ("Smoky Mountains", {PLACE}),
        ("New York City", {PLACE}),
        ("Downtown Austin", {PLACE}),
        ("Paris Hilton", set()),  # a person whose first name is a place
        ("杭州", {PLACE}),
        ("西湖", {PLACE}),
        ("Breaking Bad", {TITLE}),
        ("Pepper", set()),
        ("Caroline", set()),
        ("朵朵", set()),
    ],
)
def test_the_kind_of_answer_an_entity_is(name, kinds):
    assert entity_types(name) == kinds


def test_a_quoted_title_in_english_or_chinese_quotes():
    assert quotes_a_title('I\'m reading "Dune" by Frank Herbert')
    assert quotes_a_title("刚看完《三体》")
    assert not quotes_a_title("I'm reading a book about dunes")
    assert not quotes_a_title('He said "a" once')  # too short for a title


def _memory(services, texts_and_entities):
    graph = services.store.open("tim")
    nodes = {}
    for text, entities in texts_and_entities:
        node = fact(text, source=MemorySource(speaker="Tim"))
        graph.add_node(node, reason="t", agent="t")
        nodes[text] = node
        for name in entities:
            entity = graph.find_entity(name)
            if entity is None:
                entity = fact(name, node_type=NodeType.ENTITY)
                entity.id = graph.entity_id(name)
                graph.add_node(entity, reason="t", agent="t")
            graph.add_edge(MemoryEdge(source=node.id, target=entity.id, relation="mentions", weight=0.6))
    graph.save()
    return graph, nodes


def test_a_memory_naming_a_place_or_a_quoted_title_answers_and_its_score_rises_with_its_similarity(ctx):
    graph, nodes = _memory(
        Services(ctx),
        [
            ("Tim: The trip to the Smoky Mountains was incredible", ["Smoky Mountains"]),
            ('Tim: I\'m reading "Dune" by Frank Herbert', ["Dune", "Frank Herbert"]),
            ("Tim: I had a chat with Pepper about the trip", ["Pepper"]),
        ],
    )
    trip, book, chat = (nodes[t].id for t in nodes)
    assert answering_memories(graph, [trip, book, chat], frozenset({PLACE})) == {trip}
    assert answering_memories(graph, [trip, book, chat], frozenset({TITLE})) == {book}
    assert answering_memories(graph, [trip, book, chat], frozenset()) == set()
    scored = [(trip, 0.5, 0.8, 0.2), (chat, 0.6, 1.0, 0.3)]
    raised = answers_raised(graph, scored, frozenset({PLACE}), 0.4)
    # sim' = 0.5 + 0.4·(1 − 0.5) = 0.7; Score = sim·P(d|I)·w scales by sim'/sim
    assert raised[0] == pytest.approx((trip, 0.7, 0.8, 0.2 * 0.7 / 0.5))
    assert raised[1] == (chat, 0.6, 1.0, 0.3)
    assert answers_raised(graph, scored, frozenset({PLACE}), 0.0) == scored


def test_a_memory_stating_a_life_state_of_the_asked_facet_answers(ctx):
    graph, nodes = _memory(
        Services(ctx),
        [
            ("For context, I've been vegan for almost five years now", []),
            ("I switched from almond milk to oat milk and my latte is creamier", []),
            ("My sister is vegetarian", []),  # a state of someone else's
            ("我戒酒三年了，以前喝得太凶", []),
        ],
    )
    vegan, latte, sister, sober = (nodes[t].id for t in nodes)
    ids = [vegan, latte, sister, sober]
    assert answering_memories(graph, ids, asked_types("What diet does the user follow?")) == {vegan}
    assert answering_memories(graph, ids, asked_types("用户喝酒吗？")) == {sober}
    assert answering_memories(graph, ids, asked_types("What does the user do for work?")) == set()
    # only the memories whose states are read (search: the strongest candidates) can answer a facet
    assert answering_memories(graph, ids, asked_types("What diet does the user follow?"), {latte, sister}) == set()


def test_a_speaker_named_like_a_place_is_no_answer(ctx):
    graph, nodes = _memory(
        Services(ctx),
        [("Jordan: I had pasta with Pepper tonight", ["Jordan", "Pepper"]), ("Tim: Jordan is in Boston", ["Boston"])],
    )
    graph.add_node(fact("Jordan: Hi!", source=MemorySource(speaker="Jordan")), reason="t", agent="t")
    graph.save()
    pasta, boston = (nodes[t].id for t in nodes)
    assert entity_types("Jordan") == {PLACE}  # a country
    assert answering_memories(graph, [pasta, boston], frozenset({PLACE})) == {boston}


def test_a_question_for_places_finds_the_memory_that_names_one_in_other_words(ctx):
    texts = [
        ("Tim: I visited my grandma last week and we baked bread", []),
        ("Tim: Tim visited the new gym downtown with his brother", []),
        ("Tim: Has anyone visited the museum exhibit yet?", []),
        ("Tim: Last spring I walked around London for days, it was magical", ["London"]),
    ]
    services = Services(ctx)
    graph, nodes = _memory(services, texts)
    london = nodes[texts[-1][0]].id
    query = "Which cities has Tim visited?"
    vector = services.embedder.encode_one(query)

    def found(weight):
        hits = retrieve(graph, query, vector, ctx.replace(answer_type_weight=weight), expand=False)
        return [m.id for m in hits].index(london), {m.id: m.similarity for m in hits}

    (rank_without, without), (rank_with, raised) = found(0.0), found(0.4)
    assert rank_without == 3  # every other memory shares "visited" with the question
    assert rank_with == 2 and raised[london] == pytest.approx(without[london] + 0.4 * (1 - without[london]))
    assert all(raised[i] == pytest.approx(without[i]) for i in without if i != london)


def test_the_memories_naming_a_place_are_the_newest_live_ones_and_an_earlier_view_sees_its_own(ctx):
    from datetime import datetime, timezone

    from pcm.world.answer_types import mentioning_memories

    graph = Services(ctx).store.open("places")
    may, june = (datetime(2024, month, 1, 12, tzinfo=timezone.utc) for month in (5, 6))
    said = []
    for text, place, moment, weight in [
        ("Tim: Back from Lisbon", "Lisbon", may, 0.8),
        ("Tim: Back from Kyoto", "Kyoto", june, 0.8),
        ("Tim: Back from Oslo", "Oslo", june, 0.01),  # dormant
        ("Tim: Back from the gym", None, june, 0.8),
    ]:
        node = fact(text, weight=weight, moment=moment, source=MemorySource(speaker="Tim"))
        graph.add_node(node, reason="t", agent="t")
        said.append(node.id)
        if place:
            entity = fact(place, node_type=NodeType.ENTITY, moment=moment)
            entity.id = graph.entity_id(place)
            graph.add_node(entity, reason="t", agent="t")
            graph.add_edge(
                MemoryEdge(source=node.id, target=entity.id, relation="mentions", weight=0.6, timestamp=moment)
            )
    graph.save()
    lisbon, kyoto = said[:2]
    assert mentioning_memories(graph, frozenset({PLACE})) == [lisbon, kyoto]  # oldest first, no dormant one
    assert mentioning_memories(graph, frozenset({PLACE}), limit=1) == [kyoto]  # the newest
    assert mentioning_memories(graph, frozenset({TITLE})) == []
    earlier = graph.as_of(datetime(2024, 5, 15, tzinfo=timezone.utc))
    assert [name for _, name in earlier.contents(NodeType.ENTITY)] == ["Lisbon"]
    assert mentioning_memories(earlier, frozenset({PLACE})) == [lisbon]
