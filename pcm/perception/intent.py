"""Intent router: P(I | u) over the configured domains.

Offline: cosine similarity of the input to a description of each domain, softmax with
a temperature. With an LLM configured, the LLM is asked about the turns this router is
unsure of (`classify_intent`), and may name topics beyond the fixed domains (the
processing flow's dynamic topics, v1.2): they become extra keys of the distribution, and
so of the domain distribution of the memories the turn writes. Custom domains without a
description are described by their name.
"""

from __future__ import annotations

import re

import numpy as np

from pcm.config import PCMContext
from pcm.formulas import softmax
from pcm.llm import IntentJudgement, LLMClient
from pcm.models import Intent
from pcm.prompts import INTENT_MAX_TOKENS, intent_example, intent_system
from pcm.world.embeddings import Embedder

_TOPIC = re.compile(r"[^\W_][\w &/+'-]{0,31}")

DOMAIN_DESCRIPTIONS: dict[str, list[str]] = {
    "Coding": [
        "programming, writing code, software development, debugging errors",
        "frameworks, libraries, APIs, databases, backend and frontend engineering",
        "写代码，编程，软件开发，调试，框架，接口",
    ],
    "Academic": [
        "studying, research, university, thesis, papers, exams and courses",
        "learning a scientific subject, a PhD, an advisor, a conference publication",
        "学习，科研，论文，考试，导师，研究方向",
    ],
    "Personal": [
        "family, relationships, partner, friends, health, home and feelings",
        "where I live, my children, my body, my diet, personal life events",
        "家人，恋爱，朋友，健康，生活，感情，住在哪里",
    ],
    "Casual": [
        "hobbies, games, movies, music, food, travel, small talk and weather",
        "weekend fun, sports for fun, recommendations, chatting",
        "爱好，电影，音乐，美食，旅行，闲聊，天气，运动",
    ],
    "Professional": [
        "job, career, employer, company, colleagues, manager, salary and work projects",
        "changing jobs, promotion, business, clients, the office, profession",
        "工作，职业，公司，同事，老板，工资，跳槽，升职",
    ],
}


class IntentRouter:
    def __init__(
        self,
        embedder: Embedder,
        domains: list[str],
        temperature: float = 0.05,
        descriptions: dict[str, list[str]] | None = None,
    ):
        self.embedder = embedder
        self.domains = list(domains)
        self.temperature = temperature
        descriptions = descriptions or DOMAIN_DESCRIPTIONS
        centroids = []
        for domain in self.domains:
            vectors = embedder.encode(descriptions.get(domain, [domain]))
            centroid = vectors.mean(axis=0)
            centroids.append(centroid / np.linalg.norm(centroid))
        self.centroids = np.stack(centroids)

    def classify(self, text: str, recent: list[str] | None = None) -> Intent:
        """Intent of `text`, leaning slightly on the recent turns (P(I | u, Q)).

        The recent turns enter as the mean of their own embeddings, which the embedder
        has cached since their turn, so the context costs no extra model pass.
        """
        vector = self.embedder.encode_one(text)
        if recent:
            context = self.embedder.encode(recent).mean(axis=0)
            vector = 0.8 * vector + 0.2 * context / max(float(np.linalg.norm(context)), 1e-9)
            vector = vector / np.linalg.norm(vector)
        probabilities = softmax((self.centroids @ vector).tolist(), self.temperature)
        return make_intent(dict(zip(self.domains, probabilities)))


def make_intent(distribution: dict[str, float]) -> Intent:
    """An Intent from any non-negative scores: normalised to sum to 1, label = most likely."""
    total = sum(max(0.0, v) for v in distribution.values())
    if total <= 0:
        raise ValueError("an intent distribution needs a positive total")
    normalised = {k: max(0.0, v) / total for k, v in distribution.items()}
    label = max(normalised, key=normalised.get)
    return Intent(label=label, confidence=normalised[label], distribution=normalised)


def with_topics(distribution: dict[str, float], domains: list[str], max_topics: int) -> dict[str, float]:
    """An LLM's distribution over the configured domains, plus at most `max_topics` topics
    of its own naming (lower-cased, most probable first). A key that names a domain in
    another case is that domain; every domain stays a key, topics or not."""
    by_name = {d.lower(): d for d in domains}
    merged = {d: 0.0 for d in domains}
    topics: dict[str, float] = {}
    for key, probability in distribution.items():
        name = " ".join(key.split())
        if name.lower() in by_name:
            merged[by_name[name.lower()]] += probability
        elif _TOPIC.fullmatch(name):
            topics[name.lower()] = topics.get(name.lower(), 0.0) + probability
    kept = sorted(topics.items(), key=lambda item: -item[1])[:max_topics]
    return {**merged, **dict(kept)}


def classify_intent(
    text: str, recent: list[str], router: IntentRouter, ctx: PCMContext, llm: LLMClient | None
) -> Intent:
    """P(I | u): the offline router, or for turns it is unsure of (top probability below
    `llm_intent_confidence`) the LLM, which may add topics. The router is the fallback."""
    offline = router.classify(text, recent)
    if llm is None or offline.confidence >= ctx.llm_intent_confidence:
        return offline
    judged = llm.structured(
        IntentJudgement,
        intent_system(ctx.domains, ctx.llm_topics),
        text,
        example=intent_example(ctx.domains, ctx.llm_topics),
        max_tokens=INTENT_MAX_TOKENS,
    )
    if judged is None:
        return offline
    distribution = with_topics(judged.distribution, ctx.domains, ctx.llm_topics)
    return make_intent(distribution) if sum(distribution.values()) > 0 else offline
