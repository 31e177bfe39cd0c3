"""Loader for the LoCoMo long-term conversational memory benchmark.

Two on-disk layouts are supported:

* per-conversation files (``conv-26.json``, ...) as shipped by the authors: one
  flat object with ``speaker_a``, ``speaker_b``, ``session_N``,
  ``session_N_date_time``, ``qa``, ...; the sample id is the file stem;
* a combined file (``locomo10.json``, ``locomo7.json``): a list of
  ``{"sample_id", "conversation": {...same flat keys...}, "qa": [...], ...}``.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, Field, ValidationError

logger = logging.getLogger(__name__)

ADVERSARIAL_CATEGORY = 5
"""LoCoMo QA category whose questions are unanswerable from the conversation."""

DEFAULT_LOCOMO_PATH = Path("../shared/datasets/locomo")
"""Shared copy of the LoCoMo conversations, relative to the project root (the working directory)."""

MISSING_DATA_HINT = (
    "Get the LoCoMo release file `locomo10.json` from the snap-research/locomo GitHub "
    "repository (path `data/locomo10.json`, "
    "https://github.com/snap-research/locomo/blob/main/data/locomo10.json) "
    "and pass it with `--data /path/to/locomo10.json`."
)

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIALOG_ID = re.compile(r"D:?0*(\d+):0*(\d+)", re.IGNORECASE)
_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")
_DATE_TIME_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%I:%M %p on %d %B %Y",
    "%I:%M %p on %d %b %Y",
    "%H:%M on %d %B, %Y",
)


class Turn(BaseModel):
    """One utterance of the dialogue."""

    dia_id: str
    speaker: str
    text: str
    blip_caption: str | None = None
    session_index: int

    @property
    def full_text(self) -> str:
        """The utterance with its shared image, if any, appended as ``[image: <caption>]``."""
        if self.blip_caption:
            return f"{self.text} [image: {self.blip_caption}]".strip()
        return self.text


class Session(BaseModel):
    """A dated conversation session made of consecutive turns."""

    index: int
    date_time: str
    timestamp: datetime | None = None
    turns: list[Turn] = Field(default_factory=list)


class QAItem(BaseModel):
    """A benchmark question with its gold answer and evidence dialog ids."""

    question: str
    answer: str
    evidence: list[str] = Field(default_factory=list)
    category: int
    is_adversarial: bool = False


class Conversation(BaseModel):
    """A full LoCoMo sample: two speakers, their sessions and the questions about them."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session] = Field(default_factory=list)
    qa: list[QAItem] = Field(default_factory=list)

    @property
    def turns(self) -> list[Turn]:
        """All turns in conversation order."""
        return [turn for session in self.sessions for turn in session.turns]


def parse_session_datetime(text: str) -> datetime | None:
    """Parse a LoCoMo session stamp such as ``"1:56 pm on 8 May, 2023"``; None if unparseable."""
    cleaned = " ".join(text.split())
    for date_format in _DATE_TIME_FORMATS:
        try:
            return datetime.strptime(cleaned, date_format)
        except ValueError:
            continue
    if cleaned:
        logger.warning("Unparseable LoCoMo session date-time: %r", text)
    return None


def normalize_dialog_id(dialog_id: str) -> str:
    """Canonical ``D<session>:<turn>`` form of a dialog id (``"D:11:26"`` -> ``"D11:26"``); others unchanged."""
    stripped = dialog_id.strip()
    match = _DIALOG_ID.fullmatch(stripped)
    if match is None:
        return stripped
    return f"D{int(match.group(1))}:{int(match.group(2))}"


def normalize_evidence(raw_evidence: Iterable[str]) -> list[str]:
    """Split entries that hold several ids (``"D10:3; D10:4"``, ``"D9:1 D4:4"``), normalise each, drop duplicates.

    Ids that cannot be repaired (e.g. a bare ``"D"``) are kept as they are.
    """
    normalized: list[str] = []
    for entry in raw_evidence:
        for piece in _EVIDENCE_SEPARATORS.split(str(entry)):
            if not piece:
                continue
            dialog_id = normalize_dialog_id(piece)
            if dialog_id not in normalized:
                normalized.append(dialog_id)
    return normalized


def session_of(dialog_id: str) -> int | None:
    """Session number of a dialog id (``"D3:5"`` -> 3), or None if it is malformed."""
    match = _DIALOG_ID.fullmatch(dialog_id.strip())
    return int(match.group(1)) if match else None


def load_locomo(path: str | Path = DEFAULT_LOCOMO_PATH) -> list[Conversation]:
    """Load LoCoMo conversations from a folder or a single JSON file in either layout.

    A folder is read through its ``conv-*.json`` files, then any other ``*.json``
    file in either layout; a sample id already loaded is not loaded again, so
    per-conversation files win over a combined file holding the same samples.
    JSON files in a folder that are not LoCoMo data are skipped.

    Raises:
        FileNotFoundError: when the path does not exist or holds no LoCoMo data.
    """
    data_path = Path(path)
    if data_path.is_file():
        conversations = _conversations_from_file(data_path)
    elif data_path.is_dir():
        conversations = _conversations_from_folder(data_path)
    else:
        conversations = []
    if not conversations:
        raise FileNotFoundError(f"No LoCoMo data found at {data_path}. {MISSING_DATA_HINT}")
    logger.info(
        "Loaded %d LoCoMo conversations (%d QA items) from %s",
        len(conversations),
        sum(len(conversation.qa) for conversation in conversations),
        data_path,
    )
    return conversations


def _conversations_from_folder(folder: Path) -> list[Conversation]:
    per_conversation_files = sorted(folder.glob("conv-*.json"), key=_natural_key)
    other_files = sorted(
        (file for file in folder.glob("*.json") if file not in per_conversation_files),
        key=_natural_key,
    )
    by_sample_id: dict[str, Conversation] = {}
    for file in [*per_conversation_files, *other_files]:
        try:
            conversations = _conversations_from_file(file)
        except (ValueError, KeyError) as error:
            logger.warning("Skipping %s: %r", file, error)
            continue
        for conversation in conversations:
            if conversation.sample_id in by_sample_id:
                logger.debug("Skipping duplicate sample %s from %s", conversation.sample_id, file)
                continue
            by_sample_id[conversation.sample_id] = conversation
    return sorted(by_sample_id.values(), key=lambda conversation: _natural_key(conversation.sample_id))


def _conversations_from_file(file: Path) -> list[Conversation]:
    with file.open(encoding="utf-8") as handle:
        content = json.load(handle)
    if isinstance(content, list):
        return [_conversation_from_combined_sample(sample, file) for sample in content]
    if isinstance(content, dict) and "conversation" in content:
        return [_conversation_from_combined_sample(content, file)]
    if isinstance(content, dict) and "speaker_a" in content:
        return [_build_conversation(str(content.get("sample_id", file.stem)), content, content.get("qa", []))]
    raise ValueError(f"{file} is in neither LoCoMo layout")


def _conversation_from_combined_sample(sample: Any, file: Path) -> Conversation:
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise ValueError(f"{file} holds an entry without a 'conversation' object")
    conversation = sample["conversation"]
    sample_id = str(sample.get("sample_id", file.stem))
    return _build_conversation(sample_id, conversation, sample.get("qa", conversation.get("qa", [])))


def _build_conversation(sample_id: str, flat: dict[str, Any], raw_qa: list[dict[str, Any]]) -> Conversation:
    """One conversation; ValueError naming the conversation, session and turn (or question) of a bad entry."""
    session_numbers = sorted(
        int(match.group(1))
        for key, value in flat.items()
        if (match := _SESSION_KEY.fullmatch(key)) and isinstance(value, list)
    )
    sessions = [_build_session(sample_id, number, flat) for number in session_numbers]
    for key in ("speaker_a", "speaker_b"):
        if not isinstance(flat.get(key), str):
            raise ValueError(f"conversation {sample_id}: {key!r} is missing or not a string")
    if not isinstance(raw_qa, list):
        raise ValueError(f"conversation {sample_id}: 'qa' must be a list")
    qa = []
    for number, item in enumerate(raw_qa, 1):
        try:
            qa.append(_build_qa_item(item))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"conversation {sample_id}: question {number}: {_problem(error)}") from None
    return Conversation(
        sample_id=sample_id, speaker_a=flat["speaker_a"], speaker_b=flat["speaker_b"], sessions=sessions, qa=qa
    )


def _build_session(sample_id: str, number: int, flat: dict[str, Any]) -> Session:
    date_time = str(flat.get(f"session_{number}_date_time", ""))
    turns = []
    for index, raw_turn in enumerate(flat[f"session_{number}"], 1):
        try:
            turns.append(
                Turn(
                    dia_id=normalize_dialog_id(str(raw_turn["dia_id"])),
                    speaker=raw_turn["speaker"],
                    text=raw_turn.get("text", ""),
                    blip_caption=raw_turn.get("blip_caption") or None,
                    session_index=number,
                )
            )
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            raise ValueError(f"conversation {sample_id}: session {number}, turn {index}: {_problem(error)}") from None
    return Session(index=number, date_time=date_time, timestamp=parse_session_datetime(date_time), turns=turns)


def _problem(error: Exception) -> str:
    """What is wrong with one entry, in a few words."""
    if isinstance(error, KeyError):
        return f"missing {error.args[0]!r}"
    if isinstance(error, ValidationError):
        detail = error.errors()[0]
        return f"{'.'.join(str(p) for p in detail['loc'])}: {detail['msg']}"
    if isinstance(error, AttributeError):
        return "not a JSON object"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _build_qa_item(raw: dict[str, Any]) -> QAItem:
    category = int(raw["category"])
    is_adversarial = category == ADVERSARIAL_CATEGORY
    raw_answer = raw.get("adversarial_answer", raw.get("answer")) if is_adversarial else raw.get("answer")
    return QAItem(
        question=raw["question"],
        answer="" if raw_answer is None else str(raw_answer),
        evidence=normalize_evidence(raw.get("evidence", [])),
        category=category,
        is_adversarial=is_adversarial,
    )


def _natural_key(item: str | Path) -> tuple[Any, ...]:
    """Sort key that orders ``conv-9`` before ``conv-10``."""
    name = item.name if isinstance(item, Path) else item
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))
