"""Strict checks of answers against the official SDKs' types (the published schemas).

The SDKs' pydantic models allow unknown fields, so a field nobody documented would
pass. :func:`conform` validates strictly (no coercion: ``"1"`` is not an int) and then
walks the validated tree for fields the schema does not declare; only the paths in
``allowed`` (modelwire's documented extensions, docs/reference/wire-shapes.md) may hold
one. Paths are dotted, with ``[]`` for any list element: ``choices[].message.reasoning_content``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter

# modelwire's extensions: the only undeclared fields an answer may carry
CHAT_EXTENSIONS = frozenset({
    "choices[].message.reasoning_content",
    "choices[].message.reasoning_details",
    "choices[].delta.reasoning_content",
    "choices[].delta.reasoning_details",
    "choices[].delta.annotations",
})
ANTHROPIC_EXTENSIONS: frozenset[str] = frozenset()
# the live API echoes the request's `store` (recorded answers in the corpus show it);
# the SDK's Response type does not declare it
RESPONSES_EXTENSIONS = frozenset({"store", "response.store"})


@cache
def _adapter(type_: Any) -> TypeAdapter[Any]:
    return TypeAdapter(type_)


def undeclared(value: Any, path: str = "") -> list[str]:
    """The paths of every field the validated ``value`` holds that its type does not declare."""
    if isinstance(value, BaseModel):
        out = [f"{path}.{key}".lstrip(".") for key in (value.model_extra or {})]
        for name in type(value).model_fields:
            out += undeclared(getattr(value, name), f"{path}.{name}")
        return out
    if isinstance(value, (list, tuple)):
        return [p for item in value for p in undeclared(item, path + "[]")]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in undeclared(item, f"{path}.{key}")]
    return []


def conform(type_: Any, obj: dict[str, Any] | bytes, allowed: Iterable[str] = ()) -> Any:
    """``obj`` validated strictly as ``type_``; fails on any field outside the schema
    and ``allowed``. Returns the validated model."""
    raw = obj if isinstance(obj, bytes) else orjson.dumps(obj)
    model = _adapter(type_).validate_json(raw, strict=True)
    extra = sorted(set(undeclared(model)) - set(allowed))
    assert not extra, f"{getattr(type_, '__name__', type_)}: fields outside the schema: {extra}"
    return model


def sse_events(body: bytes) -> list[tuple[str | None, bytes]]:
    """``(event name, data)`` per SSE event of a whole stream body."""
    out = []
    for frame in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        name, data = None, []
        for line in frame.split(b"\n"):
            if line.startswith(b"event:"):
                name = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data.append(line[5:].strip())
        if data:
            out.append((name, b"\n".join(data)))
    return out
