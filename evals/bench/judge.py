"""LLM-as-judge for LoCoMo answers, following the protocol of the Mem0 paper (Chhikara et al., 2025).

The judge sees the question, the gold answer and the generated answer and labels the
answer CORRECT or WRONG. As in that protocol it is generous: an answer that refers to
the same thing as the gold answer counts, however long it is, and dates count when
they name the same day or period in another format. Adversarial questions (category
5) are not judged here: they are scored on abstaining (`evals.bench.metrics.answer_scores`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel

from pcm.llm import LLMClient

JUDGE_SYSTEM = (
    "You grade answers to questions about earlier conversations between two people. You get (1) a question, "
    "(2) the gold answer, which is short and names what the question is about, and (3) a generated answer. "
    "Label the generated answer CORRECT or WRONG. Be generous: if the generated answer refers to the same "
    "thing, fact or event as the gold answer, it is CORRECT even if it is longer or worded differently. For "
    "questions about time, it is CORRECT if it names the same date or period as the gold answer, in any "
    'format ("May 7th" and "7 May" are the same), including a relative expression that resolves to it. '
    "Give one sentence of reasoning first, then the label."
)


class JudgeVerdict(BaseModel):
    EXAMPLE: ClassVar[str] = '{"reasoning": "Both name the same day.", "label": "CORRECT"}'
    MAX_TOKENS: ClassVar[int] = 96
    reasoning: str
    label: Literal["CORRECT", "WRONG"]


def judge_prompt(question: str, gold: object, generated: str) -> str:
    return f"Question: {question}\nGold answer: {gold}\nGenerated answer: {generated}"


def judge_answer(llm: LLMClient, question: str, gold: object, generated: str) -> float | None:
    """1.0 if the judge labels the answer CORRECT, 0.0 if WRONG, None if it gave no valid verdict."""
    verdict = llm.structured(JudgeVerdict, JUDGE_SYSTEM, judge_prompt(question, gold, generated))
    if verdict is None:
        return None
    return 1.0 if verdict.label == "CORRECT" else 0.0
