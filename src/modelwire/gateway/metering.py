"""The usage of an answer the lane relayed as bytes (it never decodes them): read from
the body, or tapped from the stream's events that carry usage, in our usage's terms
(OpenAI semantics: ``prompt_tokens`` includes cache reads and writes)."""

from __future__ import annotations

from typing import Any

import orjson

from .errors import Door

__all__ = ["StreamUsage", "body_usage", "usage_of"]

_MAX_PENDING = 1 << 20  # an event longer than this carries text, not usage: not kept


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(door: Door, raw: Any) -> dict[str, int] | None:
    """Our usage from a door's own usage object (None: it has none)."""
    if not isinstance(raw, dict):
        return None
    if door == "anthropic_messages":
        read = _int(raw.get("cache_read_input_tokens"))
        write = _int(raw.get("cache_creation_input_tokens"))
        prompt = _int(raw.get("input_tokens")) + read + write
        return {"prompt_tokens": prompt, "completion_tokens": _int(raw.get("output_tokens")),
                "cache_read_tokens": read, "cache_write_tokens": write, "reasoning_tokens": 0}
    if door == "responses":
        inp, out = raw.get("input_tokens_details") or {}, raw.get("output_tokens_details") or {}
        return {"prompt_tokens": _int(raw.get("input_tokens")),
                "completion_tokens": _int(raw.get("output_tokens")),
                "cache_read_tokens": _int(inp.get("cached_tokens")) if isinstance(inp, dict) else 0,
                "cache_write_tokens": 0,
                "reasoning_tokens": _int(out.get("reasoning_tokens")) if isinstance(out, dict) else 0}
    inp, out = raw.get("prompt_tokens_details") or {}, raw.get("completion_tokens_details") or {}
    return {"prompt_tokens": _int(raw.get("prompt_tokens")),
            "completion_tokens": _int(raw.get("completion_tokens")),
            "cache_read_tokens": _int(inp.get("cached_tokens")) if isinstance(inp, dict) else 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": _int(out.get("reasoning_tokens")) if isinstance(out, dict) else 0}


def body_usage(door: Door, body: bytes) -> dict[str, int] | None:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return usage_of(door, data.get("usage")) if isinstance(data, dict) else None


class StreamUsage:
    """Fed the relayed chunks; ``usage`` is the answer's once its usage events passed.
    Anthropic sends input counts in ``message_start`` and the running output count in
    ``message_delta``; Chat Completions one final chunk with ``usage`` (when the client
    asked for it: ``stream_options.include_usage``); Responses ``response.completed``."""

    __slots__ = ("_anthropic", "_door", "_pending", "usage")

    def __init__(self, door: Door) -> None:
        self._door: Door = door
        self._pending = b""
        self._anthropic: dict[str, Any] = {}
        self.usage: dict[str, int] | None = None

    def feed(self, chunk: bytes) -> None:
        data = self._pending + chunk if self._pending else chunk
        cut = data.rfind(b"\n\n")
        if cut < 0:
            self._pending = data if len(data) <= _MAX_PENDING else b""
            return
        self._pending = data[cut + 2:] if len(data) - cut <= _MAX_PENDING else b""
        complete = data[:cut]
        if b'"usage"' not in complete:
            return
        for line in complete.split(b"\n"):
            if line.startswith(b"data:") and b'"usage"' in line:
                self._event(line[5:])

    def _event(self, payload: bytes) -> None:
        try:
            event = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return
        if not isinstance(event, dict):
            return
        if self._door == "anthropic_messages":
            raw = event.get("usage")
            if event.get("type") == "message_start" and isinstance(event.get("message"), dict):
                raw = event["message"].get("usage")
            if isinstance(raw, dict):
                self._anthropic.update({k: v for k, v in raw.items() if v is not None})
                self.usage = usage_of(self._door, self._anthropic)
        elif self._door == "responses":
            response = event.get("response")
            if isinstance(response, dict) and response.get("usage"):
                self.usage = usage_of(self._door, response["usage"])
        elif event.get("usage"):
            self.usage = usage_of(self._door, event["usage"])
