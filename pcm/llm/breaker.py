"""When to stop calling a model: the circuit breaker (failures in a row, Retry-After) and the
history of reply validation (a model that mostly replies invalid JSON is not asked twice)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class CircuitBreaker:
    """Closed → open after `failure_threshold` failures in a row (or for a 429's Retry-After),
    → after `cooldown` seconds one trial call (half-open) → closed on success, open again on
    failure. Its own small class because it must honour Retry-After and say *when* it will
    let a call through, so that a turn can wait for it or skip within its deadline."""

    def __init__(self, failure_threshold: int = 3, cooldown: float = 30.0, clock: Callable[[], float] = time.time):
        self.failure_threshold = max(1, failure_threshold)
        self.cooldown = cooldown
        self.clock = clock
        self.failures = 0
        self.open_until = 0.0
        self._trial_running = False
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        if self.open_until > self.clock():
            return "open"
        return "half-open" if self.failures >= self.failure_threshold else "closed"

    def wait_time(self) -> float:
        """Seconds until a call may be sent (0: now). Half-open lets one trial call through."""
        with self._lock:
            now = self.clock()
            if self.open_until > now:
                return self.open_until - now
            if self.failures >= self.failure_threshold:
                if self._trial_running:
                    return self.cooldown
                self._trial_running = True
            return 0.0

    def record_success(self) -> None:
        with self._lock:
            self.failures, self.open_until, self._trial_running = 0, 0.0, False

    def record_failure(self, retry_after: float | None = None) -> None:
        with self._lock:
            self.failures += 1
            self._trial_running = False
            now = self.clock()
            if self.failures >= self.failure_threshold:
                self.open_until = max(self.open_until, now + self.cooldown)
            if retry_after is not None:
                self.open_until = max(self.open_until, now + retry_after)


class ValidationHistory:
    """Outcomes of the last replies, to stop retrying invalid replies of a model that mostly fails."""

    def __init__(self, size: int = 20):
        self.outcomes: deque[bool] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(self, valid: bool) -> None:
        with self._lock:
            self.outcomes.append(valid)

    def retry_worthwhile(self) -> bool:
        with self._lock:
            return len(self.outcomes) < 5 or sum(self.outcomes) >= len(self.outcomes) / 2
