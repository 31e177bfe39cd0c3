"""Tests for the LoCoMo loader, on the shared copy of the data in both layouts."""

import json
from datetime import datetime

import pytest

from pcm.datasets.locomo import (
    DEFAULT_LOCOMO_PATH,
    load_locomo,
    normalize_dialog_id,
    normalize_evidence,
    parse_session_datetime,
    session_of,
)

EXPECTED_SAMPLE_IDS = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-47", "conv-49"]

SHARED = DEFAULT_LOCOMO_PATH.resolve()


@pytest.fixture(scope="module")
def folder_conversations():
    return {conversation.sample_id: conversation for conversation in load_locomo(DEFAULT_LOCOMO_PATH)}


@pytest.fixture(scope="module")
def combined_conversations():
    return {conversation.sample_id: conversation for conversation in load_locomo(DEFAULT_LOCOMO_PATH / "locomo7.json")}


def test_folder_with_both_layouts_loads_each_sample_once(folder_conversations):
    assert list(folder_conversations) == EXPECTED_SAMPLE_IDS


def test_conv26_counts_in_per_file_layout(folder_conversations):
    conversation = folder_conversations["conv-26"]
    assert (conversation.speaker_a, conversation.speaker_b) == ("Caroline", "Melanie")
    assert len(conversation.sessions) == 19
    assert len(conversation.turns) == 419
    assert len(conversation.qa) == 199
    assert conversation.turns[0].dia_id == "D1:1"
    assert conversation.turns[0].session_index == 1


def test_combined_file_matches_per_file_layout(folder_conversations, combined_conversations):
    assert list(combined_conversations) == EXPECTED_SAMPLE_IDS
    from_combined = combined_conversations["conv-26"]
    assert len(from_combined.turns) == 419
    assert len(from_combined.qa) == 199
    assert from_combined == folder_conversations["conv-26"]


def test_single_per_conversation_file_uses_stem_as_sample_id():
    (conversation,) = load_locomo(DEFAULT_LOCOMO_PATH / "conv-26.json")
    assert conversation.sample_id == "conv-26"
    assert len(conversation.turns) == 419


def test_per_file_conversation_wins_over_combined_duplicate(tmp_path):
    (tmp_path / "conv-26.json").symlink_to(SHARED / "conv-26.json")
    stub = {
        "speaker_a": "A",
        "speaker_b": "B",
        "session_1_date_time": "1:00 pm on 1 May, 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
    }
    combined = [
        {"sample_id": "conv-26", "conversation": stub, "qa": []},
        {"sample_id": "conv-99", "conversation": stub, "qa": []},
    ]
    (tmp_path / "combined.json").write_text(json.dumps(combined))

    conversations = {conversation.sample_id: conversation for conversation in load_locomo(tmp_path)}

    assert list(conversations) == ["conv-26", "conv-99"]
    assert len(conversations["conv-26"].turns) == 419
    assert len(conversations["conv-99"].turns) == 1


def test_folder_with_only_combined_file(tmp_path):
    (tmp_path / "locomo7.json").symlink_to(SHARED / "locomo7.json")
    assert [conversation.sample_id for conversation in load_locomo(tmp_path)] == EXPECTED_SAMPLE_IDS


@pytest.mark.parametrize("make_path", [lambda tmp: tmp, lambda tmp: tmp / "missing.json"])
def test_missing_data_error_explains_how_to_get_it(tmp_path, make_path):
    with pytest.raises(FileNotFoundError) as raised:
        load_locomo(make_path(tmp_path))
    message = str(raised.value)
    assert "locomo10.json" in message
    assert "snap-research/locomo" in message
    assert "data/locomo10.json" in message
    assert "--data" in message


def test_parse_session_datetime():
    assert parse_session_datetime("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_session_datetime("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9)
    assert parse_session_datetime("10:04 am on 19 December, 2023") == datetime(2023, 12, 19, 10, 4)
    assert parse_session_datetime("sometime last year") is None
    assert parse_session_datetime("") is None


def test_sessions_carry_raw_and_parsed_date_time(folder_conversations):
    first_session = folder_conversations["conv-26"].sessions[0]
    assert first_session.date_time == "1:56 pm on 8 May, 2023"
    assert first_session.timestamp == datetime(2023, 5, 8, 13, 56)


def test_image_captions_are_kept(folder_conversations):
    turn = next(turn for turn in folder_conversations["conv-26"].turns if turn.dia_id == "D1:5")
    caption = "a photo of a dog walking past a wall with a painting of a woman"
    assert turn.blip_caption == caption
    assert turn.full_text == f"{turn.text} [image: {caption}]"
    plain_turn = folder_conversations["conv-26"].turns[0]
    assert plain_turn.blip_caption is None
    assert plain_turn.full_text == plain_turn.text


def test_qa_answers_are_strings_and_adversarial_answers_used(folder_conversations):
    qa_items = folder_conversations["conv-26"].qa
    assert all(isinstance(item.answer, str) for item in qa_items)
    sunrise = next(item for item in qa_items if item.question == "When did Melanie paint a sunrise?")
    assert sunrise.answer == "2022"
    adversarial = next(
        item for item in qa_items if item.question == "What did Caroline realize after her charity race?"
    )
    assert adversarial.category == 5
    assert adversarial.is_adversarial
    assert adversarial.answer == "self-care is important"
    assert not sunrise.is_adversarial


def test_malformed_evidence_in_data_is_split(folder_conversations):
    painting = next(
        item for item in folder_conversations["conv-26"].qa if item.question == "What did Melanie paint recently?"
    )
    assert painting.evidence == ["D8:6", "D9:17"]


def test_normalize_evidence():
    assert normalize_evidence(["D:11:26"]) == ["D11:26"]
    assert normalize_evidence(["D10:3; D10:4"]) == ["D10:3", "D10:4"]
    assert normalize_evidence(["D9:1 D4:4 D4:6", "D4:4"]) == ["D9:1", "D4:4", "D4:6"]
    assert normalize_evidence([" D2:07 ", "D"]) == ["D2:7", "D"]
    assert normalize_dialog_id("d3:5") == "D3:5"


def test_session_of():
    assert session_of("D3:5") == 3
    assert session_of("D12:1") == 12
    assert session_of("D") is None
