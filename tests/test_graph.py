"""The LangGraph workflow: each branch, checkpointed working memory, bad input, the LLM path."""

import subprocess
import sys
import textwrap

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from pcm.api import PCM
from pcm.evolution import stated_weight
from pcm.formulas import informativeness
from pcm.graph import build_graph
from pcm.ingest import read_conversation
from pcm.services import Services
from pcm.world.text import content_words

HISTORY = "I work at Google as a software engineer on the search team."
PROBE = "First week at Microsoft is going great, the onboarding is smooth."
SUPPORTING = "Spent the whole day at Google tuning the search ranking code."


def forced(ctx, level):
    """Thresholds that put any non-negative S_eff of the nll scorer in the wanted band (the life-state
    guard, which would send PROBE's new employer to correction in any band, off)."""
    bands = {"low": (1e6, 2e6), "medium": (-1.0, 1e6), "high": (-2.0, -1.0)}
    low, high = bands[level]
    return ctx.replace(router="threshold", scorer="nll", theta_low=low, theta_high=high, life_states=False)


@pytest.mark.parametrize("level,agent", [("high", "correction"), ("medium", "profiling"), ("low", "maintenance")])
def test_each_surprise_band_runs_its_branch(ctx, level, agent):
    pcm = PCM(forced(ctx, level), checkpointer=InMemorySaver())
    pcm.process(HISTORY, user_id="u")
    old = pcm.memory("u").nodes()[0]
    out = pcm.process(SUPPORTING if level == "low" else PROBE, user_id="u")
    assert out["surprisal"]["level"] == level and out["agent"] == agent
    graph = pcm.memory("u")
    weight_now = graph.node(old.id).weight
    kinds = sorted(n.type.value for n in graph.nodes())
    if agent == "correction":
        assert weight_now < old.weight
        new = graph.node(out["changes"][0]["node_id"])
        assert new.weight == pytest.approx(stated_weight(ctx.correction_weight, PROBE, ctx))
        assert sorted(e.relation for e in graph.edges() if e.source == new.id) == ["said_on", "supersedes"]
        assert "contradicted" in graph.history(old.id)[-1].reason
    elif agent == "profiling":
        assert "hypothesis" in kinds
        hypothesis = next(n for n in graph.nodes() if n.type.value == "hypothesis")
        assert 0.3 <= hypothesis.weight <= 0.5
        assert {e.relation for e in graph.edges() if e.source == hypothesis.id} == {"derived_from", "said_on"}
        assert weight_now == old.weight
    else:
        assert weight_now > old.weight
        assert "hypothesis" not in kinds


def test_first_turn_on_empty_memory_is_not_a_conflict(pcm):
    out = pcm.process(HISTORY, user_id="new")
    assert out["surprisal"]["s_eff"] == 0.0 and out["surprisal"]["level_source"] == "empty-retrieval"
    assert out["agent"] == "maintenance" and out["retrieved"] == []
    assert [n.type.value for n in pcm.memory("new").nodes()] == ["fact", "day"]  # the memory and its day


def test_hypothesis_is_confirmed_by_later_behaviour_and_promoted(ctx):
    pcm = PCM(forced(ctx, "medium"), checkpointer=InMemorySaver())
    pcm.process("I mostly write Java at my bank job.", user_id="h")
    pcm.process("I've started reading about Kubernetes operators on weekends.", user_id="h")
    hypothesis = next(n for n in pcm.memory("h").nodes() if n.type.value == "hypothesis")
    maintenance = PCM(forced(ctx, "low").replace(eta=0.3), pcm.services, checkpointer=InMemorySaver())
    for _ in range(4):
        maintenance.process("Deployed my first Kubernetes operator today.", user_id="h")
    promoted = pcm.memory("h").node(hypothesis.id)
    assert promoted.weight > ctx.promotion_threshold and promoted.type.value == "fact"
    assert "promoted" in pcm.memory("h").history(hypothesis.id)[-1].reason


def test_unconfirmed_hypothesis_decays_with_time(ctx):
    pcm = PCM(forced(ctx, "medium"), checkpointer=InMemorySaver())
    pcm.process("I mostly write Java at my bank job.", user_id="t", timestamp="2024-01-01T10:00:00+00:00")
    pcm.process("Thinking about opening a bakery someday.", user_id="t", timestamp="2024-01-02T10:00:00+00:00")
    hypothesis = next(n for n in pcm.memory("t").nodes() if n.type.value == "hypothesis")
    later = PCM(forced(ctx, "low"), pcm.services, checkpointer=InMemorySaver())
    later.process("Fixed a Java bug in the payments service.", user_id="t", timestamp="2024-01-12T10:00:00+00:00")
    decayed = pcm.memory("t").node(hypothesis.id)
    assert decayed.weight == pytest.approx(hypothesis.weight * 2.718281828 ** (-ctx.gamma * 10), rel=1e-3)


def test_working_memory_evicts_into_long_term_memory(ctx):
    pcm = PCM(ctx.replace(token_budget=40, eviction_size=2), checkpointer=InMemorySaver())
    texts = [
        f"Note {i}: I visited the museum of {city} with my sister."
        for i, city in enumerate(["Oslo", "Lima", "Kyoto", "Porto"])
    ]
    for text in texts:
        pcm.process(text, user_id="w")
    state = pcm.state("w")
    assert sum(t["tokens"] for t in state["working_memory"]) <= 40 or len(state["working_memory"]) == 1
    assert state["pending_consolidation"] == []
    entities = [n.content for n in pcm.memory("w").nodes() if n.type.value == "entity"]
    assert "Oslo" in entities


def test_checkpointer_resumes_the_thread_in_a_new_process(ctx):
    first = PCM(ctx)
    first.process("My name is Ada and I love chess.", user_id="ada", thread_id="t1")
    script = textwrap.dedent(f"""
        import json
        from pcm.api import PCM
        from pcm.config import load_context
        pcm = PCM(load_context(data_dir={ctx.data_dir!r}))
        out = pcm.process("I played a chess tournament today.", user_id="ada", thread_id="t1")
        state = pcm.state("ada", "t1")
        print(json.dumps({{"turn": out["turn"], "window": [t["content"] for t in state["working_memory"]]}}))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    import json

    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["turn"] == 2
    assert result["window"] == ["My name is Ada and I love chess.", "I played a chess tournament today."]


@pytest.mark.parametrize("bad,message", [("", "empty"), ("   ", "empty"), ("x" * 1_000_000, "limit")])
def test_bad_input_is_rejected_and_changes_nothing(pcm, bad, message):
    pcm.process("I like tea.", user_id="b")
    before = pcm.memory("b").export()
    state_before = pcm.state("b")
    with pytest.raises(ValueError, match=message):
        pcm.process(bad, user_id="b")
    assert pcm.memory("b").export() == before
    assert pcm.state("b")["working_memory"] == state_before["working_memory"]


def test_graph_itself_rejects_bad_input_before_touching_memory(ctx):
    services = Services(ctx)
    graph = build_graph(services)
    with pytest.raises(ValueError, match="empty"):
        graph.invoke({"user_input": "", "user_id": "g"}, context=ctx)
    assert not services.store.exists("g")


def test_bad_user_id_and_unknown_user(pcm):
    with pytest.raises(ValueError, match="user_id"):
        pcm.process("hello", user_id="")
    assert pcm.search("anything at all", user_id="never-seen") == []
    with pytest.raises(LookupError, match="no memory for user"):
        pcm.memory("never-seen")


def test_invalid_utf8_file_is_rejected(ctx, tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    with pytest.raises(ValueError, match="not valid UTF-8"):
        read_conversation(path, ctx)


def test_threads_of_different_users_never_share_working_memory(pcm):
    pcm.process("My locker code is 4711.", user_id="alice", thread_id="main")
    pcm.process("Hello there.", user_id="bob", thread_id="main")
    assert [t["content"] for t in pcm.state("bob", "main")["working_memory"]] == ["Hello there."]
    assert all("4711" not in m.content for m in pcm.search("What is the locker code?", user_id="bob"))


def test_llm_path_uses_structured_output_and_counts_usage(ctx, scripted_model):
    ctx = ctx.replace(llm_intent_confidence=1.0)  # ask the LLM about every turn's intent
    llm_pcm = PCM(ctx, Services(ctx, chat_model=scripted_model), checkpointer=InMemorySaver())
    llm_pcm.process(HISTORY, user_id="l")
    out = llm_pcm.process(PROBE, user_id="l")
    assert out["intent"]["label"] == "Professional"
    assert out["response"] == "Noted: you work at Microsoft now."
    assert out["messages"][-1].content == out["response"]
    assert out["llm_usage"]["calls"] >= 2 and out["llm_usage"]["input_tokens"] >= 20
    assert out["llm_usage"]["calls"] == len(scripted_model.calls) - 2  # the first turn made an intent and a reply call
    assert "intent" in scripted_model.calls and "reply" in scripted_model.calls


def test_llm_is_asked_about_intent_only_when_the_offline_router_is_unsure(llm_pcm, scripted_model):
    out = llm_pcm.process("I fixed a nasty Python bug in our Django backend today.", user_id="i")
    assert out["intent"]["confidence"] >= llm_pcm.ctx.llm_intent_confidence
    assert "intent" not in scripted_model.calls


def test_llm_correction_uses_the_diagnosis(ctx, scripted_model):
    pcm = PCM(forced(ctx, "high"), Services(ctx, chat_model=scripted_model), checkpointer=InMemorySaver())
    pcm.process(HISTORY, user_id="c")
    google = pcm.memory("c").nodes()[0]
    out = pcm.process(PROBE, user_id="c")
    assert out["agent"] == "correction"
    assert "relation" in scripted_model.calls
    assert pcm.memory("c").node(google.id).weight < google.weight


def test_malformed_llm_replies_fall_back_to_the_offline_path(ctx):
    replies = iter([AIMessage(content="not json")] * 50)
    pcm = PCM(
        forced(ctx, "medium"),
        Services(ctx, chat_model=GenericFakeChatModel(messages=replies)),
        checkpointer=InMemorySaver(),
    )
    pcm.process(HISTORY, user_id="m")
    out = pcm.process(PROBE, user_id="m")
    assert out["agent"] == "profiling"
    hypothesis = next(n for n in pcm.memory("m").nodes() if n.type.value == "hypothesis")
    assert hypothesis.content.startswith("Possibly the user is taking up")
    assert out["llm_usage"]["failures"] >= 2
    assert out["intent"]["label"] in ctx.domains


def test_llm_is_asked_about_relations_only_when_the_router_is_unsure(ctx, scripted_model):
    """Cascade cost: a request or a turn the cheap router settles makes no relation call; the
    threshold router with the hybrid scorer needs the LLM's conflict score on every turn."""
    pcm = PCM(ctx, Services(ctx, chat_model=scripted_model), checkpointer=InMemorySaver())
    pcm.process(HISTORY, user_id="r")
    scripted_model.calls.clear()
    out = pcm.process("Can you recommend a good podcast about history?", user_id="r")
    assert out["surprisal"]["level_source"] == "request" and "relation" not in scripted_model.calls
    settled = [
        pcm.process(text, user_id="r")["surprisal"]["level_source"]
        for text in ("I also started learning the cello on weekends.", "Reviewed pull requests at Google again today.")
    ]
    assert scripted_model.calls.count("relation") == sum(source == "llm" for source in settled)
    threshold = PCM(
        ctx.replace(router="threshold"), Services(ctx, chat_model=scripted_model), checkpointer=InMemorySaver()
    )
    threshold.process(HISTORY, user_id="t")
    scripted_model.calls.clear()
    threshold.process(PROBE, user_id="t")
    assert "relation" in scripted_model.calls


def test_the_routers_level_prior_is_estimated_from_each_users_own_turns(ctx):
    from pcm.formulas import adapted_level_prior

    pcm = PCM(ctx.replace(level_prior_turns=4.0), checkpointer=InMemorySaver())
    chat = [
        "I had pasta for lunch with my colleague Ana.",
        "Ana and I walked by the river after lunch.",
        "The river was busy with rowers this afternoon.",
        "Later I read a chapter of my novel at home.",
        "Ana sent me photos of the rowers on the river.",
    ]
    packets = [pcm.process(text, user_id="a")["surprisal"] for text in chat]
    assert packets[0]["router_posterior"] is None  # nothing retrieved: the router did not decide
    stated = [n.router_posterior for n in pcm.memory("a").nodes() if n.router_posterior]
    assert stated == [p["router_posterior"] for p in packets[1:]] and len(stated) == 4
    # each turn routes under the prior of the turns stored before it, shrunk to the configured one
    assert packets[1]["level_prior"] == pytest.approx([1 / 3] * 3)
    assert packets[-1]["level_prior"] == pytest.approx(
        adapted_level_prior(stated[:-1], 4.0, ctx.level_prior, ctx.level_prior_iterations)
    )
    assert packets[-1]["level_prior"][0] > 1 / 3  # small talk: mostly "low" so far
    # another user starts from the configured prior; n₀ = 0 keeps the configured prior for everyone
    assert pcm.process("My cat sleeps on the sofa all day.", user_id="b")["surprisal"]["router_posterior"] is None
    assert pcm.process("My cat Miso likes the sofa.", user_id="b")["surprisal"]["level_prior"] == pytest.approx(
        [1 / 3] * 3
    )
    fixed = PCM(ctx.replace(level_prior_turns=0.0), checkpointer=InMemorySaver())
    for text in chat:
        out = fixed.process(text, user_id="a")
    assert out["surprisal"]["level_prior"] == pytest.approx([1.0, 1.0, 1.0])


def test_a_request_to_the_assistant_is_stored_below_a_statement(ctx):
    pcm = PCM(ctx, checkpointer=InMemorySaver())
    pcm.process(HISTORY, user_id="q")
    asked = pcm.process("Can you recommend a good podcast about history?", user_id="q")
    assert asked["surprisal"]["level_source"] == "request"

    def weight(content):
        return next(n.weight for n in pcm.memory("q").nodes() if n.content == content)

    question = "Can you recommend a good podcast about history?"
    assert weight(question) == stated_weight(ctx.request_weight, question, ctx) < ctx.request_weight
    pcm.process("I listen to history podcasts on my commute.", user_id="q")
    statement = "I listen to history podcasts on my commute."
    assert weight(statement) == stated_weight(ctx.observation_weight, statement, ctx)
    assert weight(question) < weight(statement)
    # whichever way that turn was routed (offline: to correction), the question claimed nothing to contradict
    assert weight(question) == stated_weight(ctx.request_weight, question, ctx)
    with pytest.raises(ValueError, match="request_weight"):
        ctx.replace(request_weight=1.5)


def test_a_stated_fact_starts_at_its_branchs_weight_times_its_informativeness(ctx):
    story = (
        "We drove up to the lake cabin with the kids on Saturday, caught three trout and grilled them "
        "over the campfire while it rained all evening, then played cards until the power came back."
    )
    short = "Wow, congrats!"
    assert ctx.correction_weight == ctx.observation_weight  # so a statement's base is the same on every branch
    for exponent in (ctx.informativeness_exponent, 0.0):
        pcm = PCM(ctx.replace(informativeness_exponent=exponent), checkpointer=InMemorySaver())
        for text in (HISTORY, story, short):
            pcm.process(text, user_id="i")
        stored = {n.content: n.weight for n in pcm.memory("i").nodes()}
        for text in (story, short):
            prior = informativeness(len(content_words(text)), ctx.informativeness_saturation, exponent)
            assert stored[text] == pytest.approx(ctx.observation_weight * prior)
        if exponent:
            # a two-word turn starts lower than a turn that tells a story
            assert stored[short] < stored[story] < ctx.observation_weight
        else:
            assert stored[short] == stored[story] == ctx.observation_weight
    with pytest.raises(ValueError, match="informativeness"):
        ctx.replace(informativeness_saturation=0)
    with pytest.raises(ValueError, match="informativeness"):
        ctx.replace(informativeness_exponent=-0.5)


def test_entity_nodes_are_names_each_once(ctx):
    pcm = PCM(ctx.replace(token_budget=40, eviction_size=2), checkpointer=InMemorySaver())
    texts = [
        "Yeah, we walked Pixie to Fox Hollow today.",
        "Thanks! Pixie's new bed arrived this morning.",
        "Sometimes Pixie sleeps the whole afternoon away.",
        "Got it, ttyl! Can't wait to see the pics.",
        "Bye for now, talk tomorrow.",
    ]
    for text in texts:
        pcm.process(text, user_id="e")
    pcm.process("One more note to push the rest out of the window.", user_id="e")
    entities = sorted(n.content for n in pcm.memory("e").nodes() if n.type.value == "entity")
    assert entities == ["Fox Hollow", "Pixie"]
