"""Anthropic Messages as a gateway answers: the non-stream body and the stream.

:class:`StreamEncoder`: normalized events -> the event sequence the real API sends:
``message_start``, then per block ``content_block_start`` / ``content_block_delta``... /
``content_block_stop`` (a ``ping`` after the first block starts, as the API does),
``message_delta`` (stop_reason and cumulative usage), ``message_stop``.
:func:`encode_response`: a Completion as the non-stream body.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...blockorder import ordered_items
from ...completion import Completion
from ...events import (
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from ...types import Request
from ..sse import TEXT_MARK, split_at_text_mark
from ..stream_failure import FailureKind, failure_kind
from .response import (
    DEFAULT_ISSUER,
    THINKING_TYPES,
    native_usage,
    stop_fields,
)

__all__ = ["StreamEncoder", "encode_response"]

log = logging.getLogger("modelwire.codecs.anthropic")

_EMPTY_JSON_DELTA = {"type": "input_json_delta", "partial_json": ""}


class _HeldCall:
    __slots__ = ("ended", "id", "name", "parts")

    def __init__(self, id: str, name: str) -> None:
        self.id = id
        self.name = name
        self.parts: list[str] = []
        self.ended = False



class StreamEncoder:
    """Normalized events -> Anthropic SSE bytes, as the real API frames them."""

    def __init__(self, *, model: str, id: str | None = None, request: Request | None = None,
                 created: int | None = None) -> None:
        # ``created``: accepted as every codec's is, and ignored (no timestamp in this stream)
        self._dumps = orjson.dumps
        self.model = model
        self.id = id or "msg_modelwire"
        self._started = False
        self._pinged = False
        self._index = -1
        self._open: str | None = None  # kind of the open block
        self._open_call: int | None = None
        self._queue: dict[int, _HeldCall] = {}
        self._usage: Any = None
        self._finish: Finish | None = None
        self._closed = False
        self._frame_key: tuple[int, str] | None = None  # (block index, delta kind)
        self._frame: tuple[bytes, bytes] | None = None

    def _ev(self, name: str, payload: dict[str, Any]) -> bytes:
        # framed by hand: orjson never writes a raw newline, so one data: line is right
        return b"event: %s\ndata: %s\n\n" % (name.encode(), self._dumps(payload))

    def _text_delta(self, kind: str, text: str) -> bytes:
        """A text_delta / thinking_delta (most of a stream) from a frame rendered once
        per block around a marker: only the text is serialized per event (bytes equal
        to :meth:`_delta`'s; a test compares them)."""
        field = "text" if kind == "text_delta" else "thinking"
        if self._frame_key != (self._index, kind):  # a new block: its frame
            self._frame_key = (self._index, kind)
            self._frame = split_at_text_mark(self._delta({"type": kind, field: TEXT_MARK}))
        frame = self._frame
        if frame is None:  # cannot happen (nothing else in the event is text), but be right
            return self._delta({"type": kind, field: text})
        return frame[0] + self._dumps(text) + frame[1]

    def _start(self, usage: Any) -> bytes:
        self._started = True
        u = native_usage(usage) if usage else {"input_tokens": 0, "output_tokens": 0}
        return self._ev("message_start", {"type": "message_start", "message": {
            "id": self.id, "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": u}})

    def _open_block(self, kind: str, block: dict[str, Any], call: int | None = None) -> bytes:
        out = self._close_block()
        self._index += 1
        self._open, self._open_call = kind, call
        out += self._ev("content_block_start", {"type": "content_block_start", "index": self._index,
                                                "content_block": block})
        if not self._pinged:
            self._pinged = True
            out += self._ev("ping", {"type": "ping"})
        return out

    def _close_block(self) -> bytes:
        if self._open is None:
            return b""
        self._open = self._open_call = None
        return self._ev("content_block_stop", {"type": "content_block_stop", "index": self._index})

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return self._ev("content_block_delta", {"type": "content_block_delta", "index": self._index,
                                                "delta": delta})

    def feed(self, event: StreamEvent) -> bytes:
        if self._closed:
            return b""
        out = b""
        if not self._started:
            out = self._start(event.usage if type(event) is UsageEvent else None)  # type: ignore[union-attr]
            if type(event) is UsageEvent:
                self._usage = event.usage  # type: ignore[union-attr]
                return out
        return out + self._dispatch(event)

    def _dispatch(self, ev: StreamEvent) -> bytes:
        t = type(ev)
        if t is TextDelta or t is RefusalDelta:
            out = b"" if self._open == "text" else self._open_block("text", {"type": "text", "text": ""})
            return out + self._text_delta("text_delta", ev.text)  # type: ignore[union-attr]
        if t is ReasoningDelta:
            return self._reasoning(ev)  # type: ignore[arg-type]
        if t is ReasoningBlock:
            return self._reasoning_block(ev)  # type: ignore[arg-type]
        if t is ToolCallStart or t is ToolCallDelta or t is ToolCallEnd:
            return self._tool(ev)
        if t is StreamError:
            return self._error(ev.error)  # type: ignore[union-attr]
        out = self._flush_queue()  # anything else: calls held back are complete now
        if t is Passthrough:
            return out + self._passthrough(ev.block)  # type: ignore[union-attr]
        if t is UsageEvent:
            self._usage = ev.usage  # type: ignore[union-attr]
            return out
        if t is Finish:
            self._finish = ev  # type: ignore[assignment]
            return out + self._close_block()
        return out

    # Anthropic streams one block at a time, but other providers interleave parallel
    # calls (OpenAI: deltas for index 1 between deltas for index 0). The open call streams
    # live; a call that starts while another is open is held back and sent whole when the
    # open one ends (or before anything else), so no argument fragment is ever lost.
    def _tool(self, ev: Any) -> bytes:
        t = type(ev)
        if t is ToolCallStart:
            if self._open == "tool_use" or self._queue:
                self._queue[ev.index] = _HeldCall(ev.id, ev.name)
                return b""
            return self._open_call_block(ev.index, ev.id, ev.name)
        if t is ToolCallDelta:
            if self._open == "tool_use" and self._open_call == ev.index:
                return self._delta({"type": "input_json_delta", "partial_json": ev.arguments})
            held = self._queue.get(ev.index)
            if held is not None:
                held.parts.append(ev.arguments)
            else:
                log.warning("tool call %d argument fragment after its block closed: dropped", ev.index)
            return b""
        if self._open_call == ev.index:  # ToolCallEnd of the live call
            return self._close_block() + self._flush_queue(stop_at_live=True)
        if ev.index in self._queue:
            self._queue[ev.index].ended = True
        return b""

    def _open_call_block(self, index: int, id: str, name: str) -> bytes:
        out = self._open_block("tool_use", {"type": "tool_use", "id": id, "name": name, "input": {}}, call=index)
        return out + self._delta(_EMPTY_JSON_DELTA)  # the API opens every tool input with ""

    def _flush_queue(self, *, stop_at_live: bool = False) -> bytes:
        """Send held calls in start order; with ``stop_at_live`` the first one that has
        not ended stays open and streams live from here."""
        out = b""
        while self._queue:
            index = next(iter(self._queue))
            held = self._queue.pop(index)
            out += self._open_call_block(index, held.id, held.name)
            out += b"".join(self._delta({"type": "input_json_delta", "partial_json": p}) for p in held.parts)
            if stop_at_live and not held.ended:
                return out
            out += self._close_block()
        return out

    def _reasoning(self, ev: ReasoningDelta) -> bytes:
        out = b""
        if ev.redacted is not None:
            return self._open_block("redacted_thinking", {"type": "redacted_thinking", "data": ev.redacted})
        if self._open != "thinking":
            out = self._open_block("thinking", {"type": "thinking", "thinking": "", "signature": ""})
        if ev.text:
            out += self._text_delta("thinking_delta", ev.text)
        if ev.signature is not None:
            out += self._delta({"type": "signature_delta", "signature": ev.signature})
        return out

    def _reasoning_block(self, ev: ReasoningBlock) -> bytes:
        if self._open in ("thinking", "redacted_thinking"):
            return self._close_block()  # the deltas already carried this block
        block = ev.block
        if ev.issuer != DEFAULT_ISSUER or block.get("type") not in ("thinking", "redacted_thinking"):
            return b""  # foreign blocks never reach an Anthropic client as thinking
        out = self._reasoning(ReasoningDelta(redacted=block["data"]) if block["type"] == "redacted_thinking"
                              else ReasoningDelta(text=block.get("thinking", ""), signature=block.get("signature")))
        return out + self._close_block()

    def _passthrough(self, block: dict[str, Any]) -> bytes:
        if block.get("type") == "citations":
            if self._open != "text":
                return b""
            # citations belong to the text block they arrive in; closing it here keeps
            # them on the text they cite (the next text opens a new block, as the API does)
            out = b"".join(self._delta({"type": "citations_delta", "citation": c})
                           for c in block.get("citations") or [])
            return out + self._close_block()
        if "input" in block and block.get("type", "").endswith("tool_use"):
            # server tool calls stream their input as JSON deltas, like the API does
            out = self._open_block("server", {**block, "input": {}}) + self._delta(_EMPTY_JSON_DELTA)
            out += self._delta({"type": "input_json_delta",
                                "partial_json": self._dumps(block["input"]).decode()})
            return out + self._close_block()
        return self._open_block("server", dict(block)) + self._close_block()

    def _error(self, error: Any) -> bytes:
        """The stream failed: the error event, and nothing else. The open block stays
        open and held calls are never sent: the upstream did not finish them, and a
        ``content_block_stop`` would make a half tool call look like a whole one."""
        self._closed = True
        etype = _ERROR_TYPES.get(failure_kind(error), "api_error")
        return self._ev("error", {"type": "error", "error": {"type": etype, "message": str(error)}})

    def close(self) -> bytes:
        if self._closed:
            return b""
        out = b"" if self._started else self._start(None)
        out += self._flush_queue() + self._close_block()
        self._closed = True
        fin = self._finish
        stop, matched = stop_fields(fin.reason, fin.native, fin.stop_sequence) if fin else ("end_turn", None)
        out += self._ev("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": stop, "stop_sequence": matched},
                                          "usage": _delta_usage(self._usage)})
        return out + self._ev("message_stop", {"type": "message_stop"})


# Anthropic's error types; anything else (a cut, a 5xx) is the upstream's "api_error"
_ERROR_TYPES: dict[FailureKind, str] = {
    "rate_limit": "rate_limit_error",
    "overloaded": "overloaded_error",
    "auth": "authentication_error",
    "permission": "permission_error",
    "billing": "billing_error",
    "not_found": "not_found_error",
    "request": "invalid_request_error",
    "timeout": "timeout_error",
}

# what message_delta's usage holds (the API's MessageDeltaUsage): the counts, not the
# message's cache_creation breakdown or service_tier, which message_start carries
_DELTA_USAGE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
                "server_tool_use")


def _delta_usage(usage: Any) -> dict[str, Any]:
    if not usage:
        return {"output_tokens": 0}
    full = native_usage(usage)
    return {key: full[key] for key in _DELTA_USAGE if key in full}


def _answer_tool_use(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    try:
        args = orjson.loads(fn.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        args = {}
    return {"type": "tool_use", "id": call.get("id") or "", "name": fn.get("name") or "",
            "input": args if isinstance(args, dict) else {}}


def _answer_blocks(msg: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any], bool]:
    """The answer's blocks in the turn's order, the citations to put on its text, and
    whether any native thinking block was among them."""
    content: list[dict[str, Any]] = []
    citations: list[Any] = []
    thought = False
    for kind, item in ordered_items(msg):
        if kind == "reasoning":
            block = item.get("block") or {}
            if block.get("type") in THINKING_TYPES and item.get("issuer") == DEFAULT_ISSUER:
                content.append(block)
                thought = True
        elif kind == "passthrough":
            block = item.get("block") or {}
            if block.get("type") == "citations":
                citations.extend(block.get("citations") or [])
            elif block:
                content.append(block)
        elif kind == "text":
            text = item if isinstance(item, str) else (item.get("text", "") if item.get("type") == "text" else "")
            if text:
                content.append({"type": "text", "text": text})
        else:
            content.append(_answer_tool_use(item))
    return content, citations, thought


def encode_response(completion: Completion, request: Request | None = None, *,
                    created: int | None = None, id: str | None = None,
                    model: str | None = None) -> dict[str, Any]:
    """A Completion as Anthropic's non-stream response body, its blocks in the order the
    upstream gave them (``block_order``; by default thinking, server tools, text, tools).
    ``id`` and ``model``: the answer's own (a gateway mints one per answer and names the
    model the client asked for); by default the completion's. ``created`` is accepted as
    every codec's is, and ignored: Anthropic's message has no timestamp."""
    msg = completion.message
    content, citations, thought = _answer_blocks(msg)  # type: ignore[arg-type]
    if "block_order" not in msg:
        # the default grouping: the text parts are one text block, as before
        texts = [i for i, b in enumerate(content) if b.get("type") == "text" and set(b) == {"type", "text"}]
        if len(texts) > 1:
            joined = {"type": "text", "text": "".join(content[i]["text"] for i in texts)}
            content = [b for i, b in enumerate(content) if i not in texts[1:]]
            content[texts[0]] = joined
    if citations:
        for b in content:
            if b.get("type") == "text":
                b["citations"] = citations
                break
    if not thought and (reasoning := msg.get("reasoning_content")):
        # foreign reasoning: shown as thinking with no signature (the gateway seals it
        # where it can; an unsigned block coming back is dropped, never trusted)
        content.insert(0, {"type": "thinking", "thinking": reasoning, "signature": ""})
    stop, matched = stop_fields(completion.finish_reason, completion.native_finish_reason,
                                completion.stop_sequence)
    return {
        "id": id or completion.id or "msg_modelwire",
        "type": "message",
        "role": "assistant",
        "model": model or completion.model or (request or {}).get("model", ""),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": matched,
        "usage": native_usage(completion.usage),
    }
