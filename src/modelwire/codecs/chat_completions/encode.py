"""Chat Completions as a gateway answers: :func:`encode_response` (the ``chat.completion``
body) and :class:`StreamEncoder` (events -> the SSE OpenAI sends)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from ...blockorder import joined_text_order
from ...completion import Completion
from ...events import (
    Annotation,
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageEvent,
)
from ...types import JSONValue, Request
from ..sse import TEXT_MARK, split_at_text_mark
from ..stream_failure import FailureKind, failure_kind
from ._common import MAPPING, usage_to_wire

__all__ = ["StreamEncoder", "encode_message", "encode_response", "tagged_details"]


class StreamEncoder:
    """Events -> ``chat.completion.chunk`` SSE as OpenAI sends it: role in the
    first delta, tool_calls deltas with index/id/type/function, a finish_reason
    chunk, a usage chunk with empty ``choices`` when the client asked for
    ``stream_options.include_usage`` (always when ``request`` is None), then
    ``data: [DONE]``. ``created`` comes from the caller: codecs have no clock."""

    def __init__(self, *, model: str, id: str | None = None, request: Request | None = None,
                 created: int | None = None) -> None:
        self.model = model
        self.id = id or "chatcmpl-" + hashlib.sha256(model.encode()).hexdigest()[:24]
        self.created = created or 0
        options = ((request or {}).get("metadata") or {}).get("stream_options") or {}
        self._include_usage = request is None or bool(options.get("include_usage"))
        self._started = False
        self._usage: dict[str, Any] | None = None
        self._errored = False
        self._closed = False
        # text and reasoning deltas are most of a stream: their chunk is rendered once
        # (byte-identical to dumping the whole chunk; a test compares the two)
        self._frames = {field: split_at_text_mark(self._chunk({field: TEXT_MARK}))
                        for field in ("content", "reasoning_content")}

    def _text_chunk(self, field: str, text: str) -> bytes:
        if not text:
            return b""
        frame = self._frames[field]
        return frame[0] + orjson.dumps(text) + frame[1] if frame else self._chunk({field: text})

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        obj = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
               "model": self.model,
               "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        return b"data: " + orjson.dumps(obj) + b"\n\n"

    def feed(self, event: StreamEvent) -> bytes:
        if self._errored or self._closed:
            return b""
        head = b""
        if not self._started and not isinstance(event, (UsageEvent, StreamError)):
            self._started = True
            head = self._chunk({"role": "assistant", "content": "", "refusal": None})
        return head + self._event(event)

    def _event(self, event: StreamEvent) -> bytes:
        t = type(event)
        if t is TextDelta:
            return self._text_chunk("content", event.text)  # type: ignore[union-attr]
        if t is ToolCallDelta:
            return self._chunk({"tool_calls": [{"index": event.index,  # type: ignore[union-attr]
                                                "function": {"arguments": event.arguments}}]})  # type: ignore[union-attr]
        if t is ReasoningDelta:
            return self._text_chunk("reasoning_content", event.text)  # type: ignore[union-attr]
        if t is ToolCallStart:
            call_id = event.id or self._call_id(event)  # type: ignore[union-attr,arg-type]
            return self._chunk({"tool_calls": [{
                "index": event.index, "id": call_id, "type": "function",  # type: ignore[union-attr]
                "function": {"name": event.name, "arguments": ""}}]})  # type: ignore[union-attr]
        if t is RefusalDelta:
            return self._chunk({"refusal": event.text})  # type: ignore[union-attr]
        if t is ReasoningBlock:
            # every block, ours included, in the {"issuer", "block"} form decoders keep
            return self._chunk({"reasoning_details": [{"issuer": event.issuer,  # type: ignore[union-attr]
                                                       "block": event.block}]})  # type: ignore[union-attr]
        if t is Finish:
            return self._chunk({}, event.reason)  # type: ignore[union-attr]
        if t is UsageEvent:
            self._usage = usage_to_wire(event.usage)  # type: ignore[union-attr]
            return b""
        if t is StreamError:
            self._errored = True
            return b"data: " + orjson.dumps({"error": _error_body(event.error)}) + b"\n\n"  # type: ignore[union-attr]
        if t is Annotation:
            return self._chunk({"annotations": [event.annotation]})  # type: ignore[union-attr]
        return b""  # ToolCallEnd, Passthrough: no Chat Completions wire form

    def _call_id(self, event: ToolCallStart) -> str:
        seed = f"{self.id}\0{event.index}\0{event.name}".encode()
        return "call_" + hashlib.sha256(seed).hexdigest()[:24]

    def close(self) -> bytes:
        if self._closed or self._errored:
            self._closed = True
            return b""
        self._closed = True
        out = b""
        if self._usage is not None and self._include_usage:
            obj = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                   "model": self.model, "choices": [], "usage": self._usage}
            out += b"data: " + orjson.dumps(obj) + b"\n\n"
        return out + b"data: [DONE]\n\n"


def _error_body(error: BaseException) -> dict[str, Any]:
    code = getattr(error, "code", None)
    status = getattr(error, "status", None)
    body: dict[str, Any] = {"message": str(error), "type": _ERROR_TYPES.get(failure_kind(error), "server_error"),
                            "param": None, "code": code}
    if status is not None:
        body["status_code"] = status
    return body


# OpenAI's error types; the rest (a cut, a stall, a 5xx, overloaded) are "server_error"
_ERROR_TYPES: dict[FailureKind, str] = {
    "rate_limit": "requests",  # what OpenAI sends with code rate_limit_exceeded
    "auth": "authentication_error",
    "permission": "permission_error",
    "billing": "insufficient_quota",
    "not_found": "invalid_request_error",
    "request": "invalid_request_error",
}


# ------------------------------------------------------------------------ encode
def encode_response(completion: Completion, request: Any = None, *, created: int | None = None,
                    id: str | None = None, model: str | None = None) -> dict[str, Any]:
    """The ``chat.completion`` body OpenAI would send for ``completion``.

    ``created`` (epoch seconds) comes from the caller: codecs have no clock. It
    defaults to the upstream's own ``created`` when known, else 0. ``id`` and ``model``:
    the answer's own (a gateway mints one per answer and names the model the client
    asked for); by default the completion's.
    """
    raw = completion.raw or {}
    if created is None:
        created = raw.get("created") if isinstance(raw.get("created"), int) else 0
    choice: dict[str, Any] = {
        "index": 0,
        "message": encode_message(completion.message),
        "logprobs": None,
        "finish_reason": completion.finish_reason,
    }
    return {
        "id": id or completion.id or _default_id(completion.model, completion.message),
        "object": "chat.completion",
        "created": created,
        "model": model or completion.model,
        "choices": [choice],
        "usage": usage_to_wire(completion.usage),
    }


def encode_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """Our assistant message -> the wire. ``reasoning_details`` entries go out in
    our ``{"issuer", "block"}`` form: a client that echoes them back (through
    the gateway's Chat Completions door) hands each block back with its issuer,
    so every upstream gets its own reasoning again and nobody else's."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, MAPPING) and p.get("type") == "text")
    out: dict[str, Any] = {"role": "assistant", "content": content, "refusal": message.get("refusal")}
    if isinstance(message.get("reasoning_content"), str):
        out["reasoning_content"] = message["reasoning_content"]
    details = tagged_details(message.get("reasoning_details"))
    if details:
        out["reasoning_details"] = details
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [{k: v for k, v in c.items() if k in ("id", "type", "function")} for c in calls]
    if message.get("annotations"):
        out["annotations"] = list(message["annotations"])
    order = joined_text_order(message) if "block_order" in message else None
    if order is not None:
        # modelwire's extension, like reasoning_details: a client that echoes the message
        # gives an Anthropic or Responses upstream its interleaved turn back in order
        out["block_order"] = order
    return out


def tagged_details(details: JSONValue) -> list[dict[str, Any]]:
    if not isinstance(details, list):
        return []
    return [{"issuer": d.get("issuer") or "", "block": d["block"]} for d in details
            if isinstance(d, MAPPING) and isinstance(d.get("block"), MAPPING)]


def _default_id(model: str, message: Mapping[str, Any]) -> str:
    seed = orjson.dumps({"model": model, "message": message}, default=str, option=orjson.OPT_SORT_KEYS)
    return "chatcmpl-" + hashlib.sha256(seed).hexdigest()[:24]
