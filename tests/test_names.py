"""Entity names for the knowledge graph's ENTITY nodes (`pcm.world.names.named_entities`)."""

from __future__ import annotations

import pytest

from pcm.world.names import entity_key, known_names, named_entities


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yeah, we walked Pixie to Fox Hollow today.", ["Pixie", "Fox Hollow"]),
        ("Thanks! Sometimes I just nap. Got it, ttyl! Kinda tired. Bye!", []),
        (
            'I finally read "Harry Potter and the Philosopher\'s Stone" last week.',
            ["Harry Potter and the Philosopher's Stone"],
        ),
        ("We watched Lord of the Rings with J.K. Rowling fans in NYC.", ["Lord of the Rings", "J.K. Rowling", "NYC"]),
        ("I was SO tired, JUST DOING IT anyway.", []),
        ("During Thanksgiving we flew to Italy with some European friends on Monday.", ["Thanksgiving", "Italy"]),
    ],
)
def test_english_names_are_names_whole_and_never_sentence_openers(text, expected):
    assert named_entities(text) == expected


def test_a_known_name_counts_where_it_opens_a_sentence_and_a_possessive_is_the_same_entity():
    text = "Pixie's new bed came today. Max loves it too."
    assert named_entities(text) == []  # opening words: only names already met count there
    assert named_entities(text, known_names(["Pixie", "Max Power"])) == ["Pixie", "Max"]
    assert entity_key("Pixie's") == entity_key("pixie") == "pixie"


def test_chinese_names_titles_and_pet_names():
    names = named_entities("周末我跟李明去杭州西湖骑车了，晚上玩《原神》。我家金毛叫旺财。")
    assert {"李明", "杭州西湖", "原神", "旺财"} <= set(names)
    assert "周末" not in names and "金毛" not in names


def test_each_name_once_in_order_of_appearance_and_at_most_the_limit():
    text = "I met Alice and Bob. Then Alice and Bob met Carol, Dave and Erin in Paris."
    assert named_entities(text) == ["Alice", "Bob", "Carol", "Dave", "Erin", "Paris"]
    assert named_entities(text, limit=2) == ["Alice", "Bob"]
