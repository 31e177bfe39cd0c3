"""Every check of what a caller sends, in one place: a turn's input (all of it is checked on the
graph's entry edge before anything changes), a search query, a user id.

Each problem is a ValueError that names the field and says why. Text must be valid Unicode
with at least one visible character and no NUL; a turn's time must lie between
`EARLIEST_TURN_TIME` and this machine's clock plus `clock_skew_hours`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

from langchain_core.messages import HumanMessage

from pcm.config import PCMContext
from pcm.formulas import LEVELS
from pcm.models import as_utc, utcnow

MAX_USER_ID_CHARS = 256
MAX_SPEAKER_CHARS = 200
MAX_NOTE_CHARS = 2000
MAX_IDS = 100
MAX_ID_CHARS = 200


def input_text(state: Mapping) -> object:
    """The user's words: `user_input`, else the last human message (for parent agents)."""
    text = state.get("user_input")
    if text is None:
        humans = [m for m in state.get("messages") or [] if isinstance(m, HumanMessage)]
        text = humans[-1].content if humans else ""
    return text


#: characters that Unicode counts as letters but that render as blank (Hangul fillers, braille blank)
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def is_visible(character: str) -> bool:
    """Whether a character shows on screen: not a space, control, format (zero-width), surrogate,
    private-use or unassigned code point, nor a blank letter."""
    return unicodedata.category(character)[0] not in "ZC" and character not in BLANK_LETTERS


def validate_input(text: object, ctx: PCMContext) -> str:
    """Reject what must not reach memory, with a message that says why."""
    if not isinstance(text, str):
        raise ValueError("user_input must be a string")
    if not text.strip():
        raise ValueError("user_input is empty")
    if not any(is_visible(c) for c in text):
        raise ValueError(
            "user_input is empty: it holds no visible character (only spaces, zero-width or control characters)"
        )
    if len(text) > ctx.max_input_chars:
        raise ValueError(f"user_input has {len(text)} characters; the limit is {ctx.max_input_chars} (max_input_chars)")
    if "\x00" in text:
        raise ValueError("user_input contains a NUL character")
    return check_unicode(text, "user_input")


def _optional_text(value: object, name: str, max_chars: int) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string or null, got {type(value).__name__}")
    if len(value) > max_chars:
        raise ValueError(f"{name} has {len(value)} characters; at most {max_chars}")
    if any(ord(c) < 32 and c not in "\t\n" for c in value):
        raise ValueError(f"{name} must not contain control characters")
    check_unicode(value, name)


def _id_list(value: object, name: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list of strings, got {type(value).__name__}")
    if len(value) > MAX_IDS:
        raise ValueError(f"{name} has {len(value)} entries; at most {MAX_IDS}")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{name} must hold non-empty strings, got {item!r}")
        _optional_text(item, name, MAX_ID_CHARS)


def validate_turn(state: Mapping, ctx: PCMContext) -> str:
    """Check every field of one turn's input before anything changes; ValueError naming the
    field. Returns the text. (`target_ids` are checked against memory by `check_targets`.)"""
    text = validate_input(input_text(state), ctx)
    if state.get("user_id") is not None:
        validate_user_id(state["user_id"])
    _optional_text(state.get("speaker"), "speaker", MAX_SPEAKER_CHARS)
    timestamp = state.get("timestamp")
    if timestamp is not None:
        if not isinstance(timestamp, str):
            raise ValueError(f"timestamp must be an ISO 8601 string, got {type(timestamp).__name__}")
        turn_time(timestamp, ctx.clock_skew_hours)
    _id_list(state.get("dialog_ids"), "dialog_ids")
    force_level = state.get("force_level")
    if force_level is not None and force_level not in LEVELS:
        raise ValueError(f"force_level must be one of {', '.join(LEVELS)} or null, got {force_level!r}")
    _id_list(state.get("target_ids"), "target_ids")
    if state.get("target_ids") and force_level != "high":
        raise ValueError("target_ids name memories to correct; they need force_level 'high'")
    _optional_text(state.get("note"), "note", MAX_NOTE_CHARS)
    _optional_text(state.get("message_id"), "message_id", MAX_ID_CHARS)
    return text


def check_targets(target_ids: list[str] | None, user_id: str, store) -> None:
    """ValueError unless every id in `target_ids` is a memory of `user_id` in `store` (a MemoryStore)."""
    if not target_ids:
        return
    if not store.exists(user_id):
        raise ValueError(f"target_ids: user {user_id!r} has no memory yet")
    graph = store.open(user_id)
    missing = [i for i in target_ids if i not in graph]
    if missing:
        raise ValueError(f"target_ids name no memory of this user: {', '.join(missing[:5])}")


class AlreadyStored(Exception):
    """The turn's `message_id` is stored already, so the turn is not run again (idempotent ingestion)."""


def admit_turn(state: Mapping, user_id: str, store, ctx: PCMContext) -> str:
    """Everything a turn must pass before it may change anything: its fields (`validate_turn`),
    the memories `target_ids` names (`check_targets`), and a `message_id` not stored yet
    (`AlreadyStored`). Returns the text."""
    text = validate_turn(state, ctx)
    check_targets(state.get("target_ids"), user_id, store)
    message_id = state.get("message_id")
    if message_id and store.exists(user_id) and store.open(user_id).has_message(message_id):
        raise AlreadyStored(message_id)
    return text


def validate_user_id(user_id: object) -> str:
    """`user_id`, or ValueError: a non-empty string of at most MAX_USER_ID_CHARS, no control character."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError("user_id must be a non-empty string")
    if len(user_id) > MAX_USER_ID_CHARS:
        raise ValueError(f"user_id is longer than {MAX_USER_ID_CHARS} characters")
    if any(ord(c) < 32 for c in user_id):
        raise ValueError("user_id must not contain control characters")
    if not user_id.isascii() and any(0xD800 <= ord(c) <= 0xDFFF for c in user_id):
        raise ValueError("user_id contains a lone surrogate; it is not valid Unicode text")
    return user_id


def check_unicode(value: str, name: str) -> str:
    """ValueError if `value` holds a lone surrogate (e.g. undecodable bytes read with surrogateescape)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{name} contains a lone surrogate at position {error.start}; it is not valid Unicode text"
        ) from None
    return value


#: the earliest time a turn may carry: an older date is a typing error, not a conversation
EARLIEST_TURN_TIME = datetime(1900, 1, 1, tzinfo=timezone.utc)


def turn_time(moment: datetime | str | None, clock_skew_hours: float, field: str = "timestamp") -> datetime:
    """A turn's time (None: now), which may lie neither before `EARLIEST_TURN_TIME` nor further
    ahead of this machine's clock than `clock_skew_hours`: a turn dated in 9999 would make every
    unconfirmed hypothesis of its user decay to nothing. ValueError naming `field` otherwise."""
    parsed = as_utc(moment, field)
    latest = utcnow() + timedelta(hours=clock_skew_hours)
    if parsed < EARLIEST_TURN_TIME:
        raise ValueError(
            f"{field} {parsed.isoformat()} is before {EARLIEST_TURN_TIME.date()}, the earliest a turn may carry"
        )
    if parsed > latest:
        raise ValueError(
            f"{field} {parsed.isoformat()} is ahead of this server's clock by more than "
            f"{clock_skew_hours:g} hours (clock_skew_hours)"
        )
    return parsed
