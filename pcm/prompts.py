"""Prompts of the LLM path (the offline path needs none)."""

from __future__ import annotations

from pcm.models import RetrievedMemory


def format_memories(memories: list[RetrievedMemory]) -> str:
    if not memories:
        return "(no memories)"
    return "\n".join(f"[{m.id}] ({m.type.value}, w={m.weight:.2f}) {m.content}" for m in memories)


INTENT_SYSTEM = ("Classify the user's message into these domains: {domains}. "
                 "Give a probability for every domain; they must sum to 1.")

RELATION_SYSTEM = (
    "You maintain a long-term memory about a user. Decide how the new message relates to the memories: "
    "'consistent' if it confirms or elaborates what is remembered, 'novel' if it adds new information that "
    "contradicts nothing, 'contradiction' if it makes a remembered fact outdated or false. "
    "conflict_score is your probability of contradiction. List the ids of memories it contradicts "
    "(conflicting_ids) and the ids it supports (supported_ids); use only ids that appear in the list.")

HYPOTHESIS_SYSTEM = (
    "The user said something novel that does not contradict memory. Think briefly (monologue) about what it "
    "suggests about the user's latent goals or situation, then state ONE short, testable hypothesis about the "
    "user, and a few evidence keywords that would confirm it later.")

FACT_SYSTEM = ("Extract the atomic facts about the people in these conversation turns, each a short "
               "self-contained sentence with names and dates resolved. Skip greetings and small talk.")

RESPONSE_SYSTEM = ("You are a helpful assistant with a long-term memory of the user. Use the memories when "
                   "relevant; weights are confidences and superseded memories are outdated.\n"
                   "Memories:\n{memories}")


def relation_prompt(text: str, memories: list[RetrievedMemory]) -> str:
    return f"Memories:\n{format_memories(memories)}\n\nNew message: {text}"
