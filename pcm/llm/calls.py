"""One call to a chat model: within a timeout whatever the model (`call_within`), and what a
failure says about retrying (`is_transient`, `retry_after_seconds`)."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable

#: LLM calls running at once (on worker threads, see `call_within`), abandoned ones included
MAX_CALLS_IN_FLIGHT = 32
_CALL_SLOTS = threading.BoundedSemaphore(MAX_CALLS_IN_FLIGHT)


def retry_after_seconds(error: Exception) -> float | None:
    """The Retry-After of an HTTP error (seconds form), if it has one."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def call_within(seconds: float, function: Callable, *args, **kwargs):
    """`function(*args, **kwargs)`, or TimeoutError once `seconds` have passed. It runs on a
    daemon thread (with the caller's context, for LangChain callbacks), left to finish on its
    own if it is late; at most `MAX_CALLS_IN_FLIGHT` such threads live at a time."""
    deadline, slots = time.monotonic() + seconds, _CALL_SLOTS
    if not slots.acquire(timeout=seconds):
        raise TimeoutError("too many LLM calls are still running")
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - raised again in the caller
            outcome["error"] = error
        finally:
            slots.release()
            done.set()

    try:
        threading.Thread(target=contextvars.copy_context().run, args=(run,), name="pcm-llm-call", daemon=True).start()
    except BaseException:
        slots.release()
        raise
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise TimeoutError(f"no reply within {seconds:.2f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def is_transient(error: Exception) -> bool:
    """Worth retrying: no HTTP status (timeout, connection), 408, 409, 429 or 5xx."""
    status = getattr(error, "status_code", None)
    return status is None or status in (408, 409, 429) or status >= 500
