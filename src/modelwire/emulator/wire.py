"""Shared wire vocabulary of the emulator: protocol names, API errors, ids, JSON.

:class:`ApiError` is raised by rule checks and rendered in the protocol's own error
shape: Anthropic ``{"type": "error", "error": {"type", "message"}, "request_id"}``,
OpenAI ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import orjson

from ..types import JSONValue

__all__ = [
    "ApiError",
    "Endpoint",
    "Protocol",
    "dumps",
    "error_body",
    "new_id",
    "protocol_of",
    "tokens",
]

Endpoint: TypeAlias = Literal[
    "chat_completions", "messages", "count_tokens", "responses", "models", "oauth", "control"
]
Protocol: TypeAlias = Literal["anthropic", "openai"]

_counter = itertools.count(1)


def protocol_of(endpoint: str) -> Protocol:
    return "anthropic" if endpoint in ("messages", "count_tokens") else "openai"


def new_id(prefix: str, length: int = 24) -> str:
    """A unique, realistic-looking id (``msg_01...``, ``chatcmpl-...``, ``call_...``)."""
    seed = f"{prefix}{next(_counter)}".encode()
    return prefix + hashlib.sha256(seed + id(seed).to_bytes(8, "little")).hexdigest()[:length]


def dumps(obj: JSONValue) -> bytes:
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        # orjson refuses integers past 64 bits and lone surrogates, which callers can send
        return json.dumps(obj).encode()


def tokens(chars: int) -> int:
    """The documented token estimate: characters / 4, rounded up."""
    return math.ceil(chars / 4) if chars > 0 else 0


@dataclass
class ApiError(Exception):
    """A provider error answer. ``etype`` is Anthropic's error type or OpenAI's ``type``."""

    status: int
    message: str
    etype: str = "invalid_request_error"
    code: str | None = None
    param: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # a verbatim body (script mode, provider-specific shapes) wins

    def __str__(self) -> str:
        return f"{self.status} {self.etype}: {self.message}"


def error_body(err: ApiError, protocol: Protocol, request_id: str) -> Any:
    if err.body is not None:
        return err.body
    if protocol == "anthropic":
        return {
            "type": "error",
            "error": {"type": err.etype, "message": err.message},
            "request_id": request_id,
        }
    return {
        "error": {
            "message": err.message,
            "type": err.etype,
            "param": err.param,
            "code": err.code,
        }
    }


@dataclass(frozen=True, slots=True)
class TokenCount:
    """Usage of one answer, from the documented formula (see :func:`tokens`).

    ``input`` counts every prompt token (cached ones included); ``cache_read`` and
    ``cache_write`` split out the prefix marked with ``cache_control``: written the
    first time this process sees that prefix, read afterwards.
    """

    input: int
    output: int
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True, slots=True)
class RenderContext:
    usage: TokenCount
    created: int
    signer: Any  # signing.Signer
    emits_reasoning_content: bool = True
    interleaved: bool = False  # Anthropic: thinking before each tool call, not only the first


def chunks(text: str, size: int = 12) -> list[str]:
    """Split ``text`` into small pieces, as providers stream (a few words each)."""
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + 1, end + 1)
            if space > start:
                end = space
        out.append(text[start:end])
        start = end
    return out
