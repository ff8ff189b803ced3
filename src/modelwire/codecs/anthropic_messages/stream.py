"""Anthropic Messages stream decoding: SSE bytes -> normalized events.

One small handler per event type; per content block a slot that collects what the
block needs when it stops (thinking text and signature, server tool input, citations).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import orjson

from ...accumulate import Accumulator
from ...errors import ProtocolError
from ...events import (
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from ..sse import SSEDecoder
from .errors import error_from
from .response import (
    DEFAULT_ISSUER,
    citation_notes,
    finish_reason,
    usage_from,
)

__all__ = ["StreamDecoder"]

log = logging.getLogger("modelwire.codecs.anthropic")


class _Block:
    __slots__ = ("block", "call", "citations", "kind", "parts", "signature", "size")

    def __init__(self, kind: str, block: dict[str, Any], call: int | None) -> None:
        self.kind = kind
        self.block = block
        self.parts: list[str] = []
        self.signature: str | None = None
        self.call = call  # the tool call's ordinal for tool_use blocks
        self.citations: list[Any] = []
        self.size = 0  # a text block's text length so far (a citation spans the block)


class StreamDecoder:
    """``feed(bytes) -> list[StreamEvent]``; ``close()`` checks the stream ended properly."""

    _inline_deltas = True  # False: every event takes the general path (tests compare both)

    def __init__(self, *, issuer: str | None = None) -> None:
        self._loads = orjson.loads
        self._json_error = orjson.JSONDecodeError
        self.issuer = issuer or DEFAULT_ISSUER
        self.model = ""
        self.id = ""
        self.unknown_events = 0
        self._sse = SSEDecoder()
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self._text_done = 0  # the text length of the finished text blocks
        self._usage: dict[str, Any] = {}
        self._history: list[StreamEvent] = []
        self._seen = 0
        self._done = False

    # ----------------------------------------------------------------- public
    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self._events(self._sse.feed(chunk))

    def close(self) -> list[StreamEvent]:
        out = self._events(self._sse.close())
        if self._seen == 0:
            raise ProtocolError("Anthropic stream had no events")
        if not self._done:
            raise ProtocolError("Anthropic stream ended before message_stop (truncated)", partial=self._partial())
        return out

    # --------------------------------------------------------------- dispatch
    def _events(self, sse_events: list[Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        self._seen += len(sse_events)
        loads, json_error, handlers, blocks = self._loads, self._json_error, _HANDLERS, self._blocks
        inline = self._inline_deltas
        for sse in sse_events:
            raw = sse.data
            if not raw:
                continue
            try:
                data = loads(raw)
            except json_error as exc:
                raise ProtocolError(f"Anthropic stream event is not JSON: {raw[:80]!r}") from exc
            if type(data) is not dict:
                raise ProtocolError("Anthropic stream event is not a JSON object")
            kind = data.get("type") or sse.event
            try:
                if kind == "content_block_delta" and inline:
                    # nine events in ten: a text, thinking or tool-argument delta. The
                    # same steps as _block_delta, inline (a Hypothesis test compares
                    # both paths); anything else, or any doubt, goes to _block_delta.
                    slot = blocks.get(data.get("index", -1))  # -1: no block has it
                    delta = data.get("delta")
                    if slot is not None and type(delta) is dict:
                        dtype = delta.get("type")
                        if dtype == "text_delta":
                            text = delta.get("text")
                            if text:  # empty deltas carry nothing
                                text = text if type(text) is str else str(text)
                                slot.size += len(text)
                                out.append(TextDelta(text))
                            continue
                        if dtype == "thinking_delta":
                            text = delta.get("thinking")
                            if type(text) is not str:
                                text = str(text or "")
                            if text:
                                slot.parts.append(text)
                                out.append(ReasoningDelta(text))
                            continue
                        if dtype == "input_json_delta" and slot.call is not None:
                            frag = delta.get("partial_json")
                            if type(frag) is not str:
                                frag = str(frag or "")
                            if frag:
                                slot.parts.append(frag)
                                out.append(ToolCallDelta(slot.call, frag))
                            continue
                    self._block_delta(data, out)
                    continue
                handler = handlers.get(kind) if type(kind) is str else None
                if handler is None:
                    self.unknown_events += 1
                    log.debug("unknown Anthropic stream event %r ignored", kind)
                    continue
                handler(self, data, out)
            except (TypeError, AttributeError, KeyError, ValueError) as exc:
                # wrong JSON types inside a known event: one seam turns them into a
                # ProtocolError naming the event (never a bare TypeError)
                raise ProtocolError(f"malformed Anthropic {kind} event: {exc}", partial=self._partial(out)) from exc
        self._history.extend(out)  # folded only when a partial answer is needed
        return out

    def _partial(self, pending: list[StreamEvent] = ()) -> Any:  # type: ignore[assignment]
        acc = Accumulator(model=self.model, id=self.id, ordered=True)
        for ev in (*self._history, *pending):
            acc.feed(ev)
        return acc.result(interrupted=True)

    def _message_start(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        msg = data.get("message") or {}
        self.model = str(msg.get("model") or self.model)
        self.id = str(msg.get("id") or self.id)
        if isinstance(msg.get("usage"), dict):
            self._usage = dict(msg["usage"])
            out.append(UsageEvent(usage_from(self._usage)))

    def _block_start(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        block = data.get("content_block")
        index = data.get("index")
        if not isinstance(block, dict) or not isinstance(index, int):
            raise ProtocolError("content_block_start without a content_block and index")
        kind = str(block.get("type") or "")
        call = None
        if kind == "tool_use":
            call = self._calls
            self._calls += 1
            out.append(ToolCallStart(call, str(block.get("id") or ""), str(block.get("name") or "")))
        elif kind == "text" and block.get("text"):
            out.append(TextDelta(block["text"]))
            size = len(block["text"])
        elif kind == "thinking" and block.get("thinking"):
            out.append(ReasoningDelta(text=block["thinking"]))
        elif kind == "redacted_thinking":
            out.append(ReasoningDelta(redacted=str(block.get("data") or "")))
        slot = _Block(kind, block, call)
        if kind == "text" and block.get("text"):
            slot.size = size
        if kind == "thinking" and block.get("thinking"):
            slot.parts.append(block["thinking"])
        self._blocks[index] = slot

    def _block_delta(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        slot = self._blocks.get(data.get("index"))  # type: ignore[arg-type]
        delta = data.get("delta")
        if slot is None or not isinstance(delta, dict):
            raise ProtocolError("content_block_delta for a block that never started")
        kind = delta.get("type")
        if kind == "text_delta":
            if delta.get("text"):  # empty deltas carry nothing
                text = str(delta["text"])
                slot.size += len(text)
                out.append(TextDelta(text))
        elif kind == "input_json_delta":
            frag = str(delta.get("partial_json") or "")
            if slot.call is not None:
                if frag:
                    slot.parts.append(frag)
                    out.append(ToolCallDelta(slot.call, frag))
            else:
                slot.parts.append(frag)  # server tool input, kept for the passthrough block
        elif kind == "thinking_delta":
            text = str(delta.get("thinking") or "")
            if text:
                slot.parts.append(text)
                out.append(ReasoningDelta(text=text))
        elif kind == "signature_delta":
            slot.signature = str(delta.get("signature") or "")
            out.append(ReasoningDelta(signature=slot.signature))
        elif kind == "citations_delta":
            slot.citations.append(delta.get("citation"))
        else:
            self.unknown_events += 1
            log.debug("unknown Anthropic delta %r ignored", kind)

    def _block_stop(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        slot = self._blocks.pop(data.get("index"), None)  # type: ignore[arg-type]
        if slot is None:
            raise ProtocolError("content_block_stop for a block that never started")
        kind = slot.kind
        if kind == "tool_use":
            if not slot.parts:  # no deltas: the start's input is the whole argument object
                out.append(ToolCallDelta(slot.call, orjson.dumps(slot.block.get("input") or {}).decode()))  # type: ignore[arg-type]
            out.append(ToolCallEnd(slot.call))  # type: ignore[arg-type]
        elif kind == "thinking":
            block = {"type": "thinking", "thinking": "".join(slot.parts)}
            block["signature"] = slot.signature if slot.signature is not None else slot.block.get("signature", "")
            out.append(ReasoningBlock(self.issuer, block))
        elif kind == "redacted_thinking":
            out.append(ReasoningBlock(self.issuer, dict(slot.block)))
        elif kind == "text":
            start = self._text_done
            self._text_done += slot.size
            cites = [c for c in (slot.block.get("citations") or []) + slot.citations if c is not None]
            if cites:
                out.append(Passthrough(self.issuer, {"type": "citations", "citations": cites}))
                out += citation_notes(cites, start, self._text_done)
        else:
            block = dict(slot.block)
            if slot.parts:  # server_tool_use / mcp_tool_use: input arrived as JSON deltas
                joined = "".join(slot.parts)
                try:
                    block["input"] = self._loads(joined) if joined else block.get("input", {})
                except self._json_error as exc:
                    raise ProtocolError(f"{kind} input is not JSON") from exc
            out.append(Passthrough(self.issuer, block))

    def _message_delta(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        usage = data.get("usage")
        if isinstance(usage, dict):
            # cumulative: the latest value of each field wins, never summed
            self._usage.update({k: v for k, v in usage.items() if v is not None})
            out.append(UsageEvent(usage_from(self._usage)))
        delta = data.get("delta") or {}
        stop = delta.get("stop_reason")
        if stop:
            matched = delta.get("stop_sequence")
            out.append(Finish(finish_reason(stop), native=stop,
                              stop_sequence=matched if isinstance(matched, str) else None))

    def _message_stop(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        self._done = True

    def _error(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        err = data.get("error") or {}
        error = error_from(str(err.get("type") or ""), str(err.get("message") or ""), body=data,
                           request_id=data.get("request_id"))
        error.partial = self._partial(out)
        self._done = True  # the stream ended, by the provider's own word
        out.append(StreamError(error))


def _ignore(decoder: StreamDecoder, data: dict[str, Any], out: list[StreamEvent]) -> None:
    return None


# Plain functions, called with the decoder: a dict of bound methods on the instance
# would make every decoder a reference cycle, freed only by the cyclic GC
# (docs/performance, "Why the code is as it is").
_HANDLERS: dict[str, Callable[[StreamDecoder, dict[str, Any], list[StreamEvent]], None]] = {
    "message_start": StreamDecoder._message_start,
    "content_block_start": StreamDecoder._block_start,
    "content_block_delta": StreamDecoder._block_delta,
    "content_block_stop": StreamDecoder._block_stop,
    "message_delta": StreamDecoder._message_delta,
    "message_stop": StreamDecoder._message_stop,
    "error": StreamDecoder._error,
    "ping": _ignore,
}
