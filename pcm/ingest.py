"""`pcm ingest`: read a conversation file (a JSON list of {"role", "content"} messages, or a
LoCoMo conversation in either layout) and replay it into memory.

Everything is validated before anything is written, so a bad file changes nothing. Each
message has an id (its LoCoMo dialog id, its own "id" field, or a hash of its position and
contents) that is committed with the turn that stored it: re-running an ingestion, after a
kill or on purpose, skips what is stored and stores the rest, so nothing is duplicated.
Every problem is a one-line ValueError. Files over MAX_FILE_BYTES are refused (split them): a
conversation is read whole into memory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pcm.config import PCMContext
from pcm.nodes import validate_turn

MAX_FILE_BYTES = 20 * 1024 * 1024


@dataclass
class IngestTurn:
    content: str
    speaker: str | None = None
    timestamp: str | None = None
    dialog_ids: list[str] = field(default_factory=list)
    message_id: str | None = None


def message_hash(position: int, message: dict) -> str:
    """The id of a message without one: its position and contents, hashed."""
    fields = [str(position), str(message.get("role")), str(message.get("name")), str(message.get("timestamp")),
              str(message.get("content"))]
    return "sha256:" + hashlib.sha256("\x00".join(fields).encode("utf-8")).hexdigest()[:32]


def ingest_turns(pcm, turns: list[IngestTurn], user_id: str, thread_id: str = "main", consolidate: bool = True,
                 on_turn: Callable[[IngestTurn, dict], None] | None = None) -> dict:
    """Process each turn not stored yet, in order; then consolidate working memory. Returns how
    many turns each agent handled and how many were already stored."""
    agents: dict[str, int] = {}
    skipped = 0
    for turn in turns:
        out = pcm.process(turn.content, user_id=user_id, thread_id=thread_id, speaker=turn.speaker,
                          timestamp=turn.timestamp, dialog_ids=turn.dialog_ids, message_id=turn.message_id)
        if out.get("already_stored"):
            skipped += 1
        else:
            agents[out["agent"]] = agents.get(out["agent"], 0) + 1
        if on_turn is not None:
            on_turn(turn, out)
    if consolidate:
        pcm.flush(user_id, thread_id)
    return {"agents": agents, "already_stored": skipped}


def read_conversation(path: Path, ctx: PCMContext, conversation: str | None = None) -> list[IngestTurn]:
    """The turns of `path`, in order; ValueError with a one-line reason for any bad input."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give one JSON file (a message list or a LoCoMo conversation)")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{path} has {size:,} bytes; pcm ingest reads files of at most {MAX_FILE_BYTES:,} "
                             "bytes (split the conversation)")
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not valid UTF-8 (byte {error.start})") from None
    except OSError as error:
        raise ValueError(f"{path} cannot be read: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:
        raise ValueError(f"{path} is nested too deeply to be a conversation") from None
    if _is_locomo(data):
        turns = _locomo_turns(path, conversation)
    elif isinstance(data, list) and all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in data):
        turns = [IngestTurn(content=m["content"], speaker=m.get("name") or m["role"], timestamp=m.get("timestamp"),
                            message_id=f"id:{m['id']}" if m.get("id") is not None else message_hash(i, m))
                 for i, m in enumerate(data)]
    else:
        raise ValueError(f"{path}: expected a JSON list of {{\"role\", \"content\"}} messages or a LoCoMo conversation")
    if not turns:
        raise ValueError(f"{path} holds no messages")
    for number, turn in enumerate(turns, 1):
        try:
            validate_turn({"user_input": turn.content, "speaker": turn.speaker, "timestamp": turn.timestamp,
                           "dialog_ids": turn.dialog_ids}, ctx)
        except ValueError as error:
            where = f"turn {turn.dialog_ids[0]}" if turn.dialog_ids else f"message {number}"
            raise ValueError(f"{path}: {where}: {error}") from None
    return turns


def _is_locomo(data: object) -> bool:
    if isinstance(data, dict):
        return "speaker_a" in data or "conversation" in data
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "conversation" in data[0]


def _locomo_turns(path: Path, conversation: str | None) -> list[IngestTurn]:
    from pcm.datasets.locomo import load_locomo

    try:
        conversations = load_locomo(path)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if conversation:
        conversations = [c for c in conversations if c.sample_id == conversation]
        if not conversations:
            raise ValueError(f"{path} has no conversation {conversation!r}")
    if len(conversations) != 1:
        ids = ", ".join(c.sample_id for c in conversations)
        raise ValueError(f"{path} holds {len(conversations)} conversations ({ids}); pick one with --conversation")
    turns = []
    sample = conversations[0].sample_id
    for session in conversations[0].sessions:
        stamp = session.timestamp.isoformat() if session.timestamp else None
        turns.extend(IngestTurn(content=t.full_text, speaker=t.speaker, timestamp=stamp, dialog_ids=[t.dia_id],
                                message_id=f"locomo:{sample}:{t.dia_id}")
                     for t in session.turns)
    return turns
