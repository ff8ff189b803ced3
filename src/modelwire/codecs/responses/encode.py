"""The Responses API as a gateway answers: ``response`` objects and their SSE (sans-IO).

:func:`encode_response` writes a Completion as a ``response`` object; :class:`StreamEncoder`
turns normalized events into ``/responses`` SSE, as OpenAI sends them.

The official SDK's ``responses.stream()`` accumulator checks what this writes:
``response.created`` first, one ``response.id`` throughout, every content event
after its item's ``output_item.added``, ``added`` and ``done`` of an item with
the same id, and fields named and ordered as the API does (``type`` first, the
rest alphabetically, ``sequence_number`` counting from 0).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from typing import Any

import orjson

from ...blockorder import ordered_items
from ...completion import Completion
from ...errors import ModelwireError
from ...events import (
    Annotation,
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
from ...types import FinishReason, Request, Usage
from ..sse import TEXT_MARK, split_at_text_mark
from ..stream_failure import failure_kind
from ._decode_request import custom_input, custom_names
from ._hosted import output_item
from ._namespaces import namespace_table, split_name
from ._shell import is_shell_call, shell_call_item
from .request import request_fields
from .response import REASONING_SEPARATOR, annotation_out, mint_id, usage_out

__all__ = ["StreamEncoder", "custom_call_item", "encode_response", "function_call_item", "message_item",
           "output_text_part", "response_object"]

log = logging.getLogger("modelwire.codecs.responses")


class _Open:
    """An output item between its ``added`` and ``done`` events."""

    __slots__ = ("buf", "call_id", "id", "index", "kind", "name", "notes", "parts", "start")

    def __init__(self, item_id: str, index: int) -> None:
        self.id = item_id
        self.index = index
        self.parts: list[dict[str, Any]] = []  # finished content / summary parts
        self.kind = ""  # the open part: "output_text" | "refusal" | "summary_text" | ""; a call: "custom", "shell" or ""
        self.buf: list[str] = []
        self.call_id = ""
        self.name = ""
        self.notes: list[dict[str, Any]] = []  # the open output_text part's annotations
        self.start = 0  # where the open part's text starts in the whole message text


class StreamEncoder:
    """Normalized events -> ``/responses`` SSE bytes, as OpenAI sends them."""

    def __init__(
        self, *, model: str, id: str | None = None, request: Request | None = None, created: int | None = None
    ) -> None:
        self.model = model
        # an id of our own only when the caller has none: random, since clients key
        # on it and a deterministic one would repeat across requests
        self.id = id or "resp_" + secrets.token_hex(24)
        self.request = request
        self.created_at = created or 0  # the request's time: codecs have no clock
        self._seq = 0
        self._frames: dict[tuple[str, int, int], tuple[bytes, bytes] | None] = {}
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
        self._text_len = 0  # of the message text so far (annotations count from its start)
        self._custom = custom_names(request)
        self._namespaces = namespace_table(request)

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
                if call.kind == "":  # a custom call's text, a shell call's action: whole, at the end
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
        elif t is Annotation:
            self._annotation(event.annotation, out)  # type: ignore[union-attr]
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
        # the API's own order: "type" first, the other fields alphabetically
        fields["sequence_number"] = self._seq
        self._seq += 1
        payload = {"type": kind}
        for key in sorted(fields):
            payload[key] = fields[key]
        # framed by hand: orjson never writes a raw newline, so one data: line is
        # always right (what encode_event would check for, per event)
        out.append(b"event: %s\ndata: %s\n\n" % (kind.encode(), orjson.dumps(payload)))

    def _text_delta(self, msg: _Open, text: str, out: list[bytes]) -> None:
        """``response.output_text.delta``, most of a stream: framed once per content
        part around two markers, then only the text and the sequence number are
        written per event (byte-identical to :meth:`_emit`; a test compares them)."""
        key = (msg.id, msg.index, len(msg.parts))
        try:
            frame = self._frames[key]
        except KeyError:
            frame = self._frames[key] = self._frame(msg, key[2])
        if frame is None:
            self._emit(out, "response.output_text.delta", item_id=msg.id, output_index=msg.index,
                       content_index=key[2], delta=text, logprobs=[])
            return
        out.append(b"%s%s%s%d}\n\n" % (frame[0], orjson.dumps(text), frame[1], self._seq))
        self._seq += 1

    def _frame(self, msg: _Open, content_index: int) -> tuple[bytes, bytes] | None:
        """What an output_text.delta event of this part holds before and after its text."""
        probe: list[bytes] = []
        seq = self._seq
        self._emit(probe, "response.output_text.delta", item_id=msg.id, output_index=msg.index,
                   content_index=content_index, delta=TEXT_MARK, logprobs=[])
        self._seq = seq
        split = split_at_text_mark(probe[0])
        last = b'"sequence_number":%d}\n\n' % seq
        # sequence_number is the last field: the frame ends with it, or is refused
        if split is None or not split[1].endswith(last) or split[1].count(last) != 1:
            return None
        return split[0], split[1][:-len(b"%d}\n\n" % seq)]

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
            msg.start = self._text_len
            part = output_text_part("") if kind == "output_text" else {"type": "refusal", "refusal": ""}
            self._emit(out, "response.content_part.added", item_id=msg.id, output_index=msg.index,
                       content_index=len(msg.parts), part=part)
        msg.buf.append(text)
        if kind == "output_text":
            self._text_len += len(text)
            self._text_delta(msg, text, out)
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
            if msg.notes:
                part["annotations"], msg.notes = msg.notes, []
            self._emit(out, "response.output_text.done", **where, text=text, logprobs=[])
        else:
            part = {"type": "refusal", "refusal": text}
            self._emit(out, "response.refusal.done", **where, refusal=text)
        self._emit(out, "response.content_part.done", **where, part=part)
        msg.parts.append(part)
        msg.kind, msg.buf = "", []

    def _annotation(self, annotation: dict[str, Any], out: list[bytes]) -> None:
        """An annotation of the text written so far: on the open output_text part, its
        indices counted from the part's start (the internal ones count from the message's)."""
        msg = self._message
        flat = annotation_out(annotation)
        if msg is None or msg.kind != "output_text" or flat is None:
            log.debug("responses encoder: an annotation with no text part open, left out")
            return
        for key in ("start_index", "end_index"):
            if type(flat.get(key)) is int:
                flat[key] = max(0, flat[key] - msg.start)
        self._emit(out, "response.output_text.annotation.added", item_id=msg.id, output_index=msg.index,
                   content_index=len(msg.parts), annotation_index=len(msg.notes), annotation=flat)
        msg.notes.append(flat)

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
        if is_shell_call(name, self.request):  # its action is known once the arguments are whole
            call = self._calls[index] = self._add_item("lsh", None, out)
            call.call_id, call.name, call.kind = call_id, name, "shell"
            self._emit(out, "response.output_item.added", output_index=call.index,
                       item=shell_call_item(call.id, call_id, "", "in_progress"))
            return call
        custom = name in self._custom
        call = self._calls[index] = self._add_item("ctc" if custom else "fc", None, out)
        call.call_id, call.name = call_id, name
        if custom:  # its text is known once the call's JSON arguments are whole
            call.kind = "custom"
            item = custom_call_item(call.id, call_id, name, "", "in_progress", self._namespaces)
        else:
            item = function_call_item(call.id, call_id, name, "", "in_progress", self._namespaces)
        self._emit(out, "response.output_item.added", output_index=call.index, item=item)
        return call

    def _close_call(self, call: _Open, out: list[bytes]) -> None:
        arguments = "".join(call.buf)
        if call.kind == "shell":
            self._done_item(call, shell_call_item(call.id, call.call_id, arguments, "completed"), out)
            return
        if call.kind == "custom":
            text = custom_input(arguments)
            self._emit(out, "response.custom_tool_call_input.delta", item_id=call.id, output_index=call.index,
                       delta=text)
            self._emit(out, "response.custom_tool_call_input.done", item_id=call.id, output_index=call.index,
                       input=text)
            self._done_item(call, custom_call_item(call.id, call.call_id, call.name, text, "completed",
                                                        self._namespaces), out)
            return
        self._emit(out, "response.function_call_arguments.done", item_id=call.id, output_index=call.index,
                   arguments=arguments)
        self._done_item(call, function_call_item(call.id, call.call_id, call.name, arguments, "completed",
                                                    self._namespaces), out)

    # ---------------------------------------------------------------- the rest
    def _passthrough(self, block: dict[str, Any], out: list[bytes]) -> None:
        native = output_item(block)
        if native is None:
            return
        self._seal_reasoning(out)
        self._close_message(out)
        opened = self._add_item("item", native, out)
        item = {**native, "id": opened.id}
        self._emit(out, "response.output_item.added", output_index=opened.index, item=item)
        self._done_item(opened, item, out)

    def _error(self, error: ModelwireError, out: list[bytes]) -> None:
        """The stream failed: ``response.failed``, as the API ends a response that fails
        while it streams. Open items stay open (no ``output_item.done`` for what the
        upstream did not finish) and the response's output holds only finished items."""
        kind = failure_kind(error)
        # the codes the API's schema allows (ResponseError.code): a cut or a 5xx is its
        # "server_error", which clients (Codex) retry
        code = "rate_limit_exceeded" if kind == "rate_limit" else "invalid_prompt" if kind == "request" else "server_error"
        self._emit(out, "response.failed", response=self._response(
            "failed", error={"code": code, "message": error.message}))
        self._ended = True


# ================================================================ encode
def response_object(
    *,
    id: str,
    model: str,
    status: str,
    request: Request | None,
    created_at: int = 0,
    output: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
    incomplete_reason: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``response`` object with the fields the API always sends, echoing the request."""
    settings = request_fields(request, model=model) if request else {"model": model}
    reasoning = settings.get("reasoning") or {"effort": None, "summary": None}
    return {
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "instructions": settings.get("instructions"),
        "max_output_tokens": settings.get("max_output_tokens"),
        "model": model,
        "output": output if output is not None else [],
        "parallel_tool_calls": settings.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": reasoning,
        "store": False,
        "temperature": settings.get("temperature", 1.0),
        "text": settings.get("text") or {"format": {"type": "text"}},
        "tool_choice": settings.get("tool_choice", "auto"),
        "tools": settings.get("tools", []),
        "top_p": settings.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


def encode_response(
    completion: Completion, request: Request | None = None, *, created: int | None = None,
    id: str | None = None, model: str | None = None,
) -> dict[str, Any]:
    """A :class:`Completion` -> the ``response`` object ``POST /responses`` returns, its
    items in the turn's order (``block_order``).
    ``id`` and ``model``: the answer's own (a gateway mints one per answer and names the
    model the client asked for; item ids derive from ``id``); by default the completion's.
    ``created``: the answer's ``created_at`` (epoch seconds; 0 when not given)."""
    if id:
        rid = id
    elif completion.id.startswith("resp"):
        rid = completion.id
    elif completion.id:  # another protocol's id (chatcmpl-..., msg_...): a stable Responses-style one
        rid = mint_id("resp", completion.id, completion.model)
    else:
        rid = "resp_" + secrets.token_hex(24)
    msg = completion.message
    reasoning = [_with_id(block, "rs", rid, n) for n, block in enumerate(_reasoning_items(msg))]
    passthrough: list[dict[str, Any] | None] = []
    for n, entry in enumerate(msg.get("passthrough") or ()):
        block = entry.get("block") if isinstance(entry, dict) else None
        item = output_item(block) if isinstance(block, dict) else None
        passthrough.append(_with_id(item, "item", rid, n) if item is not None else None)
    text = completion.text
    refusal = msg.get("refusal")
    message = None
    if text or refusal or not msg.get("tool_calls"):
        message = message_item(mint_id("msg", rid, 0), text, refusal, "completed")
        notes = [a for a in map(annotation_out, msg.get("annotations") or ()) if a is not None]
        if notes and message["content"][0]["type"] == "output_text":
            message["content"][0]["annotations"] = notes
    output = _in_order(msg, reasoning, passthrough, message, _call_items(msg, request, rid))
    status, reason = _status_of(completion.finish_reason)
    return response_object(
        id=rid, model=model or completion.model, status=status, request=request, created_at=created or 0,
        output=output, usage=usage_out(completion.usage), incomplete_reason=reason,
    )


def _call_items(msg: Mapping[str, Any], request: Request | None, rid: str) -> list[dict[str, Any]]:
    custom = custom_names(request)
    table = namespace_table(request)
    calls = []
    for n, call in enumerate(msg.get("tool_calls") or ()):
        fn = call.get("function") or {}
        name = fn.get("name", "")
        if is_shell_call(name, request):  # the client offered its local shell: run there
            calls.append(shell_call_item(mint_id("lsh", rid, n), call.get("id", ""), fn.get("arguments", ""),
                                         "completed"))
        elif name in custom:  # the client declared it a custom tool: its call is one too
            calls.append(custom_call_item(mint_id("ctc", rid, n), call.get("id", ""), name,
                                          custom_input(fn.get("arguments", "")), "completed", table))
        else:
            calls.append(function_call_item(
                mint_id("fc", rid, n), call.get("id", ""), name, fn.get("arguments", ""), "completed", table))
    return calls


def _in_order(msg: Mapping[str, Any], reasoning: list[dict[str, Any]], passthrough: list[Any],
              message: dict[str, Any] | None, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output items in the turn's order (``block_order``: each reasoning item before
    the call it led to); by default reasoning, hosted calls, the message, the calls."""
    default = [*reasoning, *(p for p in passthrough if p is not None), *([message] if message else []), *calls]
    order = msg.get("block_order")
    details = msg.get("reasoning_details") or ()
    if not isinstance(order, list) or len(reasoning) != len(details) or "block_order" not in msg:
        return default  # no order, or reasoning shown from text only: the default grouping
    out: list[dict[str, Any]] = []
    taken = {"reasoning": 0, "passthrough": 0, "tool_call": 0}
    for kind, _ in ordered_items(msg):
        if kind == "text":
            if message is not None and message not in out:
                out.append(message)
            continue
        if kind == "tool_call" and message is not None and message not in out and "text" not in order:
            out.append(message)  # a refusal or empty message: before the calls, as by default
        source = {"reasoning": reasoning, "passthrough": passthrough, "tool_call": calls}[kind]
        item = source[taken[kind]] if taken[kind] < len(source) else None
        taken[kind] += 1
        if item is not None:
            out.append(item)
    if message is not None and message not in out:
        out.append(message)
    return out if len(out) == len(default) else default


def _status_of(reason: FinishReason | None) -> tuple[str, str | None]:
    if reason == "length":
        return "incomplete", "max_output_tokens"
    if reason == "content_filter":
        return "incomplete", "content_filter"
    return "completed", None


def _reasoning_items(msg: Mapping[str, Any]) -> list[dict[str, Any]]:
    items = [
        d["block"] for d in msg.get("reasoning_details") or ()
        if isinstance(d, dict) and isinstance(d.get("block"), dict) and d["block"].get("type") == "reasoning"
    ]
    if not items and msg.get("reasoning_content"):
        # reasoning from a foreign issuer: shown as a summary, no encrypted_content
        # (the gateway seals foreign blocks itself when it wants them replayed)
        items = [{"type": "reasoning", "summary": [{"type": "summary_text", "text": msg["reasoning_content"]}]}]
    return items


def _with_id(block: dict[str, Any], prefix: str, rid: str, n: int) -> dict[str, Any]:
    if block.get("id"):
        return block
    return {"id": mint_id(prefix, rid, n), **block}


def message_item(item_id: str, text: str, refusal: str | None, status: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text or not refusal:
        content.append(output_text_part(text))
    if refusal:
        content.append({"type": "refusal", "refusal": refusal})
    return {"id": item_id, "type": "message", "status": status, "content": content, "role": "assistant"}


def output_text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def custom_call_item(item_id: str, call_id: str, name: str, text: str, status: str,
                     namespaces: Mapping[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """A ``custom_tool_call`` item; ``namespaces``: the request's table, which splits a
    flat name back into ``namespace`` and ``name``."""
    item = {"id": item_id, "type": "custom_tool_call", "status": status, "call_id": call_id, "name": name,
            "input": text}
    return _namespaced(item, namespaces)


def function_call_item(item_id: str, call_id: str, name: str, arguments: str, status: str,
                       namespaces: Mapping[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """A ``function_call`` item; ``namespaces`` as for :func:`custom_call_item`."""
    item = {
        "id": item_id, "type": "function_call", "status": status,
        "arguments": arguments, "call_id": call_id, "name": name,
    }
    return _namespaced(item, namespaces)


def _namespaced(item: dict[str, Any], namespaces: Mapping[str, tuple[str, str]] | None) -> dict[str, Any]:
    space, name = split_name(item["name"], namespaces or {})
    if space is not None:
        item["name"], item["namespace"] = name, space
    return item
