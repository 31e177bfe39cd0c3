"""Token-budgeted sliding working memory, Q_t = [u_{t−k}, r_{t−k}, …, u_t].

Turns are plain dicts (they live in checkpointed graph state). Each carries its token
count, measured once when it enters. When the window is over budget, the oldest
`eviction_size` turns leave it together; they are returned, never dropped, and stay in
state until consolidated into long-term memory.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pcm.speech_acts import ends_asking

Turn = dict[str, Any]


def make_turn(role: str, content: str, count_tokens: Callable[[str], int], **extra: Any) -> Turn:
    return {"role": role, "content": content, "tokens": count_tokens(content), **extra}


def window_tokens(window: list[Turn]) -> int:
    return sum(t["tokens"] for t in window)


def push_turn(window: list[Turn], turn: Turn, budget: int, eviction_size: int) -> tuple[list[Turn], list[Turn]]:
    """Append `turn`; while over budget evict the oldest turns. Returns (window, evicted).

    The newest turn always stays, even if it alone exceeds the budget.
    """
    window = [*window, turn]
    evicted: list[Turn] = []
    while window_tokens(window) > budget and len(window) > 1:
        count = min(eviction_size, len(window) - 1)
        evicted.extend(window[:count])
        window = window[count:]
    return window, evicted


def render_window(window: list[Turn], max_turns: int | None = None) -> str:
    """The recent turns as text, for prompts and the surprise model's context."""
    turns = window[-max_turns:] if max_turns else window
    return "\n".join(f"{t.get('speaker') or t['role']}: {t['content']}" for t in turns)


def replies_to_question(window: list[Turn], speaker: str | None, timestamp: str | None, max_gap_minutes: float) -> bool:
    """Whether a turn by `speaker` at `timestamp` answers a question: the window's last turn, no
    more than `max_gap_minutes` earlier, is another party's (another speaker, or the assistant) and
    ends asking ("Which team did you sign with?")."""
    if not window:
        return False
    last = window[-1]
    asker = last.get("speaker") or last["role"]
    return (
        0.0 <= _minutes_before(timestamp, last) <= max_gap_minutes
        and asker != (speaker or "user")
        and ends_asking(last["content"])
    )


def in_dialogue(window: list[Turn], speaker: str | None, timestamp: str | None, max_gap_minutes: float) -> bool:
    """Whether a turn by `speaker` at `timestamp` belongs to a dialogue between people: another speaker
    (not the assistant) spoke in the same episode, no more than `max_gap_minutes` earlier. Someone telling
    their story to another person develops it; what a user tells the assistant is meant for the memory,
    so a change told minutes after a fact may well revise it."""
    return any(
        turn["role"] == "user"
        and (turn.get("speaker") or "user") != (speaker or "user")
        and 0.0 <= _minutes_before(timestamp, turn) <= max_gap_minutes
        for turn in window
    )


def said_in_episode(said_at: datetime | None, timestamp: str | None, max_gap_minutes: float) -> bool:
    """Whether something said at `said_at` (None: unknown) belongs to the episode of a turn at
    `timestamp`: no more than `max_gap_minutes` earlier (the rule `preceding_context` reads the window by)."""
    return said_at is not None and 0.0 <= _minutes_before(timestamp, {"timestamp": said_at}) <= max_gap_minutes


def _minutes_before(timestamp: str | None, turn: Turn) -> float:
    """How many minutes `turn` was said before `timestamp`."""
    from pcm.models import as_utc

    return (as_utc(timestamp) - as_utc(turn.get("timestamp"))).total_seconds() / 60.0


def preceding_context(window: list[Turn], timestamp: str | None, max_turns: int, max_gap_minutes: float) -> str | None:
    """The last `max_turns` turns of the window that belong to the same conversation episode as a turn at
    `timestamp` (no more than `max_gap_minutes` earlier), as "speaker: text" lines; None if there are none.

    A turn is often a reply whose subject lives in the turns before it ("That's awesome! What made you
    pick it?"); retrieval indexes it together with them.
    """
    if max_turns <= 0:
        return None
    episode = []
    for turn in reversed(window[-max_turns:]):
        if not 0.0 <= _minutes_before(timestamp, turn) <= max_gap_minutes:
            break
        episode.append(turn)
    return render_window(list(reversed(episode))) or None
