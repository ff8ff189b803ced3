"""Responses API streams, both directions, sans-IO.

:class:`StreamDecoder` turns ``/responses`` SSE into normalized events.
Quirks it absorbs, each seen in real traffic:

* tool-call arguments arrive as ``function_call_arguments.delta`` keyed by
  ``output_index``/``item_id`` (never trusted to carry the call id: LiteLLM lost
  ~90% of id-less deltas, litellm#20711); a ``.done`` with no deltas before it
  still yields the arguments (Codex, litellm#27144); a call is final only at its
  ``output_item.done`` or the response's end, never because its JSON parses;
* OpenRouter sends no ``event:`` lines, ``: OPENROUTER PROCESSING`` comments, a
  ``[DONE]`` sentinel, and finishes a reasoning item *after* the message item;
  its ``rs_tmp_`` ids change between the stream and ``response.completed``;
* DeepSeek and OpenRouter stream raw chain of thought as ``reasoning_text``
  events; OpenAI streams ``reasoning_summary_text``; both are reasoning text;
* the reasoning item's ``encrypted_content`` is final only in
  ``output_item.done`` (the SDK docs: the ``added`` copy may be incomplete);
* OpenAI nests a mid-stream ``error`` event's fields under ``error`` while the
  reference documents them flat (openai-dotnet#881): both shapes are read.

:class:`StreamEncoder` writes the event sequence the official SDK's
``responses.stream()`` accumulator checks: ``response.created`` first, one
``response.id`` throughout, every content event after its item's
``output_item.added``, ``added`` and ``done`` of an item with the same id.
"""

from __future__ import annotations

import logging
from typing import Any

from ..accumulate import Accumulator
from ..completion import Completion
from ..errors import ModelwireError, ProtocolError, ProviderError
from ..events import (
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
from ..types import Request, Usage
from ._responses_request import reasoning_texts
from ._responses_response import (
    DEFAULT_ISSUER,
    REASONING_SEPARATOR,
    error_from_payload,
    finish_of,
    function_call_item,
    message_item,
    mint_id,
    output_events,
    output_text_part,
    response_object,
    usage_in,
    usage_out,
)
from ._sse import SSEDecoder, SSEEvent, encode_event

__all__ = ["StreamDecoder", "StreamEncoder"]

log = logging.getLogger("modelwire.codecs.responses")

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})
# known events that carry nothing the normalized stream needs (their content
# arrives again, complete, in a later event we do read)
_QUIET = frozenset({
    "response.queued", "response.content_part.added", "response.content_part.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done", "response.reasoning_text.done", "response.refusal.done",
    "response.output_text.annotation.added",
})
# progress events of hosted tools: their items arrive in output_item.done
_QUIET_PREFIXES = (
    "response.web_search_call.", "response.file_search_call.", "response.code_interpreter_call",
    "response.image_generation_call.", "response.mcp_", "response.custom_tool_call_input.",
    "response.audio.", "response.shell_call", "response.compaction.",
)


class _Call:
    __slots__ = ("index", "emitted")

    def __init__(self, index: int) -> None:
        self.index = index
        self.emitted: list[str] = []  # argument fragments already passed on


class StreamDecoder:
    """``feed(bytes) -> list[StreamEvent]``, ``close() -> list[StreamEvent]``."""

    def __init__(self, *, issuer: str | None = None) -> None:
        self.issuer = issuer or DEFAULT_ISSUER
        self.model: str = ""
        self.id: str = ""
        self.unknown_events = 0
        self._sse = SSEDecoder()
        self._acc = Accumulator()
        self._events = 0  # SSE events seen
        self._done = False
        self._calls: dict[Any, _Call] = {}  # by output_index (and item_id)
        self._n_calls = 0
        self._texts: set[tuple[Any, Any]] = set()  # (item_id, content_index) that streamed text
        self._reasoning_key: tuple[Any, ...] | None = None
        self._reasoning_any = False
        self._reasoning_items: set[Any] = set()  # item ids whose text was streamed
        self._items = 0  # output items seen finished

    # ------------------------------------------------------------------ public
    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self._handle_all(self._sse.feed(chunk))

    def close(self) -> list[StreamEvent]:
        out = self._handle_all(self._sse.close())
        if self._events == 0:
            raise ProtocolError("the stream ended without any event", partial=self.partial())
        if not self._done:
            raise ProtocolError(
                "the stream ended before response.completed (truncated)", partial=self.partial()
            )
        return out

    def partial(self) -> Completion:
        """What arrived so far, with unfinished tool calls left out."""
        self._acc.model, self._acc.id = self.model, self.id
        return self._acc.result(interrupted=not self._done)

    # ----------------------------------------------------------------- dispatch
    def _handle_all(self, sse_events: list[SSEEvent]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for sse in sse_events:
            if sse.data == "[DONE]":  # OpenRouter's Chat Completions habit
                continue
            self._events += 1
            if self._done:
                continue  # nothing after the terminal event counts
            data = self._json(sse)
            kind = data.get("type") or sse.event
            produced: list[StreamEvent] = []
            try:
                self._handle(str(kind), data, produced)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                raise ProtocolError(f"malformed {kind!r} event: {exc!r}", partial=self.partial()) from exc
            for event in produced:
                self._acc.feed(event)
            out.extend(produced)
        return out

    def _json(self, sse: SSEEvent) -> dict[str, Any]:
        import orjson

        try:
            data = orjson.loads(sse.data)
        except orjson.JSONDecodeError as exc:
            raise ProtocolError(f"event {sse.event or 'message'!r} has invalid JSON: {exc}",
                                partial=self.partial()) from exc
        if not isinstance(data, dict):
            raise ProtocolError("an event's data must be a JSON object", partial=self.partial())
        return data

    def _handle(self, kind: str, data: dict[str, Any], out: list[StreamEvent]) -> None:
        if kind == "response.output_text.delta":
            self._texts.add((data.get("item_id"), data.get("content_index")))
            if data["delta"]:
                out.append(TextDelta(_str(data["delta"])))
        elif kind == "response.function_call_arguments.delta":
            call = self._call_for(data)
            if call is not None and data["delta"]:
                call.emitted.append(_str(data["delta"]))
                out.append(ToolCallDelta(call.index, data["delta"]))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._reasoning(kind, data, data["delta"], out)
        elif kind == "response.refusal.delta":
            self._texts.add((data.get("item_id"), data.get("content_index")))
            out.append(RefusalDelta(_str(data["delta"])))
        elif kind == "response.output_text.done":
            key = (data.get("item_id"), data.get("content_index"))
            if key not in self._texts and data.get("text"):  # a .done with no deltas
                self._texts.add(key)
                out.append(TextDelta(_str(data["text"])))
        elif kind == "response.function_call_arguments.done":
            call = self._call_for(data)
            if call is not None:
                self._finish_arguments(call, data.get("arguments"), out)
        elif kind == "response.output_item.added":
            self._item_added(data["item"], data.get("output_index"), out)
        elif kind == "response.output_item.done":
            self._item_done(data["item"], data.get("output_index"), out)
        elif kind in ("response.created", "response.in_progress"):
            self._lifecycle(data.get("response") or {})
        elif kind in ("response.completed", "response.incomplete"):
            self._finish(data.get("response") or {}, out)
        elif kind == "response.failed":
            response = data.get("response") or {}
            self._lifecycle(response)
            self._done = True
            out.append(StreamError(self._attach(error_from_payload(response.get("error") or {}, body=data))))
        elif kind == "error":
            self._done = True
            out.append(StreamError(self._attach(_error_event(data))))
        elif kind in _QUIET or kind.startswith(_QUIET_PREFIXES):
            pass
        else:
            self.unknown_events += 1
            log.debug("responses stream: ignoring unknown event %r", kind)

    # ----------------------------------------------------------------- handlers
    def _lifecycle(self, response: dict[str, Any]) -> None:
        self.id = response.get("id") or self.id
        self.model = response.get("model") or self.model

    def _reasoning(self, kind: str, data: dict[str, Any], delta: Any, out: list[StreamEvent]) -> None:
        text = _str(delta)
        if not text:
            return
        key = (data.get("item_id"), kind, data.get("summary_index", data.get("content_index")))
        if key != self._reasoning_key:
            if self._reasoning_any:
                text = REASONING_SEPARATOR + text  # a new summary part / item: keep them apart
            self._reasoning_key = key
        self._reasoning_any = True
        self._reasoning_items.add(data.get("item_id"))
        out.append(ReasoningDelta(text))

    def _call_for(self, data: dict[str, Any]) -> _Call | None:
        call = self._calls.get(("out", data.get("output_index")))
        if call is None:
            call = self._calls.get(("item", data.get("item_id")))
        return call

    def _item_added(self, item: dict[str, Any], output_index: Any, out: list[StreamEvent]) -> None:
        if item.get("type") != "function_call":
            return
        call = _Call(self._n_calls)
        self._n_calls += 1
        self._calls[("out", output_index)] = call
        if item.get("id"):
            self._calls[("item", item["id"])] = call
        out.append(ToolCallStart(call.index, _str(item.get("call_id") or ""), _str(item.get("name") or "")))
        if item.get("arguments"):  # some servers put (the start of) the arguments here
            call.emitted.append(_str(item["arguments"]))
            out.append(ToolCallDelta(call.index, item["arguments"]))

    def _finish_arguments(self, call: _Call, arguments: Any, out: list[StreamEvent]) -> None:
        if not isinstance(arguments, str):
            return
        sent = "".join(call.emitted)
        if arguments.startswith(sent) and len(arguments) > len(sent):
            rest = arguments[len(sent):]  # the part the deltas did not carry (all of it, if none)
            call.emitted.append(rest)
            out.append(ToolCallDelta(call.index, rest))

    def _item_done(self, item: dict[str, Any], output_index: Any, out: list[StreamEvent]) -> None:
        self._items += 1
        kind = item.get("type")
        if kind == "function_call":
            call = self._calls.get(("out", output_index)) or self._calls.get(("item", item.get("id")))
            if call is None:  # done without added: start it now
                self._item_added(item, output_index, out)
                call = self._calls[("out", output_index)]
            else:
                self._finish_arguments(call, item.get("arguments"), out)
            out.append(ToolCallEnd(call.index))
        elif kind == "message":
            for n, part in enumerate(item.get("content") or ()):
                key = (item.get("id"), n)
                if key in self._texts or not isinstance(part, dict):
                    continue
                self._texts.add(key)
                if part.get("type") == "output_text" and part.get("text"):
                    out.append(TextDelta(_str(part["text"])))
                elif part.get("type") == "refusal" and part.get("refusal"):
                    out.append(RefusalDelta(_str(part["refusal"])))
        elif kind == "reasoning":
            if item.get("id") not in self._reasoning_items:
                # summaries that were never streamed (sent whole in the done item)
                for n, text in enumerate(reasoning_texts(item)):
                    self._reasoning("done", {"item_id": item.get("id"), "summary_index": n}, text, out)
            out.append(ReasoningBlock(self.issuer, item))
        elif isinstance(kind, str):
            out.append(Passthrough(self.issuer, item))

    def _finish(self, response: dict[str, Any], out: list[StreamEvent]) -> None:
        self._lifecycle(response)
        self._done = True
        if self._items == 0 and response.get("output"):
            # a server that sent only the final object: take everything from it
            out.extend(output_events(response, self.issuer))
            return
        if response.get("usage") is not None:
            out.append(UsageEvent(usage_in(response["usage"])))
        out.append(finish_of(response, self._n_calls > 0))

    def _attach(self, error: ProviderError) -> ProviderError:
        error.model = self.model or None
        error.partial = self.partial()
        return error


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _error_event(data: dict[str, Any]) -> ProviderError:
    # the live API nests the fields under "error"; the reference has them flat:
    # take each field from whichever shape has it
    nested = data.get("error") if isinstance(data.get("error"), dict) else {}
    err = {key: nested.get(key) or data.get(key) for key in ("message", "code", "type", "param")}
    return error_from_payload(err, body=data)


# ======================================================================= encoder
class _Open:
    """An output item between its ``added`` and ``done`` events."""

    __slots__ = ("id", "index", "parts", "kind", "buf", "call_id", "name")

    def __init__(self, item_id: str, index: int) -> None:
        self.id = item_id
        self.index = index
        self.parts: list[dict[str, Any]] = []  # finished content / summary parts
        self.kind = ""  # the open part: "output_text" | "refusal" | "summary_text" | ""
        self.buf: list[str] = []
        self.call_id = ""
        self.name = ""


class StreamEncoder:
    """Normalized events -> ``/responses`` SSE bytes, as OpenAI sends them."""

    def __init__(
        self, *, model: str, id: str | None = None, request: Request | None = None, created_at: int = 0
    ) -> None:
        self.model = model
        # no clock or randomness in a codec: pass the gateway's own id for real traffic
        self.id = id or mint_id("resp", model, object.__repr__(self))
        self.request = request
        self.created_at = created_at
        self._seq = 0
        self._started = False
        self._ended = False
        self._output: dict[int, dict[str, Any]] = {}  # output_index -> finished item
        self._next_index = 0
        self._reasoning: _Open | None = None
        self._message: _Open | None = None
        self._calls: dict[int, _Open] = {}
        self._usage: Usage | None = None
        self._finish: Finish | None = None
        self._reasoning_text = False  # any reasoning text written yet

    # ------------------------------------------------------------------ public
    def feed(self, event: StreamEvent) -> bytes:
        if self._ended:
            return b""
        out: list[bytes] = []
        if not self._started:
            self._start(out)
        t = type(event)
        if t is TextDelta or t is RefusalDelta:
            if event.text:  # type: ignore[union-attr]
                self._content_delta("refusal" if t is RefusalDelta else "output_text", event.text, out)  # type: ignore[union-attr]
        elif t is ToolCallDelta:
            call = self._calls.get(event.index) or self._open_call(event.index, "", "", out)  # type: ignore[union-attr]
            if event.arguments:  # type: ignore[union-attr]
                call.buf.append(event.arguments)  # type: ignore[union-attr]
                self._emit(out, "response.function_call_arguments.delta", item_id=call.id,
                           output_index=call.index, delta=event.arguments)  # type: ignore[union-attr]
        elif t is ReasoningDelta:
            if event.text:  # type: ignore[union-attr]
                self._reasoning_delta(event.text, out)  # type: ignore[union-attr]
        elif t is ToolCallStart:
            if event.index not in self._calls:  # type: ignore[union-attr]
                self._open_call(event.index, event.id, event.name, out)  # type: ignore[union-attr]
        elif t is ToolCallEnd:
            call = self._calls.pop(event.index, None)  # type: ignore[union-attr]
            if call is not None:
                self._close_call(call, out)
        elif t is ReasoningBlock:
            self._reasoning_block(event.block, out)  # type: ignore[union-attr]
        elif t is UsageEvent:
            self._usage = event.usage  # type: ignore[union-attr]
        elif t is Finish:
            self._finish = event  # type: ignore[assignment]
        elif t is Passthrough:
            self._passthrough(event.block, out)  # type: ignore[union-attr]
        elif t is StreamError:
            self._error(event.error, out)  # type: ignore[union-attr]
        return b"".join(out)

    def close(self) -> bytes:
        if self._ended:
            return b""
        out: list[bytes] = []
        if not self._started:
            self._start(out)
        self._close_reasoning(None, out)
        self._close_message(out)
        for index in sorted(self._calls):
            self._close_call(self._calls.pop(index), out)
        reason = self._finish.reason if self._finish else "stop"
        incomplete = {"length": "max_output_tokens", "content_filter": "content_filter"}.get(reason)
        status = "incomplete" if incomplete else "completed"
        response = self._response(status, incomplete_reason=incomplete)
        self._emit(out, f"response.{status}", response=response)
        self._ended = True
        return b"".join(out)

    # ------------------------------------------------------------------ framing
    def _emit(self, out: list[bytes], kind: str, **fields: Any) -> None:
        import orjson

        # the API's own order: "type" first, the other fields alphabetically
        payload = {"type": kind, **dict(sorted({**fields, "sequence_number": self._seq}.items()))}
        self._seq += 1
        out.append(encode_event(orjson.dumps(payload).decode(), event=kind))

    def _response(self, status: str, **kw: Any) -> dict[str, Any]:
        output = [self._output[i] for i in sorted(self._output)] if status != "in_progress" else []
        usage = usage_out(self._usage) if status != "in_progress" else None
        return response_object(id=self.id, model=self.model, status=status, request=self.request,
                               created_at=self.created_at, output=output, usage=usage, **kw)

    def _start(self, out: list[bytes]) -> None:
        self._started = True
        self._emit(out, "response.created", response=self._response("in_progress"))
        self._emit(out, "response.in_progress", response=self._response("in_progress"))

    def _add_item(self, prefix: str, item: dict[str, Any] | None, out: list[bytes]) -> _Open:
        index = self._next_index
        self._next_index += 1
        return _Open((item or {}).get("id") or mint_id(prefix, self.id, index), index)

    # ------------------------------------------------------------------ message
    def _content_delta(self, kind: str, text: str, out: list[bytes]) -> None:
        self._seal_reasoning(out)
        msg = self._message
        if msg is None:
            msg = self._message = self._add_item("msg", None, out)
            self._emit(out, "response.output_item.added", output_index=msg.index,
                       item=message_item(msg.id, "", None, "in_progress") | {"content": []})
        if msg.kind != kind:
            self._close_part(msg, out)
            msg.kind = kind
            part = output_text_part("") if kind == "output_text" else {"type": "refusal", "refusal": ""}
            self._emit(out, "response.content_part.added", item_id=msg.id, output_index=msg.index,
                       content_index=len(msg.parts), part=part)
        msg.buf.append(text)
        if kind == "output_text":
            self._emit(out, "response.output_text.delta", item_id=msg.id, output_index=msg.index,
                       content_index=len(msg.parts), delta=text, logprobs=[])
        else:
            self._emit(out, "response.refusal.delta", item_id=msg.id, output_index=msg.index,
                       content_index=len(msg.parts), delta=text)

    def _close_part(self, msg: _Open, out: list[bytes]) -> None:
        if not msg.kind:
            return
        text = "".join(msg.buf)
        where = {"item_id": msg.id, "output_index": msg.index, "content_index": len(msg.parts)}
        if msg.kind == "output_text":
            part = output_text_part(text)
            self._emit(out, "response.output_text.done", **where, text=text, logprobs=[])
        else:
            part = {"type": "refusal", "refusal": text}
            self._emit(out, "response.refusal.done", **where, refusal=text)
        self._emit(out, "response.content_part.done", **where, part=part)
        msg.parts.append(part)
        msg.kind, msg.buf = "", []

    def _close_message(self, out: list[bytes]) -> None:
        msg = self._message
        if msg is None:
            return
        self._message = None
        self._close_part(msg, out)
        status = "incomplete" if self._finish and self._finish.reason in ("length", "content_filter") else "completed"
        item = {"id": msg.id, "type": "message", "status": status, "content": msg.parts, "role": "assistant"}
        self._done_item(msg, item, out)

    def _done_item(self, opened: _Open, item: dict[str, Any], out: list[bytes]) -> None:
        self._output[opened.index] = item
        self._emit(out, "response.output_item.done", output_index=opened.index, item=item)

    # ---------------------------------------------------------------- reasoning
    def _reasoning_delta(self, text: str, out: list[bytes]) -> None:
        self._close_message(out)
        rs = self._reasoning
        if rs is not None and rs.name == "sealed":
            self._close_reasoning(None, out)  # reasoning after other output: a new item
            rs = None
        if rs is None:
            if self._reasoning_text and text.startswith(REASONING_SEPARATOR):
                # the separator our decoders put between reasoning items is the
                # item boundary itself: not text of the new item
                text = text[len(REASONING_SEPARATOR):]
            rs = self._reasoning = self._add_item("rs", None, out)
            self._emit(out, "response.output_item.added", output_index=rs.index,
                       item={"id": rs.id, "type": "reasoning", "summary": []})
        if not rs.kind:
            rs.kind = "summary_text"
            self._emit(out, "response.reasoning_summary_part.added", item_id=rs.id, output_index=rs.index,
                       summary_index=len(rs.parts), part={"type": "summary_text", "text": ""})
        if not text:
            return
        self._reasoning_text = True
        rs.buf.append(text)
        self._emit(out, "response.reasoning_summary_text.delta", item_id=rs.id, output_index=rs.index,
                   summary_index=len(rs.parts), delta=text)

    def _seal_reasoning(self, out: list[bytes]) -> None:
        """Other output begins: the reasoning item takes no more text but stays open
        for its block, which some servers finish after the message (OpenRouter)."""
        rs = self._reasoning
        if rs is not None and rs.name != "sealed":
            rs.name = "sealed"
            self._close_summary(rs, out)

    def _close_summary(self, rs: _Open, out: list[bytes]) -> None:
        if rs.kind:
            text = "".join(rs.buf)
            where = {"item_id": rs.id, "output_index": rs.index, "summary_index": len(rs.parts)}
            self._emit(out, "response.reasoning_summary_text.done", **where, text=text)
            part = {"type": "summary_text", "text": text}
            self._emit(out, "response.reasoning_summary_part.done", **where, part=part)
            rs.parts.append(part)
            rs.kind, rs.buf = "", []

    def _close_reasoning(self, block: dict[str, Any] | None, out: list[bytes]) -> None:
        rs = self._reasoning
        if rs is None:
            return
        self._reasoning = None
        self._close_summary(rs, out)
        if block is not None:
            # the provider's item, byte-exact, under the id the added event announced
            # (the SDK rejects an item whose id changes between added and done)
            item = {**block, "id": rs.id}
        else:
            item = {"id": rs.id, "type": "reasoning", "summary": rs.parts}
        self._done_item(rs, item, out)

    def _reasoning_block(self, block: dict[str, Any], out: list[bytes]) -> None:
        if block.get("type") != "reasoning":
            # another protocol's block (an Anthropic signature...) cannot travel in
            # a Responses stream; the gateway seals such blocks before they get here
            self._close_reasoning(None, out)
            return
        if self._reasoning is not None:
            self._close_reasoning(block, out)
            return
        rs = self._add_item("rs", block, out)
        self._emit(out, "response.output_item.added", output_index=rs.index, item={**block, "id": rs.id})
        self._done_item(rs, {**block, "id": rs.id}, out)

    # ---------------------------------------------------------------- tool calls
    def _open_call(self, index: int, call_id: str, name: str, out: list[bytes]) -> _Open:
        self._seal_reasoning(out)
        self._close_message(out)
        call = self._calls[index] = self._add_item("fc", None, out)
        call.call_id, call.name = call_id, name
        self._emit(out, "response.output_item.added", output_index=call.index,
                   item=function_call_item(call.id, call_id, name, "", "in_progress"))
        return call

    def _close_call(self, call: _Open, out: list[bytes]) -> None:
        arguments = "".join(call.buf)
        self._emit(out, "response.function_call_arguments.done", item_id=call.id, output_index=call.index,
                   arguments=arguments)
        self._done_item(call, function_call_item(call.id, call.call_id, call.name, arguments, "completed"), out)

    # ---------------------------------------------------------------- the rest
    def _passthrough(self, block: dict[str, Any], out: list[bytes]) -> None:
        if not isinstance(block.get("type"), str):
            return
        self._seal_reasoning(out)
        self._close_message(out)
        opened = self._add_item("item", block, out)
        item = {**block, "id": opened.id}
        self._emit(out, "response.output_item.added", output_index=opened.index, item=item)
        self._done_item(opened, item, out)

    def _error(self, error: ModelwireError, out: list[bytes]) -> None:
        code = getattr(error, "code", None) or _code_of(error)
        # both shapes: flat fields (the API reference) and the nested object the
        # live API sends, which is what makes the official SDK raise APIError
        nested = {"type": code, "code": code, "message": error.message, "param": None}
        self._emit(out, "error", code=code, message=error.message, param=None, error=nested)
        self._ended = True


def _code_of(error: ModelwireError) -> str:
    name = type(error).__name__
    return {
        "RateLimitError": "rate_limit_exceeded", "ContextLengthError": "context_length_exceeded",
        "BillingError": "insufficient_quota", "OverloadedError": "server_is_overloaded",
        "AuthenticationError": "invalid_api_key", "ModelNotFoundError": "model_not_found",
        "ContentFilterError": "content_filter",
    }.get(name, "server_error")
