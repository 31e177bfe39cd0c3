"""The pair relation model, the pair router's correction targets, keyword informativeness and
per-turn hypothesis decay."""

import json
from datetime import datetime, timezone

import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from evals.bench.scenarios import superseded_by
from pcm.api import PCM
from pcm.config import DEFAULT_RELATION_MODEL
from pcm.evolution import TurnInfo, informative_keywords, is_common_word
from pcm.evolution.correction import find_conflicts
from pcm.evolution.maintenance import supported_memories
from pcm.evolution.profiling import apply_profiling, draft_hypothesis
from pcm.formulas import reinforce_weight
from pcm.models import MemoryNode, NodeType, RetrievedMemory, SurprisalPacket
from pcm.perception.relation import (
    RELATIONS,
    RelationModel,
    encode_for_relation,
    load_relation_model,
    pair_features,
)
from pcm.services import Services
from pcm.world.embeddings import MultilingualEncoder


def tiny_spec(**changes):
    """A two-dimensional head: cosine and the statement's change-cue count decide the relation."""
    spec = {
        "features": ["cosine", "cues"],
        "labels": list(RELATIONS),
        "dimension": 2,
        "mean": [0.0] * 9,
        "scale": [1.0] * 9,
        # consistent ← high cosine; contradiction ← change cues; novel ← low cosine
        "coef": [[4.0] + [0.0] * 8, [-4.0] + [0.0] * 8, [0.0, 6.0] + [0.0] * 7],
        "intercept": [0.0, 0.0, -1.0],
        "thresholds": {"contradiction": 0.6, "consistent": 0.5},
    }
    spec.update(changes)
    return spec


def test_relation_model_computes_softmax_of_the_standardised_features():
    model = RelationModel(tiny_spec())
    u = np.asarray([1.0, 0.0])
    same, other = np.asarray([1.0, 0.0]), np.asarray([0.0, 1.0])
    routine, change = (
        model.judge(np.stack([u, u]), same, ["I cook", "I cook"], "I cook again")[0],
        model.judge(np.stack([u]), other, ["I live in Lyon"], "I moved to Porto")[0],
    )
    assert sum(routine.values()) == pytest.approx(1.0)
    logits = np.asarray([4.0, -4.0, -1.0])
    assert routine["consistent"] == pytest.approx(np.exp(logits[0]) / np.exp(logits).sum())
    assert change["contradiction"] > 0.6 and max(change, key=change.get) == "contradiction"
    assert model.thresholds.contradiction == 0.6


def test_relation_model_rejects_a_malformed_file_and_wrong_vectors(tmp_path):
    with pytest.raises(ValueError, match="sizes"):
        RelationModel(tiny_spec(mean=[0.0] * 3))
    with pytest.raises(ValueError, match="labels"):
        RelationModel(tiny_spec(labels=["yes", "no", "maybe"]))
    with pytest.raises(ValueError, match="2-dimensional"):
        RelationModel(tiny_spec()).judge(np.ones((1, 3)), np.ones(3), ["a"], "b")
    with pytest.raises(FileNotFoundError, match="fit-relation"):
        load_relation_model(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="unknown feature block"):
        pair_features(["nonsense"], np.ones(2), np.ones(2), "a", "b")


def test_the_bilinear_block_pairs_what_the_memory_is_about_with_what_the_statement_says():
    # a 2-d subspace of a 3-d encoder: a = P·u (what the memory is about), b = P·v (what is said);
    # contradiction ← a₀·b₁ ("the memory is about diet, the statement about meat"), which no
    # dimension-by-dimension product u ⊙ v can express
    basis = {"mean": [0.0, 0.0, 0.0], "components": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}
    spec = {
        "features": ["bilinear"],
        "labels": list(RELATIONS),
        "dimension": 3,
        "basis": basis,
        "mean": [0.0] * 4,
        "scale": [1.0] * 4,
        "coef": [[0.0] * 4, [0.0] * 4, [0.0, 8.0, 0.0, 0.0]],
        "intercept": [0.0, 1.0, -2.0],
    }
    model = RelationModel(spec)
    diet, meat, other = np.asarray([1.0, 0.0, 0.0]), np.asarray([0.0, 1.0, 0.0]), np.asarray([0.0, 0.0, 1.0])
    assert model.basis.rank == 2
    assert (
        max(model.judge(np.stack([diet]), meat, ["I'm vegan"], "Grilled a ribeye")[0].items(), key=lambda kv: kv[1])[0]
        == "contradiction"
    )
    assert model.judge(np.stack([meat]), diet, ["Grilled a ribeye"], "I'm vegan")[0]["contradiction"] < 0.2
    assert model.judge(np.stack([diet]), other, ["I'm vegan"], "Lovely weather")[0]["contradiction"] < 0.2
    with pytest.raises(ValueError, match="basis"):
        RelationModel({**spec, "basis": None})
    with pytest.raises(ValueError, match="basis"):
        RelationModel({**spec, "basis": {"mean": [0.0] * 2, "components": [[1.0, 0.0], [0.0, 1.0]]}})
    with pytest.raises(ValueError, match="basis"):
        pair_features(["bilinear"], diet, meat, "a", "b")


def test_a_subspace_basis_holds_the_leading_principal_directions():
    from pcm.perception.relation import SubspaceBasis

    rng = np.random.default_rng(0)
    vectors = np.outer(rng.normal(size=200), [3.0, 4.0, 0.0]) / 5 + 0.01 * rng.normal(size=(200, 3)) + [1, 2, 3]
    basis = SubspaceBasis.fit(vectors, rank=1)
    assert abs(basis.components[0] @ np.asarray([0.6, 0.8, 0.0])) == pytest.approx(1.0, abs=1e-3)
    assert basis.mean == pytest.approx(vectors.mean(axis=0))
    assert SubspaceBasis.from_spec(basis.to_spec()).components == pytest.approx(basis.components)
    with pytest.raises(ValueError, match="rank"):
        SubspaceBasis.fit(vectors, rank=4)


def test_shipped_relation_model_loads_and_judges_with_the_shipped_encoders(ctx):
    spec = json.loads(DEFAULT_RELATION_MODEL.read_text(encoding="utf-8"))
    model = load_relation_model(DEFAULT_RELATION_MODEL)
    services = Services(ctx)
    sources = {"embedder": services.embedder, "multilingual": services.multilingual_encoder}
    assert model.dimension == sum(sources[name].dimension for name in model.encoders)
    assert set(spec["thresholds"]) >= {"contradiction", "consistent"}
    judge = services.pair_judge(ctx)
    memory = retrieved("m", "I'm a dentist at a small practice in Leeds.", 0.5)
    statements = [
        "Had three root canals back to back this morning.",
        "I quit dentistry last year and I teach high school chemistry now.",
    ]
    verdicts = [judge(s, [memory])["m"] for s in statements]
    assert all(sum(v[r] for r in RELATIONS) == pytest.approx(1.0) for v in verdicts)
    assert [max(RELATIONS, key=v.get) for v in verdicts] == ["consistent", "contradiction"]


def test_a_relation_model_reads_the_encoders_its_file_names_side_by_side():
    class Fixed:
        def __init__(self, dimension, value):
            self.dimension, self.value, self.calls = dimension, value, 0

        def encode(self, texts):
            self.calls += 1
            return np.tile(self.value, (len(texts), 1))

    first, second = Fixed(1, [1.0]), Fixed(1, [1.0])
    both = encode_for_relation(
        ["embedder", "multilingual"], {"embedder": lambda: first, "multilingual": lambda: second}, ["a"]
    )
    assert both.tolist() == [[pytest.approx(2**-0.5), pytest.approx(2**-0.5)]]
    unused = Fixed(1, [1.0])
    encode_for_relation(["embedder"], {"embedder": lambda: first, "multilingual": lambda: unused}, ["a"])
    assert unused.calls == 0  # an encoder the file does not name is never asked
    with pytest.raises(ValueError, match="multilingual"):
        encode_for_relation(["multilingual"], {"embedder": lambda: first}, ["a"])
    with pytest.raises(ValueError, match="encoders"):
        RelationModel(tiny_spec(encoders=["glove"]))
    assert RelationModel(tiny_spec()).encoders == ["embedder"]  # files from before the field


def test_the_multilingual_encoder_puts_a_translation_next_to_its_original(ctx):
    encoder = Services(ctx).multilingual_encoder
    english = ["I have been vegan for six years.", "We moved to Lisbon last spring.", "My daughter starts school."]
    chinese = ["我吃全素已经六年了。", "我们去年春天搬到了里斯本。", "我女儿要上学了。"]
    vectors = encoder.encode(english + chinese)
    assert vectors.shape == (6, 512) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors[:3] @ vectors[3:].T
    assert similarity.argmax(axis=1).tolist() == [0, 1, 2]
    with pytest.raises(FileNotFoundError, match="weights.npz|sp.model"):
        MultilingualEncoder("/nonexistent/folder")


def retrieved(node_id, content, similarity):
    return RetrievedMemory(
        id=node_id,
        content=content,
        type=NodeType.FACT,
        domain="Personal",
        weight=0.6,
        similarity=similarity,
        intent_relevance=1.0,
        score=similarity * 0.6,
    )


def stored_facts(graph, texts, weight=0.8):
    """Facts saying `texts`, stored in `graph` on 2024-05-01."""
    moment = datetime(2024, 5, 1, tzinfo=timezone.utc)
    nodes = [
        MemoryNode(
            content=text, type=NodeType.FACT, weight=weight, created_at=moment, updated_at=moment, last_accessed=moment
        )
        for text in texts
    ]
    for node in nodes:
        graph.add_node(node, reason="t", agent="t")
    return nodes


def test_correction_supersedes_the_memories_judged_contradicted_not_the_most_similar(ctx):
    memories = [
        retrieved("m-pets", "I have two cats at home.", 0.62),
        retrieved("m-diet", "I'm a vegetarian and cook lentils a lot.", 0.41),
    ]
    relations = {
        "m-pets": {"consistent": 0.3, "novel": 0.6, "contradiction": 0.1},
        "m-diet": {"consistent": 0.1, "novel": 0.1, "contradiction": 0.8},
    }
    assert [m.id for m in find_conflicts(memories, ctx, relations=relations, tau_contradiction=0.5)] == ["m-diet"]
    # no verdict reaches τ (another signal called it a contradiction): only the likeliest contradicted
    assert [m.id for m in find_conflicts(memories, ctx, relations=relations, tau_contradiction=0.9)] == ["m-diet"]
    # no verdicts: the most similar fact
    assert find_conflicts(memories, ctx)[0].id == "m-pets"


def test_a_correction_no_verdict_confirms_retires_one_suspect_not_the_similar_band(ctx):
    memories = [
        retrieved("m-job", "I work as a nurse at the county hospital.", 0.60),
        retrieved("m-shift", "Night shifts at the hospital again this week.", 0.58),
        retrieved("m-commute", "The hospital is a short bus ride away.", 0.57),
    ]
    relations = {
        "m-job": {"consistent": 0.3, "novel": 0.3, "contradiction": 0.4},
        "m-shift": {"consistent": 0.5, "novel": 0.3, "contradiction": 0.2},
        "m-commute": {"consistent": 0.6, "novel": 0.3, "contradiction": 0.1},
    }
    # without verdicts the band of similar facts goes; with them, one suspect
    assert len(find_conflicts(memories, ctx)) == 3
    assert [m.id for m in find_conflicts(memories, ctx, relations=relations, tau_contradiction=0.95)] == ["m-job"]


def test_pair_router_routes_on_verdicts_and_corrects_the_contradicted_fact(ctx):
    pcm = PCM(ctx.replace(router="pair"), checkpointer=InMemorySaver())
    pcm.process("I'm a dentist at a small practice in Leeds.", user_id="p")
    pcm.process("My sister has two dogs, a beagle and a terrier.", user_id="p")
    out = pcm.process("I quit dentistry last year and I teach high school chemistry now.", user_id="p")
    packet = out["surprisal"]
    assert packet["level_source"] == "pair" and packet["relations"]
    assert packet["signals"]["relation_contradiction"] == max(p["contradiction"] for p in packet["relations"].values())
    assert packet["level"] == "high" and out["agent"] == "correction"
    graph = pcm.memory("p")
    assert superseded_by(graph, out["changes"][0]["node_id"]) == ["I'm a dentist at a small practice in Leeds."]


def medium_packet(relations: dict) -> SurprisalPacket:
    """A turn routed to profiling ("medium") with the given pair verdicts per memory id."""
    return SurprisalPacket(
        content="x",
        scorer="hybrid",
        s_raw=0.5,
        retrieval_entropy=0.5,
        s_eff=0.4,
        theta_low=0.3,
        theta_high=0.7,
        level="medium",
        relations=relations,
    )


def test_common_words_are_not_evidence_keywords(services_graph):
    graph, info = services_graph
    assert is_common_word("lately") and is_common_word("learning") and is_common_word("最近")
    assert not is_common_word("pottery") and not is_common_word("kubernetes") and not is_common_word("陶艺")
    assert informative_keywords(graph, ["lately", "learning", "pottery", "bread"]) == ["pottery"]
    draft = draft_hypothesis(graph, info("Lately I have been learning pottery on the wheel."), [], None)
    assert "lately" not in draft.evidence_keywords and "learning" not in draft.evidence_keywords
    assert "pottery" in draft.evidence_keywords and "pottery" in draft.hypothesis


def test_profiling_a_turn_with_a_word_too_long_for_a_keyword(services_graph, ctx):
    """A stack trace's class name is longer than a keyword may be: the hypothesis leaves it out, the turn stands."""
    graph, info = services_graph
    text = "NullPointerException again, at com.example.order.service.OrderService.calcShippingFee(Order.java:218)"
    draft = draft_hypothesis(graph, info(text), [], None)
    assert draft is not None and all(len(keyword) <= 40 for keyword in draft.evidence_keywords)
    observation, _ = apply_profiling(graph, info(text), [], medium_packet({}), ctx, None)
    assert graph.node(observation).content == text


def test_profiling_keeps_the_observation_but_writes_no_hypothesis_about_nothing(services_graph, ctx):
    """A pleasantry routed to profiling has no informative new word: nothing could confirm a hypothesis
    about it, so only the observation is written (and the other hypotheses still decay)."""
    graph, info = services_graph
    for text in ("Thanks, wish me luck!", "好，试试这个。"):
        assert draft_hypothesis(graph, info(text), [], None) is None
        observation, changes = apply_profiling(graph, info(text), [], medium_packet({}), ctx, None)
        assert graph.node(observation).content == text and [c.node_id for c in changes] == [observation]
    assert not list(graph.nodes(types=[NodeType.HYPOTHESIS]))
    _, changes = apply_profiling(graph, info("Signed up for a pottery class."), [], medium_packet({}), ctx, None)
    (hypothesis,) = graph.nodes(types=[NodeType.HYPOTHESIS])
    assert "pottery" in hypothesis.content and hypothesis.id in [c.node_id for c in changes]


def test_a_common_word_does_not_confirm_a_hypothesis(services_graph, ctx):
    graph, info = services_graph
    moment = datetime(2024, 5, 1, tzinfo=timezone.utc)
    hypothesis = MemoryNode(
        content="Possibly the user is taking up: AI research",
        type=NodeType.HYPOTHESIS,
        domain="Academic",
        weight=0.4,
        created_at=moment,
        updated_at=moment,
        last_accessed=moment,
        keywords=["lately", "learning", "transformers"],
    )
    graph.add_node(hypothesis, reason="test", agent="test")
    assert hypothesis.id not in supported_memories(graph, info("Lately I have been learning to bake bread."), [], ctx)
    assert hypothesis.id in supported_memories(
        graph, info("Fine-tuned two transformers on my laptop tonight."), [], ctx
    )


def test_hypotheses_decay_on_every_turn_not_only_maintenance(ctx):
    from tests.test_graph import forced

    pcm = PCM(forced(ctx, "medium"), checkpointer=InMemorySaver())
    pcm.process("I mostly write Java at my bank job.", user_id="d", timestamp="2024-01-01T10:00:00+00:00")
    pcm.process("Thinking about opening a bakery someday.", user_id="d", timestamp="2024-01-02T10:00:00+00:00")
    first = next(n for n in pcm.memory("d").nodes() if n.type == NodeType.HYPOTHESIS)
    for level, day in (("medium", "2024-01-07"), ("high", "2024-01-12")):
        other = PCM(forced(ctx, level), pcm.services, checkpointer=InMemorySaver())
        other.process("Switched my whole team over to Kotlin.", user_id="d", timestamp=f"{day}T10:00:00+00:00")
    decayed = pcm.memory("d").node(first.id)
    assert decayed.weight == pytest.approx(first.weight * np.exp(-ctx.gamma * 10), rel=1e-3)


@pytest.fixture
def services_graph(ctx):
    services = Services(ctx)
    graph = services.store.open("kw", create=True)

    def info(text):
        return TurnInfo(text=text, turn=1, thread_id=None, timestamp=datetime(2024, 5, 2, tzinfo=timezone.utc))

    return graph, info


def test_maintenance_reinforces_a_fact_by_how_sure_the_input_confirms_it(ctx):
    ctx = ctx.replace(router="off")
    services = Services(ctx)
    pcm = PCM(ctx, services, checkpointer=InMemorySaver())
    first = pcm.process("I'm a dentist at a small practice in Leeds.", user_id="r")
    fact = pcm.memory("r").node(first["changes"][0]["node_id"])
    text = "Being a dentist in Leeds keeps me busy, the practice is small but friendly."
    out = pcm.process(text, user_id="r")
    reinforced = [c for c in out["changes"] if c["node_id"] == fact.id]
    assert out["agent"] == "maintenance" and len(reinforced) == 1
    judged = RetrievedMemory(
        id=fact.id,
        content=fact.content,
        type=fact.type,
        domain=fact.domain,
        weight=fact.weight,
        similarity=1.0,
        intent_relevance=1.0,
        score=fact.weight,
        via="search",
    )
    p = services.pair_judge(ctx)(text, [judged])[fact.id]["consistent"]
    assert 0.0 < p < 1.0
    assert reinforced[0]["new_weight"] == pytest.approx(reinforce_weight(fact.weight, ctx.eta, p))


def test_shipped_pair_thresholds_were_chosen_with_the_shipped_calibration():
    """The pair router's cue path reads the calibrated cheap router, so its thresholds belong to one
    calibration file; `make fit-relation` after `make calibrate` keeps them together (the shipped
    thresholds were once left from an earlier calibration, and a refit moved τ_cue 0.6 → 0.375)."""
    from evals.provenance import file_digest
    from pcm.config import DEFAULT_CALIBRATION

    spec = json.loads(DEFAULT_RELATION_MODEL.read_text(encoding="utf-8"))
    assert spec["thresholds"]["cue_router_calibration_sha256"] == file_digest(DEFAULT_CALIBRATION)


def test_profiling_contests_the_facts_judged_likely_contradicted_and_decays_nothing(services_graph, ctx):
    graph, info = services_graph
    diet, pets = stored_facts(graph, ("I'm a vegetarian.", "I have two cats."))
    packet = medium_packet(
        {
            diet.id: {"consistent": 0.2, "novel": 0.4, "contradiction": 0.4},
            pets.id: {"consistent": 0.3, "novel": 0.6, "contradiction": 0.1},
        }
    )
    statement = "Grilled a steak for dinner tonight, it was great."
    observation, changes = apply_profiling(
        graph, info(statement), [], packet, ctx.replace(contest_threshold=0.25), None
    )
    assert [(e.source, e.target, e.weight) for e in graph.edges() if e.relation == "contests"] == [
        (observation, diet.id, 0.4)
    ]
    assert graph.node(diet.id).weight == 0.8 and all(c.node_id != diet.id for c in changes)
    apply_profiling(graph, info(statement), [], packet, ctx.replace(contest_threshold=None), None)
    assert len([e for e in graph.edges() if e.relation == "contests"]) == 1


def test_profiling_confirms_what_a_novel_turn_supports_but_not_what_it_contests(services_graph, ctx):
    """A novel turn on a known subject still confirms that subject's memories as maintenance would (by the
    judge's P(consistent), linked `supports`); a fact it contests keeps its weight and gets no support."""
    graph, info = services_graph
    texts = ("I take a pottery class at the community studio.", "I gave up pottery for good last year.")
    kept, doubted = stored_facts(graph, texts, weight=0.6)
    verdicts = {
        kept.id: {"consistent": 0.7, "novel": 0.25, "contradiction": 0.05},
        doubted.id: {"consistent": 0.1, "novel": 0.3, "contradiction": 0.6},
    }
    observation, changes = apply_profiling(
        graph,
        info("Bought my own pottery wheel today."),
        [retrieved(n.id, n.content, 0.8) for n in (kept, doubted)],
        medium_packet(verdicts),
        ctx.replace(contest_threshold=0.25),
        None,
        lambda judged: {m.id: verdicts[m.id] for m in judged},
    )
    assert graph.node(kept.id).weight == pytest.approx(reinforce_weight(0.6, ctx.eta, 0.7))
    assert graph.node(doubted.id).weight == 0.6 and all(c.node_id != doubted.id for c in changes)
    assert {(e.relation, e.target) for e in graph.edges() if e.source == observation} >= {
        ("supports", kept.id),
        ("contests", doubted.id),
    }
    assert ("supports", doubted.id) not in {(e.relation, e.target) for e in graph.edges()}


def test_profiling_never_contests_a_stored_request(services_graph, ctx):
    """A stored question claimed nothing: like `find_conflicts`, a profiling turn leaves it uncontested."""
    graph, info = services_graph
    request, fact = stored_facts(graph, ("Can you suggest a vegetarian recipe?", "I'm a vegetarian."))
    verdict = {"consistent": 0.1, "novel": 0.3, "contradiction": 0.6}
    packet = medium_packet({request.id: verdict, fact.id: verdict})
    observation, _ = apply_profiling(
        graph, info("Grilled a steak for dinner tonight."), [], packet, ctx.replace(contest_threshold=0.25), None
    )
    assert [(e.source, e.target) for e in graph.edges() if e.relation == "contests"] == [(observation, fact.id)]


def test_a_later_confirmation_overturns_a_supersession_and_gives_the_weight_back(ctx):
    """A false correction (two consistent statements judged contradictory) is undone by implicit
    verification: a maintenance turn confirming the superseded memory surely enough reaffirms it.
    A confirmation below `reaffirm_threshold` leaves the supersession standing; a new correction
    after the reaffirmation stands again; the view of the past still sees the first one."""
    from pcm.evolution.correction import apply_correction
    from pcm.evolution.maintenance import apply_maintenance
    from pcm.formulas import decay_weight, reaffirmed_weight
    from pcm.world.retrieval import retrieve
    from pcm.world.supersession import standing_supersessions

    services = Services(ctx)
    graph = services.store.open("reaffirm", create=True)
    day = lambda d: datetime(2024, 5, d, tzinfo=timezone.utc)  # noqa: E731
    info = lambda text, d: TurnInfo(text=text, turn=d, thread_id=None, timestamp=day(d))  # noqa: E731
    fact = MemoryNode(
        content="I'm passionate about improving education in my community.",
        type=NodeType.FACT,
        weight=0.8,
        created_at=day(1),
        updated_at=day(1),
        last_accessed=day(1),
    )
    graph.add_node(fact, reason="t", agent="t")
    packet = SurprisalPacket(
        content="x",
        scorer="hybrid",
        s_raw=0.9,
        retrieval_entropy=0.1,
        s_eff=0.8,
        theta_low=0.3,
        theta_high=0.6,
        level="high",
    )
    successor, _ = apply_correction(
        graph,
        info("Growing up, I saw what poor schools did to my neighbourhood.", 2),
        [retrieved(fact.id, fact.content, 0.7)],
        packet,
        ctx,
    )
    decayed = decay_weight(0.8, ctx.beta, 0.8)
    assert graph.node(fact.id).weight == pytest.approx(decayed)
    assert [s for s, _ in standing_supersessions(graph, fact.id)] == [successor]
    query = "What is this person passionate about in the community?"
    found = [m.id for m in retrieve(graph, query, services.embedder.encode([query])[0], ctx)]
    assert found.index(successor) == found.index(fact.id) - 1

    confirming = "Next week the community meeting is about education, my favourite subject."
    hit = [retrieved(fact.id, fact.content, 0.7)]
    unsure = lambda memories: {m.id: {"consistent": 0.6, "novel": 0.1, "contradiction": 0.3} for m in memories}  # noqa: E731
    apply_maintenance(graph, info(confirming, 3), hit, ctx, unsure)
    assert standing_supersessions(graph, fact.id) and graph.node(fact.id).weight < 0.8

    sure = lambda memories: {m.id: {"consistent": 0.9, "novel": 0.05, "contradiction": 0.05} for m in memories}  # noqa: E731
    weight = graph.node(fact.id).weight
    observation, _ = apply_maintenance(graph, info(confirming, 4), hit, ctx, sure)
    assert standing_supersessions(graph, fact.id) == []
    assert graph.node(fact.id).weight == pytest.approx(reinforce_weight(reaffirmed_weight(weight, 0.8), ctx.eta, 0.9))
    assert [(e.source, e.target) for e in graph.edges() if e.relation == "reaffirms"] == [(observation, fact.id)]
    found = [m.id for m in retrieve(graph, query, services.embedder.encode([query])[0], ctx)]
    assert found.index(fact.id) < found.index(successor)
    graph.commit()
    assert [s for s, _ in standing_supersessions(graph.as_of(day(3)), fact.id)] == [successor]

    again, _ = apply_correction(
        graph,
        info("I gave up on community work, politics is my thing now.", 6),
        [retrieved(fact.id, fact.content, 0.7)],
        packet,
        ctx,
    )
    assert [s for s, _ in standing_supersessions(graph, fact.id)] == [again]


@pytest.mark.parametrize(
    "fact, revision, later",
    [
        (
            "I live in Paris, in a small flat near the Marais.",
            "I moved to Berlin last month for a new job.",
            "Paris museums were great when I lived there, I miss them.",
        ),
        (
            "I'm a vegetarian and I cook a lot of lentil dishes.",
            "I started eating meat again, steak is my favourite now.",
            "I used to make lentil soup every week back when I was vegetarian.",
        ),
    ],
)
def test_a_later_mention_of_the_old_state_does_not_reaffirm_a_real_revision(ctx, fact, revision, later):
    """With the shipped models: the revision supersedes the fact, and a later turn about the old
    state (in the past tense) is not judged to confirm it (it may even supersede it again), so the
    supersession stands."""
    from pcm.world.supersession import standing_supersessions

    pcm = PCM(ctx, checkpointer=InMemorySaver())
    first = pcm.process(fact, user_id="v", timestamp="2024-01-01T10:00:00+00:00")
    corrected = pcm.process(revision, user_id="v", timestamp="2024-02-01T10:00:00+00:00")
    assert corrected["agent"] == "correction"
    pcm.process(later, user_id="v", timestamp="2024-03-01T10:00:00+00:00")
    graph = pcm.memory("v")
    fact_id = first["changes"][0]["node_id"]
    assert corrected["changes"][0]["node_id"] in [s for s, _ in standing_supersessions(graph, fact_id)]
    assert not [e for e in graph.edges() if e.relation == "reaffirms"]
