"""Responses API streams -> normalized events, sans-IO.

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
  ``output_item.done`` (the SDK docs: the ``added`` copy may be incomplete: 908
  vs 1,720 characters in a recorded Azure stream), and ``response.completed``
  carries the final item of all (re-encrypted), which completes the block in place;
* OpenAI nests a mid-stream ``error`` event's fields under ``error`` while the
  reference documents them flat (openai-dotnet#881): both shapes are read.

The other direction is :class:`~modelwire.codecs.responses.encode.StreamEncoder`.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...accumulate import Accumulator
from ...completion import Completion
from ...errors import ProtocolError, ProviderError
from ...events import (
    Annotation,
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
from ...types import JSONValue
from ..sse import SSEDecoder, SSEEvent
from ._decode_request import reasoning_texts
from ._namespaces import call_name
from .errors import error_from_payload
from .response import (
    DEFAULT_ISSUER,
    REASONING_SEPARATOR,
    annotation_in,
    finish_of,
    output_events,
    part_annotations,
    usage_in,
)

__all__ = ["StreamDecoder"]

log = logging.getLogger("modelwire.codecs.responses")

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})
# known events that carry nothing the normalized stream needs (their content
# arrives again, complete, in a later event we do read)
_QUIET = frozenset({
    "response.queued", "response.content_part.added", "response.content_part.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done", "response.reasoning_text.done", "response.refusal.done",
})
# progress events of hosted tools: their items arrive in output_item.done
_QUIET_PREFIXES = (
    "response.web_search_call.", "response.file_search_call.", "response.code_interpreter_call",
    "response.image_generation_call.", "response.mcp_", "response.custom_tool_call_input.",
    "response.audio.", "response.shell_call", "response.compaction.",
)


class _Call:
    __slots__ = ("emitted", "index", "unnamed")

    def __init__(self, index: int) -> None:
        self.index = index
        self.emitted: list[str] = []  # argument fragments already passed on
        self.unnamed = False


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
        # (item_id, content_index) that streamed text -> where its text starts in the message's
        self._texts: dict[tuple[Any, Any], int] = {}
        self._text_len = 0
        self._annotated: set[tuple[Any, Any]] = set()  # parts whose annotations came as events
        self._reasoning_key: tuple[Any, ...] | None = None
        self._reasoning_any = False
        self._reasoning_items: set[Any] = set()  # item ids whose text was streamed
        self._reasoning_blocks: list[dict[str, Any]] = []  # emitted at output_item.done
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
        feed = self._acc.feed
        for sse in sse_events:
            raw = sse.data
            if raw == "[DONE]":  # OpenRouter's Chat Completions habit
                continue
            self._events += 1
            if self._done:
                continue  # nothing after the terminal event counts
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise ProtocolError(f"event {sse.event or 'message'!r} has invalid JSON: {exc}",
                                    partial=self.partial()) from exc
            if type(data) is not dict:
                raise ProtocolError("an event's data must be a JSON object", partial=self.partial())
            kind = data.get("type") or sse.event
            start = len(out)
            try:
                self._handle(str(kind), data, out)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                raise ProtocolError(f"malformed {kind!r} event: {exc!r}", partial=self.partial()) from exc
            for n in range(start, len(out)):
                feed(out[n])
        return out

    def _handle(self, kind: str, data: dict[str, Any], out: list[StreamEvent]) -> None:
        if kind == "response.output_text.delta":
            self._texts.setdefault((data.get("item_id"), data.get("content_index")), self._text_len)
            if data["delta"]:
                text = _str(data["delta"])
                out.append(TextDelta(text))
                self._text_len += len(text)
        elif kind == "response.function_call_arguments.delta":
            call = self._call_for(data) or self._unannounced_call(data, out)
            if data["delta"]:
                call.emitted.append(_str(data["delta"]))
                out.append(ToolCallDelta(call.index, data["delta"]))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._reasoning(kind, data, data["delta"], out)
        elif kind == "response.refusal.delta":
            self._texts.setdefault((data.get("item_id"), data.get("content_index")), self._text_len)
            out.append(RefusalDelta(_str(data["delta"])))
        elif kind == "response.output_text.done":
            key = (data.get("item_id"), data.get("content_index"))
            if key not in self._texts and data.get("text"):  # a .done with no deltas
                self._texts[key] = self._text_len
                text = _str(data["text"])
                out.append(TextDelta(text))
                self._text_len += len(text)
        elif kind == "response.output_text.annotation.added":
            key = (data.get("item_id"), data.get("content_index"))
            found = annotation_in(data.get("annotation"), self._texts.get(key, self._text_len))
            if found is not None:
                self._annotated.add(key)
                out.append(Annotation(found))
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

    def _reasoning(self, kind: str, data: dict[str, Any], delta: JSONValue, out: list[StreamEvent]) -> None:
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

    def _unannounced_call(self, data: dict[str, Any], out: list[StreamEvent]) -> _Call:
        # arguments for an item never announced by output_item.added: streamed on
        # in a slot of their own (never dropped: litellm#20711); the name and call
        # id arrive with output_item.done
        self._item_added({"type": "function_call", "id": data.get("item_id")}, data.get("output_index"), out)
        call = self._calls[("out", data.get("output_index"))]
        call.unnamed = True
        return call

    def _item_added(self, item: dict[str, Any], output_index: JSONValue, out: list[StreamEvent]) -> None:
        if item.get("type") != "function_call":
            return
        call = _Call(self._n_calls)
        self._n_calls += 1
        self._calls[("out", output_index)] = call
        if item.get("id"):
            self._calls[("item", item["id"])] = call
        out.append(ToolCallStart(call.index, _str(item.get("call_id") or ""), call_name(item)))
        if item.get("arguments"):  # some servers put (the start of) the arguments here
            call.emitted.append(_str(item["arguments"]))
            out.append(ToolCallDelta(call.index, item["arguments"]))

    def _finish_arguments(self, call: _Call, arguments: JSONValue, out: list[StreamEvent]) -> None:
        if not isinstance(arguments, str):
            return
        sent = "".join(call.emitted)
        if arguments.startswith(sent) and len(arguments) > len(sent):
            rest = arguments[len(sent):]  # the part the deltas did not carry (all of it, if none)
            call.emitted.append(rest)
            out.append(ToolCallDelta(call.index, rest))

    def _item_done(self, item: dict[str, Any], output_index: JSONValue, out: list[StreamEvent]) -> None:
        self._items += 1
        kind = item.get("type")
        if kind == "function_call":
            call = self._calls.get(("out", output_index)) or self._calls.get(("item", item.get("id")))
            if call is None:  # done without added: start it now
                self._item_added(item, output_index, out)
                call = self._calls[("out", output_index)]
            else:
                if call.unnamed:  # the accumulator fills an empty id and name from a later start
                    out.append(ToolCallStart(call.index, _str(item.get("call_id") or ""),
                                             call_name(item)))
                self._finish_arguments(call, item.get("arguments"), out)
            out.append(ToolCallEnd(call.index))
        elif kind == "message":
            for n, part in enumerate(item.get("content") or ()):
                key = (item.get("id"), n)
                if not isinstance(part, dict):
                    continue
                if key not in self._texts:
                    self._texts[key] = self._text_len
                    if part.get("type") == "output_text" and part.get("text"):
                        text = _str(part["text"])
                        out.append(TextDelta(text))
                        self._text_len += len(text)
                    elif part.get("type") == "refusal" and part.get("refusal"):
                        out.append(RefusalDelta(_str(part["refusal"])))
                if key not in self._annotated and part.get("type") == "output_text":
                    # annotations only in the finished item (no annotation.added events)
                    self._annotated.add(key)
                    out += part_annotations(part, self._texts[key])
        elif kind == "reasoning":
            if item.get("id") not in self._reasoning_items:
                # summaries that were never streamed (sent whole in the done item)
                for n, text in enumerate(reasoning_texts(item)):
                    self._reasoning("done", {"item_id": item.get("id"), "summary_index": n}, text, out)
            block = dict(item)  # ours: response.completed may complete it in place
            self._reasoning_blocks.append(block)
            out.append(ReasoningBlock(self.issuer, block))
        elif isinstance(kind, str):
            out.append(Passthrough(self.issuer, item))

    def _finish(self, response: dict[str, Any], out: list[StreamEvent]) -> None:
        self._lifecycle(response)
        self._done = True
        if self._items == 0 and response.get("output"):
            # a server that sent only the final object: take everything from it
            out.extend(output_events(response, self.issuer))
            return
        self._complete_reasoning(response.get("output"))
        if response.get("usage") is not None:
            out.append(UsageEvent(usage_in(response["usage"])))
        out.append(finish_of(response, self._n_calls > 0))

    def _complete_reasoning(self, output: JSONValue) -> None:
        """The reasoning items of ``response.completed`` are the final ones: what the
        non-streamed answer carries, so what the next turn must send back. They can
        differ from the ``output_item.done`` copies (OpenAI re-encrypts
        encrypted_content; OpenRouter's rs_tmp_ ids change), so the blocks emitted at
        ``done`` take their final form in place: the accumulator holds the same dicts.
        An encoder that already wrote a block wrote the done form, which is the same
        reasoning sealed by the same server."""
        finals = [i for i in output if isinstance(i, dict) and i.get("type") == "reasoning"] \
            if isinstance(output, list) else []
        if len(finals) != len(self._reasoning_blocks):
            return  # not the same items: keep what output_item.done said
        for block, final in zip(self._reasoning_blocks, finals, strict=True):
            if block != final:
                block.clear()
                block.update(final)

    def _attach(self, error: ProviderError) -> ProviderError:
        error.model = self.model or None
        error.partial = self.partial()
        return error


def _str(value: JSONValue) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _error_event(data: dict[str, Any]) -> ProviderError:
    # the live API nests the fields under "error"; the reference has them flat:
    # take each field from whichever shape has it
    nested = data.get("error")
    if not isinstance(nested, dict):
        nested = {}
    err = {key: nested.get(key) or data.get(key) for key in ("message", "code", "type", "param")}
    return error_from_payload(err, body=data)
