"""`pcm ingest`: read a conversation file (a JSON list of {"role", "content"} messages, or a
LoCoMo conversation in either layout) and replay it into memory.

Everything is validated before anything is written, so a bad file changes nothing. Each
message has an id that is committed with the turn that stored it: its source id (its LoCoMo
dialog id, or its own "id" field) and a digest of its speaker and text, or, without a source
id, a hash of its position and contents. Re-running an ingestion, after a kill or on purpose,
skips what is stored and stores the rest, so nothing is duplicated; a message whose source id
was stored before with other text (a second export whose ids restart at 1) is stored too, and
reported (`reused_ids`), never skipped.
Every problem is a one-line ValueError. Files over MAX_FILE_BYTES are refused (split them): a
conversation is read whole into memory.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pcm.config import PCMContext
from pcm.validation import check_unicode, validate_turn

MAX_FILE_BYTES = 20 * 1024 * 1024


@dataclass
class IngestTurn:
    content: str
    speaker: str | None = None
    timestamp: str | None = None
    dialog_ids: list[str] = field(default_factory=list)
    message_id: str | None = None
    #: the id the source gave the message ("3", "D1:3"), when it gave one, and what the stored id
    #: of every message with that source id starts with (`source_ids`)
    source_id: str | None = None
    id_prefix: str | None = None


MAX_SOURCE_ID_CHARS = 200


def source_ids(source: str, source_id: str, speaker: object, content: object) -> dict[str, str]:
    """The ids of a message with an id of its own: `message_id`, its source, its id (length-prefixed,
    so no id's prefix is another's) and a digest of speaker and text; and `id_prefix`, what the
    stored id of every message with that source id starts with, whatever its text."""
    prefix = f"{source}:{len(source_id)}:{source_id}:"
    digest = hashlib.sha256(f"{speaker}\x00{content}".encode("utf-8")).hexdigest()[:16]
    return {"message_id": prefix + digest, "id_prefix": prefix, "source_id": source_id}


def _own_id(position: int, message: dict) -> str | None:
    """A message's own "id" as text (a string or a whole number), None without one; ValueError otherwise."""
    value = message.get("id")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f'message {position + 1}: "id" must be a string or a whole number, got {value!r:.60}')
    text = str(value)
    if not text.strip() or len(text) > MAX_SOURCE_ID_CHARS or any(ord(c) < 32 for c in text):
        raise ValueError(f'message {position + 1}: "id" must be 1 to {MAX_SOURCE_ID_CHARS} printable characters')
    check_unicode(text, f'message {position + 1}: "id"')
    return text


def message_hash(position: int, message: dict) -> str:
    """The id of a message without one: its position and contents, hashed."""
    fields = [
        str(position),
        str(message.get("role")),
        str(message.get("name")),
        str(message.get("timestamp")),
        str(message.get("content")),
    ]
    return "sha256:" + hashlib.sha256("\x00".join(fields).encode("utf-8")).hexdigest()[:32]


def ingest_turns(
    pcm,
    turns: list[IngestTurn],
    user_id: str,
    thread_id: str = "main",
    consolidate: bool = True,
    on_turn: Callable[[IngestTurn, dict], None] | None = None,
) -> dict:
    """Process each turn not stored yet, in order; then consolidate working memory. Returns how
    many turns each agent handled, how many were already stored, and the source ids of the
    messages stored although a message with the same id and other text was stored before."""
    agents: dict[str, int] = {}
    skipped = 0
    reused: list[str] = []
    for turn in turns:
        reuses_id = _reuses_an_id(pcm, user_id, turn)
        out = pcm.process(
            turn.content,
            user_id=user_id,
            thread_id=thread_id,
            speaker=turn.speaker,
            timestamp=turn.timestamp,
            dialog_ids=turn.dialog_ids,
            message_id=turn.message_id,
        )
        if out.get("already_stored"):
            skipped += 1
        else:
            agents[out["agent"]] = agents.get(out["agent"], 0) + 1
            if reuses_id:
                reused.append(turn.source_id)
        if on_turn is not None:
            on_turn(turn, out)
    if consolidate:
        pcm.flush(user_id, thread_id)
    return {"agents": agents, "already_stored": skipped, "reused_ids": reused}


def _reuses_an_id(pcm, user_id: str, turn: IngestTurn) -> bool:
    """Whether a message with the same source id but another speaker or text is stored."""
    if turn.id_prefix is None or not pcm.services.store.exists(user_id):
        return False
    return any(m != turn.message_id for m in pcm.memory(user_id).message_ids(turn.id_prefix))


def read_conversation(path: Path, ctx: PCMContext, conversation: str | None = None) -> list[IngestTurn]:
    """The turns of `path`, in order; ValueError with a one-line reason for any bad input."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give one JSON file (a message list or a LoCoMo conversation)")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(
                f"{path} has {size:,} bytes; pcm ingest reads files of at most {MAX_FILE_BYTES:,} "
                "bytes (split the conversation)"
            )
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ValueError(
            f"{path}: line {line} is not valid UTF-8 (byte {error.start}); save the file as UTF-8"
        ) from None
    except OSError as error:
        raise ValueError(f"{path} cannot be read: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:
        raise ValueError(f"{path} is nested too deeply to be a conversation") from None
    _check_surrogates(path, text, data)
    if _is_locomo(data):
        turns = _locomo_turns(path, conversation)
    elif isinstance(data, list) and all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in data):
        turns = [_message_turn(i, m) for i, m in enumerate(data)]
    else:
        raise ValueError(f'{path}: expected a JSON list of {{"role", "content"}} messages or a LoCoMo conversation')
    if not turns:
        raise ValueError(f"{path} holds no messages")
    for number, turn in enumerate(turns, 1):
        try:
            validate_turn(
                {
                    "user_input": turn.content,
                    "speaker": turn.speaker,
                    "timestamp": turn.timestamp,
                    "dialog_ids": turn.dialog_ids,
                },
                ctx,
            )
        except ValueError as error:
            where = f"turn {turn.dialog_ids[0]}" if turn.dialog_ids else f"message {number}"
            raise ValueError(f"{path}: {where}: {error}") from None
    return turns


def _message_turn(position: int, message: dict) -> IngestTurn:
    speaker = message.get("name") or message["role"]
    own_id = _own_id(position, message)
    ids = (
        {"message_id": message_hash(position, message)}
        if own_id is None
        else source_ids("id", own_id, speaker, message["content"])
    )
    return IngestTurn(content=message["content"], speaker=speaker, timestamp=message.get("timestamp"), **ids)


#: a JSON escape of half a UTF-16 surrogate pair that has no other half
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _check_surrogates(path: Path, text: str, data: object) -> None:
    """ValueError naming the line if the JSON decodes to text that is not valid Unicode (a lone
    surrogate escape such as "\\ud800", which no UTF-8 text can hold)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        found = _LONE_SURROGATE.search(text)
        where = f"line {text[: found.start()].count(chr(10)) + 1}: the escape {found.group()}" if found else "an escape"
        raise ValueError(
            f"{path}: {where} is half of a UTF-16 surrogate pair, not a character; "
            "fix or remove it so the file holds valid Unicode text"
        ) from None


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
        turns.extend(
            IngestTurn(
                content=t.full_text,
                speaker=t.speaker,
                timestamp=stamp,
                dialog_ids=[t.dia_id],
                **source_ids(f"locomo:{sample}", t.dia_id, t.speaker, t.full_text),
            )
            for t in session.turns
        )
    return turns
