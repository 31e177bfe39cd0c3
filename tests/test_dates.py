"""Time as a key (`pcm.world.dates`): what a query asks about, what a memory is about, and search by it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from test_world_model import fact

from pcm.world.dates import BEFORE_DAYS, asked_time, days_outside, memory_times, named_days, relative_days
from pcm.world.graph_model import GraphModel


def utc(*parts) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What painting did Melanie show on October 13, 2023?", utc(2023, 10, 13), utc(2023, 10, 14)),
        ("What did Gina find on 1 February, 2023?", utc(2023, 2, 1), utc(2023, 2, 2)),
        ("What happened on the 3rd of March, 2024?", utc(2024, 3, 3), utc(2024, 3, 4)),
        ("Anything on 2024-05-07?", utc(2024, 5, 7), utc(2024, 5, 8)),
        ("我2023年10月13日去了哪里？", utc(2023, 10, 13), utc(2023, 10, 14)),
        ("What did Mel paint in July 2023?", utc(2023, 7, 1), utc(2023, 8, 1)),
        ("Back in Dec 2022, where did I live?", utc(2022, 12, 1), utc(2023, 1, 1)),
        ("我2023年7月做了什么？", utc(2023, 7, 1), utc(2023, 8, 1)),
        ("Which country did James visit in 2021?", utc(2021, 1, 1), utc(2022, 1, 1)),
        ("我2021年去了哪里？", utc(2021, 1, 1), utc(2022, 1, 1)),
        (
            "What did Maria do last weekend before April 10, 2023?",
            utc(2023, 4, 11) - timedelta(days=BEFORE_DAYS + 1),
            utc(2023, 4, 11),
        ),
    ],
)
def test_a_query_naming_a_day_or_month_asks_about_that_time(query, start, end):
    assert asked_time(query).intervals == ((start, end),)


def test_a_month_without_a_year_is_that_month_of_every_year_and_a_bare_number_is_no_time():
    window = asked_time("When did Melanie go camping in June?")
    assert window.month == 6 and window.over_years(range(2022, 2024)) == (
        (utc(2022, 6, 1), utc(2022, 7, 1)),
        (utc(2023, 6, 1), utc(2023, 7, 1)),
    )
    assert asked_time("我6月去了哪里？").month == 6
    for query in ("It may rain tomorrow.", "I have 3 cats.", "我养了3个月的猫", "Room 2021 is free.", "Born 2021-05"):
        assert asked_time(query) is None, query
    assert asked_time("Was it on February 30, 2023?") is None  # no such day


def test_a_memory_is_about_when_it_was_said_and_the_days_it_names():
    attrs = {
        "content": "The wedding is on 12 August 2024, and the rehearsal on 2024-08-10.",
        "created_at": "2024-06-02T09:00:00+00:00",
        "source": {"session_time": "2024-06-01T18:30:00+00:00"},
    }
    assert memory_times(attrs) == [utc(2024, 6, 1, 18, 30), utc(2024, 8, 12), utc(2024, 8, 10)]
    assert memory_times({"content": "no time", "created_at": "2024-06-02T09:00:00"}) == [utc(2024, 6, 2, 9)]
    assert named_days("nothing dated here") == []
    assert days_outside(utc(2024, 6, 3), [(utc(2024, 6, 1), utc(2024, 6, 2))]) == pytest.approx(1.0)
    assert days_outside(utc(2024, 6, 1, 12), [(utc(2024, 6, 1), utc(2024, 6, 2))]) == 0.0
    assert days_outside(utc(2024, 6, 1), []) is None


@pytest.mark.parametrize(
    ("text", "days_before"),
    [
        ("I went hiking yesterday, and last weekend we camped.", [1, 4]),  # said on a Wednesday
        ("Two weeks ago I moved; 3 days ago and the other day I unpacked.", [14, 3, 3]),
        ("A couple of months ago we met. Last year I visited Italy.", [60, 365]),
        ("我昨天去了公园，上周末去爬山，三年前搬的家，两个月前换了工作。", [1, 4, 1095, 60]),
        ("上个星期很忙，去年也是，5天前才放假。", [7, 365, 5]),
        ("We meet next week, and I'll fly tomorrow. At last! A lasting ago-less text.", []),
    ],
)
def test_a_memory_is_about_the_past_days_it_names_relative_to_when_it_was_said(text, days_before):
    said = utc(2023, 5, 10, 12)  # a Wednesday
    assert relative_days(text, said) == [said - timedelta(days=d) for d in days_before]
    attrs = {"content": text, "source": {"session_time": said.isoformat()}}
    assert memory_times(attrs) == [said, *(said - timedelta(days=d) for d in days_before)]


def test_a_question_about_a_year_finds_what_was_said_of_it_a_year_later(pcm):
    """ "Last year I visited Italy", said in 2022, answers a question about 2021."""
    pcm.process(
        "I haven't visited many countries, but Turkey and Mexico were great.",
        user_id="t",
        timestamp="2022-03-01T10:00:00+00:00",
    )
    pcm.process(
        "I love to travel. Last year I visited Italy, a beautiful country.",
        user_id="t",
        timestamp="2022-03-08T10:00:00+00:00",
    )
    query = "Which country did I visit in 2021?"
    assert "Italy" in pcm.search(query, user_id="t", top_k=1)[0].content
    untimed = pcm.search(query, user_id="t", top_k=2, use_time=False)
    timed = pcm.search(query, user_id="t", top_k=2)
    italy = [next(m for m in found if "Italy" in m.content) for found in (timed, untimed)]
    assert italy[0].similarity > italy[1].similarity


def test_the_time_index_follows_inserts_and_undos():
    model = GraphModel(dormant_floor=0.05)

    def row(node_id, order, when, content="x"):
        attrs = {"type": "fact", "weight": 0.8, "content": content, "created_at": when, "source": {}}
        return node_id, order, attrs, []

    model.insert([row("a", 0, "2023-05-01T10:00:00+00:00"), row("b", 1, "2023-07-02T10:00:00+00:00", "on 4 July 2023")])
    assert [i for _, i in model.timed_between(utc(2023, 7, 1), utc(2023, 8, 1))] == ["b", "b"]
    assert list(model.years()) == [2023]
    model.undo(("node", "b"), {"b": (1, [])})
    assert model.timed_between(utc(2023, 7, 1), utc(2023, 8, 1)) == [] and len(model.times) == 1


def test_search_finds_what_was_said_on_the_day_a_query_names(pcm):
    said = [
        ("2023-10-13T19:00:00+00:00", "We finally finished the mural in the community centre."),
        ("2023-10-20T19:00:00+00:00", "My sister visited and we baked bread together."),
        ("2023-11-02T19:00:00+00:00", "I started reading a novel about lighthouses."),
    ]
    for when, text in said:
        pcm.process(text, user_id="t", timestamp=when)
    query = "What did I do on 13 October, 2023?"
    found = pcm.search(query, user_id="t", top_k=1)
    assert "mural" in found[0].content
    untimed = pcm.search(query, user_id="t", top_k=3, use_time=False)
    timed = pcm.search(query, user_id="t", top_k=3)
    mural = next(m for m in timed if "mural" in m.content)
    assert mural.similarity > next(m for m in untimed if "mural" in m.content).similarity
    assert pcm.search("What did I do in November 2023?", user_id="t", top_k=1)[0].content.startswith("I started")


def test_timed_search_gives_the_newest_inside_first_then_the_nearest_outside(pcm):
    """A month asked of every year can hold most of a large memory: the newest n inside it are
    chosen without sorting them all, then those just outside by distance."""
    memory = pcm.memory("timed", create=True)
    said = {
        "june-2022": utc(2022, 6, 10),
        "june-2023-early": utc(2023, 6, 2),
        "june-2023-late": utc(2023, 6, 20),
        "july-2-2023": utc(2023, 7, 2),
        "july-20-2023": utc(2023, 7, 20),
    }
    ids = {}
    for name, moment in said.items():
        node = fact(f"note {name}", moment=moment)
        memory.add_node(node, reason="t", agent="t")
        ids[node.id] = name
    memory.save()
    junes = [(utc(year, 6, 1), utc(year, 7, 1)) for year in (2022, 2023)]
    assert [ids[i] for i in memory.timed_search(junes, 21, 10)] == [
        "june-2023-late",
        "june-2023-early",
        "june-2022",
        "july-2-2023",  # a day after June: the nearest outside
        "july-20-2023",
    ]
    assert "july-20-2023" not in [ids[i] for i in memory.timed_search(junes, 7, 10)]  # beyond the reach
    assert [ids[i] for i in memory.timed_search(junes, 21, 2)] == ["june-2023-late", "june-2023-early"]
