"""What the LLM cost and how it fared: `LLMUsage` counts, and the per-turn sum in graph state."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass
class LLMUsage:
    """LLM cost and health: `calls` counts every attempt sent (failed ones too); `failures`
    every failed attempt, of which `invalid` are replies that failed validation; `skipped`
    the requests not sent because the turn's deadline had passed or the circuit was open;
    `seconds` the time spent on the LLM: calls, and waits for the circuit or a retry."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0
    invalid: int = 0
    skipped: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, int | float]:
        counts = dataclasses.asdict(self)
        counts["seconds"] = round(self.seconds, 3)
        return counts

    def add(self, **counts: int) -> None:
        for name, count in counts.items():
            setattr(self, name, getattr(self, name) + count)


def add_usage(total: dict | None, usage: LLMUsage | dict | None) -> dict[str, int | float]:
    """The per-turn usage in graph state plus one step's usage."""
    extra = usage.as_dict() if isinstance(usage, LLMUsage) else (usage or {})
    summed = {k: (total or {}).get(k, 0) + extra.get(k, 0) for k in LLMUsage().as_dict()}
    summed["seconds"] = round(summed["seconds"], 3)
    return summed
