"""Tests for the BM25, dense and hybrid baseline retrievers and RRF."""

import numpy as np
import pytest

from evals.bench.baselines import (
    BM25Retriever,
    DenseRetriever,
    Document,
    HybridRetriever,
    load_minilm,
    reciprocal_rank_fusion,
    tokenize,
    turn_documents,
)
from pcm.datasets.locomo import Conversation, Session, Turn

ENGLISH_DOCUMENTS = [
    ("cooking", "I baked sourdough bread and a lemon cake this weekend.", ["D1:1"]),
    ("hiking", "We went hiking in the mountains and camped by a lake.", ["D1:2"]),
    ("painting", "She painted a sunrise over the ocean with watercolors.", ["D2:1", "D2:2"]),
]

CHINESE_DOCUMENTS = [
    ("beijing", "我昨天去北京看了长城。", ["D1:1"]),
    ("hotpot", "她最喜欢吃四川火锅，每周都去。", ["D1:2"]),
    ("shanghai", "他在上海的一家银行工作。", ["D1:3"]),
]


class KeywordEncoder:
    """A tiny deterministic stand-in for a sentence encoder: one dimension per keyword."""

    keywords = ("bread", "hiking", "sunrise", "ocean")

    def __init__(self):
        self.calls = []

    def encode(self, sentences, normalize_embeddings=False):
        self.calls.append(list(sentences))
        vectors = np.array(
            [[float(keyword in sentence.lower()) for keyword in self.keywords] + [0.1] for sentence in sentences]
        )
        if normalize_embeddings:
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


def test_tokenize_lowercases_drops_stopwords_and_segments_chinese():
    assert tokenize("The Dog's BALL, and 2 cats!") == ["dog", "ball", "2", "cats"]
    assert tokenize("我昨天去北京看了长城") == ["昨天", "去", "北京", "看", "长城"]
    assert tokenize("Meet in 北京 tomorrow") == ["meet", "北京", "tomorrow"]


def test_bm25_ranks_the_matching_document_first():
    retriever = BM25Retriever(ENGLISH_DOCUMENTS)
    results = retriever.search("Who went hiking by the lake?", k=3)
    assert results[0][0] == "hiking"
    assert results[0][1] > 0
    assert retriever.search("watercolor sunrise painting", k=1)[0][0] == "painting"
    assert retriever.dialog_ids_of("painting") == ("D2:1", "D2:2")


def test_bm25_ranks_the_matching_chinese_document_first():
    retriever = BM25Retriever(CHINESE_DOCUMENTS)
    assert retriever.search("谁喜欢吃火锅？", k=3)[0][0] == "hotpot"
    assert retriever.search("他在哪里工作", k=3)[0][0] == "shanghai"
    assert retriever.search("长城", k=3)[0][0] == "beijing"


def test_bm25_returns_only_matching_documents_up_to_k():
    retriever = BM25Retriever(ENGLISH_DOCUMENTS)
    assert retriever.search("quantum chromodynamics", k=3) == []
    assert retriever.search("the and of", k=3) == []
    assert len(retriever.search("hiking bread sunrise", k=2)) == 2
    assert BM25Retriever([]).search("anything", k=3) == []


def test_reciprocal_rank_fusion_hand_example():
    fused = reciprocal_rank_fusion([[("a", 9.0), ("b", 5.0), ("c", 1.0)], [("c", 0.9), ("a", 0.8)]], k=60)
    assert [doc_id for doc_id, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2][1] == pytest.approx(1 / 62)
    assert reciprocal_rank_fusion([[("x", 1.0)], [("y", 1.0)]], k=1) == [("x", 0.5), ("y", 0.5)]


def test_dense_retriever_batch_encodes_documents_with_given_encoder():
    encoder = KeywordEncoder()
    retriever = DenseRetriever(ENGLISH_DOCUMENTS, encoder=encoder)
    assert len(encoder.calls) == 1
    assert len(encoder.calls[0]) == len(ENGLISH_DOCUMENTS)
    results = retriever.search("ocean sunrise", k=2)
    # query and "painting" both embed as (0, 0, 1, 1, 0.1); ties between the others keep document order
    assert results == [
        ("painting", pytest.approx(1.0)),
        ("cooking", pytest.approx(0.01 / (np.sqrt(2.01) * np.sqrt(1.01)))),
    ]


def test_dense_retriever_with_minilm_finds_paraphrase(minilm):
    documents = [
        ("pet", "My golden retriever loves playing fetch at the park.", ["D1:1"]),
        ("exam", "I am studying late for my chemistry final.", ["D1:2"]),
        ("stocks", "The stock market dropped sharply on Monday.", ["D1:3"]),
    ]
    retriever = DenseRetriever(documents, encoder=minilm)
    assert retriever.search("What kind of dog does she have?", k=3)[0][0] == "pet"
    assert retriever.search("How did the shares do?", k=1)[0][0] == "stocks"


def test_hybrid_retriever_fuses_bm25_and_dense(minilm):
    retriever = HybridRetriever(ENGLISH_DOCUMENTS, encoder=minilm)
    results = retriever.search("hiking trip near a lake", k=2)
    assert results[0][0] == "hiking"
    assert len(results) == 2
    assert results[0][1] == pytest.approx(2 / 61)


def test_turn_documents_use_speaker_text_and_captions():
    conversation = Conversation(
        sample_id="toy",
        speaker_a="Ann",
        speaker_b="Bob",
        sessions=[
            Session(
                index=1,
                date_time="1:00 pm on 1 May, 2023",
                turns=[
                    Turn(dia_id="D1:1", speaker="Ann", text="Look!", blip_caption="a cat on a sofa", session_index=1),
                    Turn(dia_id="D1:2", speaker="Bob", text="Cute.", session_index=1),
                ],
            )
        ],
    )
    assert turn_documents(conversation) == [
        Document("D1:1", "Ann: Look! [image: a cat on a sofa]", ("D1:1",)),
        Document("D1:2", "Bob: Cute.", ("D1:2",)),
    ]
