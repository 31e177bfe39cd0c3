"""Reading a reply: its JSON objects (bare, fenced, or between prose), the first that
validates as the schema asked for, and a one-line account of what was wrong."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

Schema = TypeVar("Schema", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
MAX_JSON_CANDIDATES = 16


def json_objects(text: str):
    """The JSON objects in a reply, in order: the whole reply, fenced blocks, then every `{`
    that starts a decodable object (so prose before or after it does not matter)."""
    decoder = json.JSONDecoder()
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    seen = 0
    for source in sources:
        start = source.find("{")
        while start != -1 and seen < MAX_JSON_CANDIDATES:
            try:
                value, end = decoder.raw_decode(source, start)
            except ValueError:
                start = source.find("{", start + 1)
                continue
            seen += 1
            if isinstance(value, dict):
                yield value
            start = source.find("{", end)


def parse_reply(schema: type[Schema], text: str) -> Schema:
    """The first JSON object in `text` that validates as `schema`; ValueError naming the problem."""
    first_error: str | None = None
    for candidate in json_objects(text):
        try:
            return schema.model_validate(candidate)
        except ValidationError as error:
            first_error = first_error or short_error(error)
    raise ValueError(first_error or "no JSON object in the reply")


def short_error(error: Exception) -> str:
    """The first problem of a validation error (where: what), or the first line of another error."""
    if isinstance(error, ValidationError) and error.errors():
        detail = error.errors()[0]
        where = ".".join(str(p) for p in detail.get("loc", ())) or "reply"
        return f"{where}: {detail.get('msg', 'invalid')}"
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
