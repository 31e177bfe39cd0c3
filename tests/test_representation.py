"""What a memory is about: the embedding cache, contextual indexing and the speaker a query names."""

from datetime import datetime, timezone

import numpy as np
import pytest

from pcm.models import MemoryNode, NodeType
from pcm.perception.working_memory import preceding_context, replies_to_question
from pcm.services import Services
from pcm.world.representation import context_text, own_text
from pcm.world.retrieval import retrieve
from pcm.world.text import in_first_person, speaker_asked_about, speakers_named

MOMENT = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


@pytest.fixture
def services(ctx):
    return Services(ctx)


def turn(content, speaker, context=None):
    return MemoryNode(
        content=f"{speaker}: {content}",
        type=NodeType.FACT,
        weight=0.6,
        created_at=MOMENT,
        updated_at=MOMENT,
        last_accessed=MOMENT,
        context=context,
        source={"speaker": speaker, "dialog_ids": []},
    )


def test_embedding_cache_serves_requests_larger_than_itself_and_mixed_old_and_new(services):
    embedder = services.embedder
    expected = embedder.model.encode(["alpha", "beta", "gamma", "delta"], normalize_embeddings=True)
    embedder._cache.clear()
    embedder._cache_size = 2
    embedder.encode(["alpha", "beta"])
    mixed = embedder.encode(["alpha", "gamma", "delta", "beta"])  # old cached texts and new ones, over the size
    assert np.allclose(mixed, expected[[0, 2, 3, 1]], atol=1e-5)
    assert len(embedder._cache) == 2
    assert embedder.encode([]).shape == (0, embedder.dimension)


def test_own_text_is_dated_and_context_text_leads_with_the_preceding_turns():
    node = turn("That's awesome! What made you pick it?", "Melanie", context="Caroline: I adopted a greyhound.")
    assert own_text(node) == "[8 May 2023] Melanie: That's awesome! What made you pick it?"
    assert context_text(node).startswith("Caroline: I adopted a greyhound.\nMelanie:")
    assert context_text(turn("Hi", "Jon")) == "Jon: Hi"


def test_preceding_context_stays_within_the_episode():
    window = [
        {"role": "user", "speaker": "A", "content": "last week's talk", "timestamp": "2023-05-01T10:00:00"},
        {"role": "user", "speaker": "A", "content": "I adopted a greyhound.", "timestamp": "2023-05-08T13:50:00"},
        {"role": "user", "speaker": "B", "content": "No way!", "timestamp": "2023-05-08T13:55:00"},
    ]
    assert preceding_context(window, "2023-05-08T13:56:00", 2, 60) == "A: I adopted a greyhound.\nB: No way!"
    assert preceding_context(window, "2023-05-08T13:56:00", 3, 60) == "A: I adopted a greyhound.\nB: No way!"
    assert preceding_context(window, "2023-05-09T13:56:00", 2, 60) is None
    assert preceding_context(window, "2023-05-08T13:56:00", 0, 60) is None


def test_a_short_reply_is_found_through_the_turn_it_answers(services, ctx):
    graph = services.store.open("pair")
    graph.add_node(turn("I just adopted a retired racing greyhound named Bolt.", "Caroline"), reason="t", agent="t")
    reply = turn(
        "Yes, and the shelter said she loves long naps on the sofa.",
        "Caroline",
        context="Melanie: Is the greyhound settling in well?",
    )
    graph.add_node(reply, reason="t", agent="t")
    graph.add_node(turn("My pottery class starts again next week.", "Melanie"), reason="t", agent="t")
    query = "How is Caroline's greyhound settling in?"
    with_context = retrieve(graph, query, services.embedder.encode_one(query), ctx, expand=False)
    assert reply.id in [m.id for m in with_context[:2]]


def test_a_query_naming_one_speaker_favours_that_speakers_memories(services, ctx):
    graph = services.store.open("two-people")
    mine = turn("I went hiking in the mountains last weekend.", "Caroline")
    theirs = turn("I went hiking in the mountains last weekend.", "Melanie")
    for node in (mine, theirs):
        graph.add_node(node, reason="t", agent="t")
    query = "Where did Melanie go hiking?"
    ranked = retrieve(graph, query, services.embedder.encode_one(query), ctx, expand=False)
    assert [m.id for m in ranked[:2]] == [theirs.id, mine.id]
    plain = {
        m.id: m.similarity
        for m in retrieve(
            graph, query, services.embedder.encode_one(query), ctx.replace(speaker_weight=0.0), expand=False
        )
    }
    boosted = {m.id: m.similarity for m in ranked}
    assert boosted[theirs.id] == pytest.approx(plain[theirs.id] + ctx.speaker_weight * (1 - plain[theirs.id]))
    assert boosted[mine.id] == pytest.approx(plain[mine.id])
    both = "Did Caroline and Melanie go hiking together?"
    assert {
        m.id: m.similarity for m in retrieve(graph, both, services.embedder.encode_one(both), ctx, expand=False)
    } == pytest.approx(
        {
            m.id: m.similarity
            for m in retrieve(
                graph, both, services.embedder.encode_one(both), ctx.replace(speaker_weight=0.0), expand=False
            )
        }
    )
    told = "Where did Melanie go hiking with Caroline?"
    told_plain, told_boosted = (
        {m.id: m.similarity for m in retrieve(graph, told, services.embedder.encode_one(told), c, expand=False)}
        for c in (ctx.replace(speaker_weight=0.0), ctx)
    )
    assert told_boosted[theirs.id] == pytest.approx(
        told_plain[theirs.id] + ctx.speaker_weight * (1 - told_plain[theirs.id])
    )
    assert told_boosted[mine.id] == pytest.approx(told_plain[mine.id])


def test_speakers_named_matches_whole_first_names_only():
    assert speakers_named("What did Caroline paint?", ["Caroline", "Melanie"]) == ["Caroline"]
    assert speakers_named("what did caroline and melanie do", ["Caroline", "Melanie"]) == ["Caroline", "Melanie"]
    assert speakers_named("Where does Jonathan live?", ["Jon"]) == []
    assert speakers_named("Where does Jon Snow live?", ["Jon Snow"]) == ["Jon Snow"]


def test_a_question_naming_two_speakers_asks_about_the_one_named_as_the_doer():
    people = ["Caroline", "Melanie", "Tim", "John", "James", "Jon Snow"]
    assert speaker_asked_about("What did Caroline paint?", people) == "Caroline"
    assert speaker_asked_about("What does Melanie think about Caroline's decision?", people) == "Melanie"
    assert speaker_asked_about("What city did Tim suggest to John for the trip?", people) == "Tim"
    assert speaker_asked_about("What did Jon Snow offer to share with Tim?", people) == "Jon Snow"
    assert speaker_asked_about("What recommendations has Tim received from John?", people) == "Tim"
    # both, or a list of them, or nobody as the doer: no one speaker
    assert speaker_asked_about("Who is Tim and John's favorite player?", people) is None
    assert speaker_asked_about("When did James, Sam and John go to the game?", people) is None
    assert speaker_asked_about("How do Caroline & Melanie relax?", people) is None
    assert speaker_asked_about("What did John tell James?", people) is None  # the object, unmarked
    assert speaker_asked_about("What is the weather like?", people) is None


def test_a_question_about_the_user_is_encoded_as_the_user_would_say_it():
    assert in_first_person("What does the user do for work?") == "What do I do for work?"
    assert in_first_person("Does the user own a home?") == "Do I own a home?"
    assert in_first_person("Is the user married?") == "Am I married?"
    assert in_first_person("Has the user been abroad?") == "Have I been abroad?"
    assert in_first_person("What is the user's diet?") == "What is my diet?"
    assert in_first_person("The User’s job?") == "My job?"
    assert in_first_person("Where did the user go?") == "Where did I go?"
    assert in_first_person("用户的老婆是做什么工作的？") == "我的老婆是做什么工作的？"
    # a question about a named speaker, or about users in general, is left as it is
    assert in_first_person("What did Caroline research?") == "What did Caroline research?"
    assert in_first_person("How many users signed up?") == "How many users signed up?"
    assert in_first_person("Does the user interface confuse new users?") == "Does the user interface confuse new users?"
    assert in_first_person("用户界面好用吗？") == "用户界面好用吗？"


def test_search_compares_a_question_about_the_user_with_the_users_own_words(pcm):
    teaching = "I teach chemistry at Lincoln High, mostly juniors."
    for second, said in enumerate(["My sister just moved to Lisbon.", teaching]):
        pcm.process(said, user_id="teacher", timestamp=f"2026-01-05T09:00:0{second}Z")
    asked = {h.content: h.similarity for h in pcm.search("What does the user do for work?", user_id="teacher")}
    as_said = {h.content: h.similarity for h in pcm.search("What do I do for work?", user_id="teacher")}
    assert asked == pytest.approx(as_said)
    with pcm.services.store.reading("teacher") as graph:
        query = "What does the user do for work?"
        third_person = {
            m.content: m.similarity
            for m in retrieve(graph, query, pcm.services.embedder.encode_one(query), pcm.ctx, expand=False)
        }
    assert asked[teaching] > third_person[teaching] + 0.05


@pytest.mark.parametrize("when", ["2023-05-08T13:56:00", None])
def test_a_processed_turn_is_stored_and_indexed_with_the_turns_before_it(pcm, when):
    """Through the whole graph, every branch: the memory a turn writes carries its preceding turns
    of the episode (perception stages the window; the evolution step must read the staged one). A turn
    given no time is said when it is processed, so turns told one after another are one episode."""
    said = [
        ("Caroline", "I adopted a retired racing greyhound last week."),
        ("Melanie", "No way! What is her name?"),
        ("Caroline", "Bolt. She sleeps on the sofa all day."),
    ]
    for who, text in said:
        pcm.process(text, user_id="ctx", speaker=who, timestamp=when)
    pcm.process(
        "Actually Bolt sleeps in her own bed now.",
        user_id="ctx",
        speaker="Caroline",
        timestamp=when,
        force_level="high",
    )
    context = {n.content: n.context for n in pcm.memory("ctx").nodes(types=[NodeType.FACT])}
    assert context["Caroline: I adopted a retired racing greyhound last week."] is None
    assert context["Melanie: No way! What is her name?"] == "Caroline: I adopted a retired racing greyhound last week."
    assert context["Caroline: Bolt. She sleeps on the sofa all day."] == (
        "Caroline: I adopted a retired racing greyhound last week.\nMelanie: No way! What is her name?"
    )
    assert context["Caroline: Actually Bolt sleeps in her own bed now."] == (
        "Melanie: No way! What is her name?\nCaroline: Bolt. She sleeps on the sofa all day."
    )


def test_the_onnx_runtime_gives_the_torch_encoders_vectors(ctx, tmp_path):
    """`embedding_runtime` "onnx" exports the transformer once into the model cache and encodes with
    onnxruntime: the same unit vectors as sentence-transformers with torch, for short, long (truncated)
    and padded batches; a second encoder reuses the exported file."""
    from pcm.world.embeddings import Embedder

    texts = [
        "What martial arts has John done?",
        "Jon: Thanks! I rehearsed with a small group of dancers after work. " * 40,  # over 256 tokens
        "我开始学拳击了。",
        "ok",
    ] + [f"memory number {i} about the garden and the dogs" for i in range(70)]  # two batches
    fast = Embedder(onnx_cache=tmp_path)
    assert fast._onnx is not None
    exported = list(tmp_path.glob("encoder-*.onnx"))
    assert len(exported) == 1
    expected = fast.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(fast.encode(texts) - expected).max() < 1e-4
    again = Embedder(onnx_cache=tmp_path)
    assert again._onnx is not None and list(tmp_path.glob("encoder-*.onnx")) == exported
    assert Embedder()._onnx is None  # no cache given: torch


def test_a_cached_model_file_is_built_once_and_an_interrupted_build_leaves_nothing(tmp_path):
    """`build_once` (the GGUF conversion and the ONNX export): a failed build leaves neither the target
    nor scratch behind, a later build succeeds, and once built it is not built again."""
    from pcm.model_files import build_once

    target = tmp_path / "cache" / "model.bin"
    calls = []

    def failing(path):
        path.write_text("half")
        raise KeyboardInterrupt

    def writing(path):
        calls.append(path)
        path.write_text("whole")

    with pytest.raises(KeyboardInterrupt):
        build_once(target, failing)
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.bin.lock"]
    assert build_once(target, writing) == target and target.read_text() == "whole"
    assert build_once(target, writing) == target and len(calls) == 1
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".build-")]


def test_a_question_put_to_the_speaker_a_query_names_yields_to_their_answer(services, ctx):
    graph = services.store.open("question-answer")
    question = turn("The kids look so cute, Mel! How did they handle the accident?", "Caroline")
    answer = turn(
        "Thanks! They were scared but we reassured them. They're tough kids.",
        "Melanie",
        context=question.content,
    )
    other = turn("My pottery class starts again next week.", "Melanie")
    for node in (question, answer, other):
        graph.add_node(node, reason="t", agent="t")
    query = "How did Melanie's children handle the accident?"
    vector = services.embedder.encode_one(query)
    unordered = [m.id for m in retrieve(graph, query, vector, ctx, expand=False)]
    assert unordered.index(question.id) < unordered.index(answer.id)  # the question shares the query's words
    ordered = [m.id for m in retrieve(graph, query, vector, ctx)]
    assert ordered.index(answer.id) == ordered.index(question.id) - 1
    # a query about the asker, or naming no one, keeps the order the scores give
    for unnamed in (
        "How did Caroline's friend's children handle the accident?",
        "How did the kids handle the accident?",
    ):
        vector = services.embedder.encode_one(unnamed)
        assert [m.id for m in retrieve(graph, unnamed, vector, ctx)][:2] == [
            m.id for m in retrieve(graph, unnamed, vector, ctx, expand=False)
        ][:2]


def test_a_reply_to_another_partys_question_is_an_answer():
    asked = {
        "role": "user",
        "speaker": "Tim",
        "content": "Congrats! Which team did you sign with?",
        "timestamp": "2023-05-08T13:55:00",
    }
    told = {**asked, "content": "Congrats on the new team."}
    assistant = {"role": "assistant", "content": "Which team was it?", "timestamp": "2023-05-08T13:55:00"}
    assert replies_to_question([asked], "John", "2023-05-08T13:56:00", 60)
    assert not replies_to_question([asked], "Tim", "2023-05-08T13:56:00", 60)  # one's own question
    assert not replies_to_question([told], "John", "2023-05-08T13:56:00", 60)  # no question
    assert not replies_to_question([asked], "John", "2023-05-10T13:56:00", 60)  # days later: a new episode
    assert replies_to_question([assistant], None, "2023-05-08T13:56:00", 60)  # the user answers the assistant
    assert not replies_to_question([], None, "2023-05-08T13:56:00", 60)
