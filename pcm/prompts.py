"""Prompts of the LLM path (the offline path needs none)."""

from __future__ import annotations

import json

from pcm.models import RetrievedMemory


def format_memories(memories: list[RetrievedMemory]) -> str:
    if not memories:
        return "(no memories)"
    return "\n".join(f"[{m.id}] ({m.type.value}, w={m.weight:.2f}) {m.content}" for m in memories)


INTENT_MAX_TOKENS = 120


def intent_system(domains: list[str], topics: int) -> str:
    """The intent prompt; with `topics` > 0 the LLM may add that many topics of its own naming."""
    extra = (
        f" You may add up to {topics} specific topics of the message as extra keys (one or two "
        'lower-case words each, e.g. "job search").'
        if topics
        else ""
    )
    return (
        f"Classify the user's message into these domains: {', '.join(domains)}. Give a probability "
        f"for every domain.{extra} All probabilities sum to 1."
    )


def intent_example(domains: list[str], topics: int) -> str:
    shares = [0.6] + [0.4 / max(1, len(domains) - 1)] * (len(domains) - 1)
    example = {d: round(p * (0.7 if topics else 1.0), 3) for d, p in zip(domains, shares)}
    if topics:
        example["travel"] = 0.3
    return json.dumps({"distribution": example})


RELATION_SYSTEM = (
    "You maintain a long-term memory about a user. Decide how the new message relates to the memories: "
    "'consistent' if it confirms or elaborates what is remembered, 'novel' if it adds new information that "
    "contradicts nothing, 'contradiction' if it makes a remembered fact outdated or false. "
    "conflict_score is your probability of contradiction. List the ids of memories it contradicts "
    "(conflicting_ids) and the ids it supports (supported_ids); use only ids that appear in the list."
)

HYPOTHESIS_SYSTEM = (
    "The user said something novel that does not contradict memory. Think briefly (monologue) about what it "
    "suggests about the user's latent goals or situation, then state ONE short, testable hypothesis about the "
    "user, and a few evidence keywords that would confirm it later."
)

FACT_SYSTEM = (
    "Extract the atomic facts about the people in these numbered conversation turns, each a short "
    "self-contained sentence with names and dates resolved, with the number of the turn it comes "
    "from. Skip greetings and small talk; no facts is a valid answer."
)

RESPONSE_SYSTEM = (
    "You are a helpful assistant with a long-term memory of the user. Use the memories when "
    "relevant; weights are confidences and superseded memories are outdated.\n"
    "Memories:\n{memories}"
)


def relation_prompt(text: str, memories: list[RetrievedMemory]) -> str:
    return f"Memories:\n{format_memories(memories)}\n\nNew message: {text}"


def turns_prompt(turns: list[dict]) -> str:
    """Numbered turns (1, 2, ...) with speaker and date, for batched fact extraction."""
    lines = []
    for number, turn in enumerate(turns, 1):
        when = f" [{turn['timestamp'][:10]}]" if turn.get("timestamp") else ""
        lines.append(f"{number}.{when} {turn.get('speaker') or turn['role']}: {turn['content']}")
    return "\n".join(lines)
