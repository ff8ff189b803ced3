"""Chat Completions streams, decoding: :class:`StreamDecoder` (provider SSE -> events)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypeAlias

import orjson

from ...accumulate import Accumulator
from ...errors import ProtocolError, ServerError
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
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from ...messages import ThinkTagSplitter
from ...messages.thinktags import Piece
from ...types import JSONValue
from ..sse import SSEDecoder, SSEEvent
from ._common import DEFAULT_ISSUER, finish_reason, usage_from_wire
from ._messages import SYNTHETIC_REASONING, gemini_block
from .errors import stream_error

log = logging.getLogger("modelwire.codecs.chat_completions")

# reasoning_details fields that arrive in pieces and are joined (OpenRouter, Vercel);
# any other field of a later fragment completes or replaces the earlier one (the
# signature arrives whole in the last fragment, after empty ones: joining it could only
# corrupt it when a server repeats it)
_JOINED = ("text", "summary")
# item types whose text is readable reasoning (shown live, kept as reasoning_content)
_READABLE = {"reasoning.text": "text", "reasoning.summary": "summary"}
_loads = orjson.loads


_Scalar: TypeAlias = str | int | float | bool | None


def _hashable(value: object) -> _Scalar:
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


class _Call:
    __slots__ = ("held", "id", "name", "ordinal", "signature", "started")

    def __init__(self, ordinal: int) -> None:
        self.ordinal = ordinal
        self.id = ""
        self.name = ""
        self.started = False
        self.held: list[str] = []  # arguments that arrived before the name
        self.signature: Any = None  # Gemini extra_content on the call


class StreamDecoder:
    """``feed(bytes) -> events``, then ``close() -> events``.

    The stream's terminal is ``finish_reason`` or ``data: [DONE]``; usage is
    emitted once, at the end (the latest usage seen: it is cumulative).
    Reasoning blocks are emitted as soon as they are complete: when the answer
    (text, a tool call, a refusal) starts, or at the finish.
    """

    _inline_chunks = True  # False: every chunk takes the general path (tests compare both)

    def __init__(self, *, issuer: str | None = None, think_tags: bool = True) -> None:
        self.issuer = issuer or DEFAULT_ISSUER
        self.model = ""
        self.id = ""
        self.unknown_events = 0
        self._sse = SSEDecoder()
        self._out: list[StreamEvent] = []
        self._seen: list[StreamEvent] = []  # everything emitted: the partial on errors
        self._calls: list[_Call] = []
        self._by_wire: dict[int, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self._reasoning: list[str] = []
        self._details: list[tuple[str, dict[str, Any]]] = []  # (issuer, block)
        # an item's index, or ("type", its type) for items without one
        self._detail_at: dict[int | tuple[str, _Scalar], dict[str, Any]] = {}
        self._splitter: ThinkTagSplitter | None = ThinkTagSplitter() if think_tags else None
        self._usage: Mapping[str, Any] | None = None
        self._signature: Any = None  # Gemini extra_content on the message
        self._finished = False
        self._ended = False  # [DONE] seen, or an error ended the stream

    # ---------------------------------------------------------------- public
    def feed(self, data: bytes) -> list[StreamEvent]:
        self._frames(self._sse.feed(data))
        return self._drain()

    def close(self) -> list[StreamEvent]:
        self._frames(self._sse.close())
        if not self._ended:
            if not self._finished:
                if not self._seen and not self._out:
                    raise ProtocolError("stream ended without any event")
                if self._splitter is not None:  # text held for a possible tag is text so far
                    self._pieces(self._splitter.close())
                self._drain()
                raise ProtocolError("stream ended before its finish_reason (truncated)",
                                    partial=self._partial())
            self._end()
        if not self._seen and not self._out:
            raise ProtocolError("stream ended without any event")
        return self._drain()

    # -------------------------------------------------------------- internals
    def _drain(self) -> list[StreamEvent]:
        out, self._out = self._out, []
        self._seen.extend(out)
        return out

    def _partial(self) -> Any:
        acc = Accumulator(model=self.model, id=self.id)
        for event in self._seen:
            if not isinstance(event, Finish):  # a truncated stream did not finish
                acc.feed(event)
        return acc.result()

    def _frames(self, frames: list[SSEEvent]) -> None:
        """The hot loop. The two chunk shapes of nearly every stream, a piece of text
        and an argument fragment of a started call, are handled inline; any other
        chunk, or any doubt, goes to :meth:`_on_chunk` / :meth:`_on_sse`, the general
        path. The inline steps are exactly what the general path does for those
        shapes (a Hypothesis test compares both paths event by event); they exist
        because this loop runs once per streamed token."""
        out = self._out  # only _drain replaces it, and only right before raising
        on_sse, on_chunk = self._on_sse, self._on_chunk
        splitter, by_wire = self._splitter, self._by_wire
        if not self._inline_chunks:
            for sse in frames:
                on_sse(sse.event, sse.data)
            return
        stale = True  # the general path ran: re-read what the inline path depends on
        ready = direct = reasoning_open = False
        for sse in frames:
            if stale:
                stale = False
                ready = bool(self.id) and not self._ended  # id known: nothing to identify
                direct = splitter is None or self._finished  # text skips the tag splitter
                reasoning_open = bool(self._reasoning or self._details)
            data = sse.data
            if not ready or sse.event or data == "[DONE]":
                on_sse(sse.event, data)
                stale = True
                continue
            try:
                chunk = _loads(data)
            except orjson.JSONDecodeError:
                on_sse("", data)  # reports it
                stale = True
                continue
            # a chunk the general path would only read a delta from: one choice, index 0,
            # no finish_reason, no usage, no error. Reads, not type checks (fewer steps per
            # token): a chunk of any other shape fails one of them with AttributeError,
            # TypeError or KeyError before anything changed, and takes the general path.
            try:
                inline = not ("error" in chunk or "x_groq" in chunk
                              or ("usage" in chunk and chunk["usage"] is not None)) \
                    and len(choices := chunk.get("choices")) == 1 \
                    and len(delta := (choice := choices[0]).get("delta")) == 1 \
                    and not choice.get("finish_reason") and choice.get("index", 0) == 0
                text = delta.get("content") if inline else None
            except (AttributeError, TypeError, KeyError):
                inline = False
            if not inline:
                on_chunk("", chunk)
                stale = True
                continue
            if type(text) is str and text:
                if direct or splitter.feed_plain(text):  # type: ignore[union-attr]
                    if reasoning_open:
                        self._close_reasoning()
                        reasoning_open = False
                    out.append(TextDelta(text))
                else:
                    self._text(text)
                    stale = True
                continue
            try:  # an argument fragment of a started call, read the same way
                inline = len(calls := delta.get("tool_calls")) == 1 and len(tc := calls[0]) == 2 \
                    and type(wire := tc.get("index")) is int and (call := by_wire.get(wire)) is not None \
                    and call.started and len(fn := tc.get("function")) == 1 \
                    and type(args := fn.get("arguments")) is str
            except (AttributeError, TypeError, KeyError):
                inline = False
            if inline and call is not None:
                if args:  # the general path would not touch the state for it
                    out.append(ToolCallDelta(call.ordinal, args))
                continue
            on_chunk("", chunk)
            stale = True

    def _on_sse(self, event: str, data: str) -> None:
        """The general path for one SSE event."""
        if self._ended and event != "error":
            return
        if data == "[DONE]":
            if not self._finished and (self._seen or self._out):
                self._finish(None)  # [DONE] without a finish_reason: a normal end
            self._end()
            return
        try:
            chunk = _loads(data)
        except orjson.JSONDecodeError as exc:
            if not data.strip():
                if event:  # e.g. "event: ping" with no data: not ours
                    self.unknown_events += 1
                return
            if event == "error":  # an error event whose data is plain text
                self._out.append(StreamError(ServerError(data[:2000])))
                self._ended = True
                return
            self._drain()
            raise ProtocolError(f"stream chunk is not valid JSON ({exc}): {data[:120]!r}",
                                partial=self._partial()) from exc
        self._on_chunk(event, chunk)

    def _on_chunk(self, event: str, chunk: JSONValue) -> None:
        if type(chunk) is not dict:
            self._drain()
            raise ProtocolError(f"stream chunk must be a JSON object, got {type(chunk).__name__}",
                                partial=self._partial())
        if event == "error" or chunk.get("error"):
            self._out.append(StreamError(stream_error(chunk.get("error") or chunk, chunk)))
            self._ended = True  # nothing after an error is the answer
            return
        if not self.id:
            self._identify(chunk)
        choices = chunk.get("choices")
        if choices and type(choices) is list:
            choice = choices[0]
            if len(choices) > 1 or type(choice) is not dict or choice.get("index", 0) != 0:
                # n > 1 is not in the internal model: the first choice only
                choice = next((c for c in choices if type(c) is dict and c.get("index", 0) == 0), None)
            if choice is not None:
                delta = choice.get("delta")
                if delta and type(delta) is dict:
                    content = delta.get("content")
                    if len(delta) == 1 and content and type(content) is str:
                        self._text(content)  # most chunks: text only
                    else:
                        self._on_delta(delta)
                native = choice.get("finish_reason")
                if native and not self._finished:
                    self._finish(native, choice.get("stop_reason"))
        usage = chunk.get("usage")
        if usage is None and "x_groq" in chunk:
            groq = chunk["x_groq"]  # Groq puts the final usage in x_groq
            usage = groq.get("usage") if type(groq) is dict else None
        if usage and type(usage) is dict:
            self._usage = usage
        elif choices is None:
            self.unknown_events += 1
            log.debug("chat stream: ignored chunk with keys %s", sorted(chunk))

    def _identify(self, chunk: dict[str, Any]) -> None:
        if isinstance(chunk.get("id"), str):
            self.id = chunk["id"]
        if not self.model and isinstance(chunk.get("model"), str):
            self.model = chunk["model"]

    def _on_delta(self, delta: dict[str, Any]) -> None:
        out = self._out
        text = delta.get("reasoning_content")
        if not (isinstance(text, str) and text):
            text = delta.get("reasoning")
        if isinstance(text, str) and text:
            plain = True
            self._reasoning.append(text)
            out.append(ReasoningDelta(text))
        else:
            plain = False
        details = delta.get("reasoning_details")
        if details:
            # some endpoints stream reasoning only as items: their text is the reasoning
            # then (shown live); beside a plain field it is the same text, said once
            self._merge_details(details, readable=not plain)
        content = delta.get("content")
        if content:
            if isinstance(content, str):
                self._text(content)
            elif isinstance(content, list):
                self._parts(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            if self._reasoning or self._details:
                self._close_reasoning()
            out.append(RefusalDelta(refusal))
        calls = delta.get("tool_calls")
        if calls:
            self._on_calls(calls)
        notes = delta.get("annotations")  # a search model's url_citation list
        if notes and type(notes) is list:
            out += [Annotation(a) for a in notes if type(a) is dict]
        if delta.get("extra_content"):
            self._signature = delta["extra_content"]

    def _text(self, text: str) -> None:
        # the one place inline <think> tags are separated from the answer
        splitter = self._splitter
        if splitter is None or self._finished:
            if self._reasoning or self._details:
                self._close_reasoning()
            self._out.append(TextDelta(text))
            return
        pieces = splitter.feed(text)
        if len(pieces) == 1 and pieces[0][0] == "text":
            if self._reasoning or self._details:
                self._close_reasoning()
            self._out.append(TextDelta(pieces[0][1]))
        elif pieces:
            self._pieces(pieces)

    def _pieces(self, pieces: list[Piece]) -> None:
        for kind, piece in pieces:
            if kind == "text":
                if self._reasoning or self._details:
                    self._close_reasoning()
                self._out.append(TextDelta(piece))
            else:
                self._reasoning.append(piece)
                self._out.append(ReasoningDelta(piece))

    def _parts(self, parts: list[Any]) -> None:
        for part in parts:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
                self._text(part["text"])
            elif part.get("type") == "thinking":
                # Mistral Magistral streams thinking as content parts
                inner = part.get("thinking")
                pieces = [inner] if isinstance(inner, str) else [
                    p.get("text") for p in inner if isinstance(p, dict)] if isinstance(inner, list) else []
                for piece in pieces:
                    if isinstance(piece, str) and piece:
                        self._reasoning.append(piece)
                        self._out.append(ReasoningDelta(piece))

    def _merge_details(self, items: JSONValue, *, readable: bool) -> None:
        if not isinstance(items, list):
            return
        for item in items:
            if not isinstance(item, dict):
                continue
            if len(item) == 2 and "issuer" in item and isinstance(item.get("block"), dict):
                # our own {"issuer", "block"} form (a modelwire gateway): whole, never joined
                self._details.append((str(item["issuer"]), item["block"]))
                continue
            if readable:
                self._readable(item)
            self._fragment(item)

    def _readable(self, item: dict[str, Any]) -> None:
        field = _READABLE.get(item.get("type"))  # type: ignore[arg-type]
        piece = item.get(field) if field else None
        if isinstance(piece, str) and piece:
            self._reasoning.append(piece)
            self._out.append(ReasoningDelta(piece))

    def _fragment(self, item: dict[str, Any]) -> None:
        """One piece of an item: pieces with the same ``index`` are one item (OpenRouter
        streams text fragments, then one carrying the signature); text is joined, every
        other field completed or replaced by the later piece, so the item is whole."""
        index = item.get("index")
        key = index if type(index) is int else ("type", _hashable(item.get("type")))
        cur = self._detail_at.get(key)
        kind = item.get("type")
        if cur is not None and kind and cur.get("type") and kind != cur.get("type"):
            cur = None  # another kind of item at a reused index: not a piece of that one
        if cur is None:
            cur = self._detail_at[key] = dict(item)
            self._details.append((self.issuer, cur))
            return
        for k, v in item.items():
            if k in _JOINED and isinstance(v, str) and isinstance(cur.get(k), str):
                cur[k] += v
            elif v not in (None, ""):
                cur[k] = v

    def _on_calls(self, calls: JSONValue) -> None:
        if not isinstance(calls, list):
            return
        for tc in calls:
            if isinstance(tc, dict):
                self._on_call(tc)

    def _on_call(self, tc: dict[str, Any]) -> None:
        wire = tc.get("index")
        call_id = tc.get("id") if isinstance(tc.get("id"), str) and tc.get("id") else None
        fn = tc.get("function")
        if not isinstance(fn, dict):
            fn = {}
        name = fn.get("name") if isinstance(fn.get("name"), str) else ""
        args = fn.get("arguments")
        if isinstance(args, (dict, list)):
            args = orjson.dumps(args).decode()
        elif not isinstance(args, str):
            args = ""
        call: _Call | None
        if isinstance(wire, int):
            call = self._by_wire.get(wire)
            if call is not None and call_id and call.id and call_id != call.id:
                call = None  # Ollama: a new id at an index in use is a new call
        elif call_id:
            call = self._by_id.get(call_id)  # Mistral: no index; the id names the call
        else:
            call = self._calls[-1] if self._calls else None
        if call is None:
            call = _Call(len(self._calls))
            self._calls.append(call)
            if isinstance(wire, int):
                self._by_wire[wire] = call
        if call_id:
            self._by_id.setdefault(call_id, call)
            call.id = call.id or call_id
        if tc.get("extra_content"):
            call.signature = tc["extra_content"]
        if name and not call.name:
            # assigned, never appended: MiniMax via NIM resends the full name in
            # every chunk ("read_fileread_file", hermes #8259)
            call.name = name
        if not call.started:
            if not call.name:
                if args:
                    call.held.append(args)
                return
            self._start(call)
        if args:
            self._out.append(ToolCallDelta(call.ordinal, args))

    def _start(self, call: _Call) -> None:
        if self._reasoning or self._details:
            self._close_reasoning()
        call.started = True
        self._out.append(ToolCallStart(call.ordinal, call.id, call.name))
        if call.held:
            self._out.append(ToolCallDelta(call.ordinal, "".join(call.held)))
            call.held = []

    def _close_reasoning(self) -> None:
        """Reasoning is complete once the answer (text, a call, a refusal) starts:
        emit its blocks now, so an encoder that must close a thinking block
        before the text (Anthropic's signature_delta) has them in time. Reasoning
        that resumes later opens new blocks."""
        if self._details:
            for issuer, block in self._details:
                self._out.append(ReasoningBlock(issuer, block))
            self._details = []
            self._detail_at = {}
        elif self._reasoning:
            self._out.append(ReasoningBlock(self.issuer, {"type": SYNTHETIC_REASONING,
                                                          "text": "".join(self._reasoning)}))
        self._reasoning = []

    def _finish(self, native: JSONValue, matched: JSONValue = None) -> None:
        """The turn ended: flush held text, finished reasoning blocks, end every
        call (never earlier: partial JSON that parses is not a finished call)."""
        self._finished = True
        if self._splitter is not None:
            self._pieces(self._splitter.close())
        out = self._out
        self._close_reasoning()
        for call in self._calls:
            if call.signature is not None:
                out.append(ReasoningBlock(self.issuer, gemini_block(call.signature, call.id)))
        if self._signature is not None:
            out.append(ReasoningBlock(self.issuer, gemini_block(self._signature)))
        for call in self._calls:
            if not call.started:
                self._start(call)
            out.append(ToolCallEnd(call.ordinal))
        reason, native_kept = finish_reason(native, bool(self._calls))
        # vLLM and SGLang name the stop sequence that ended the text in stop_reason (a
        # token id when it was a stop token)
        out.append(Finish(reason, native_kept, matched if type(matched) is str and reason == "stop" else None))

    def _end(self) -> None:
        self._ended = True
        if self._usage is not None:
            self._out.append(UsageEvent(usage_from_wire(self._usage)))
            self._usage = None
