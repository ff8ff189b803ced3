"""Strict checks of answers against the official SDKs' types (the published schemas).

The SDKs' pydantic models allow unknown fields, so a field nobody documented would
pass. :func:`conform` validates strictly (no coercion: ``"1"`` is not an int) and then
walks the validated tree for fields the schema does not declare; only the paths in
``allowed`` (modelwire's documented extensions, docs/reference/wire-shapes.md) may hold
one. Paths are dotted, with ``[]`` for any list element: ``choices[].message.reasoning_content``.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from functools import cache
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter

from ..cut_points import sse_events

__all__ = ["ANTHROPIC_EXTENSIONS", "CHAT_EXTENSIONS", "RESPONSES_EXTENSIONS", "conform", "sse_events", "undeclared"]

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


def _members(type_: Any) -> dict[str, Any]:
    """A union of event types by the value of their ``type`` field (empty: not a union)."""
    if typing.get_origin(type_) is typing.Annotated:
        type_ = typing.get_args(type_)[0]
    out = {}
    for member in typing.get_args(type_) if typing.get_origin(type_) is typing.Union else ():
        field = getattr(member, "model_fields", {}).get("type")
        for tag in typing.get_args(field.annotation) if field is not None else ():
            out[tag] = member
    return out


def conform(type_: Any, obj: dict[str, Any] | bytes, allowed: Iterable[str] = ()) -> Any:
    """``obj`` validated strictly as ``type_`` (a union of event types: as the member its
    ``type`` names, so a failure names one schema); fails on any field outside the
    schema and ``allowed``. Returns the validated model."""
    raw = obj if isinstance(obj, bytes) else orjson.dumps(obj)
    members = _members(type_)
    if members:
        tag = orjson.loads(raw).get("type")
        assert tag in members, f"{tag!r} is not an event type of the schema"
        type_ = members[tag]
    model = _adapter(type_).validate_json(raw, strict=True)
    extra = sorted(set(undeclared(model)) - set(allowed))
    assert not extra, f"{getattr(type_, '__name__', type_)}: fields outside the schema: {extra}"
    return model
