"""What a shipped model was fitted on, as its file records it: fits write it (`file_digest` of their
scenario files, the LoCoMo conversations the router learnt from), benchmarks read it to refuse a file a
model was fitted on, or to mark the conversations a model saw (`fitted_conversations`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pcm.config import load_calibration


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def fitted_conversations(calibration: str | Path) -> list[str]:
    """The LoCoMo conversations whose turns the router in `calibration` was fitted on (`make calibrate
    --chat`, recorded under `chat_turns`); none when the file records none or is absent. The relation
    model is fitted on `training/relation_pairs` only, so these are all a shipped model saw of LoCoMo."""
    return list((load_calibration(Path(calibration)).get("chat_turns") or {}).get("conversations") or [])
