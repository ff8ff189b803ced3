"""Fold normalized stream events into one :class:`~modelwire.Completion`.

String pieces are kept in lists and joined once in :meth:`Accumulator.result`,
never concatenated per chunk. Tool calls are slots by event ``index``; a call
is complete only when it saw :class:`ToolCallEnd` or the stream finished —
never because its partial JSON happens to parse.

The order blocks arrived in (thinking, tool call, thinking, tool call) is kept as
``block_order`` (:mod:`modelwire.blockorder`) when it is not the default grouping; the
text runs of one answer are joined into one content string, at the first run's place.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .blockorder import order_field
from .completion import Completion
from .events import (
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
from .types import (
    AssistantMessage,
    BlockKind,
    FinishReason,
    ReasoningDetail,
    ToolCall,
    Usage,
    empty_usage,
)

__all__ = ["Accumulator", "deterministic_tool_call_id"]


def deterministic_tool_call_id(name: str, arguments: str, index: int) -> str:
    """An id for a call that arrived without one: stable, so cache prefixes stay stable."""
    digest = hashlib.sha256(f"{name}\0{arguments}\0{index}".encode()).hexdigest()[:24]
    return f"call_{digest}"


class _Slot:
    __slots__ = ("args", "ended", "id", "name")

    def __init__(self, id: str, name: str) -> None:
        self.id = id
        self.name = name
        self.args: list[str] = []
        self.ended = False


class Accumulator:
    """``feed(event)`` for each event, then ``result()``."""

    def __init__(self, *, model: str = "", provider: str = "", id: str = "", ordered: bool = False) -> None:
        """``ordered``: keep the blocks' order (Anthropic Messages, whose thinking signatures
        hold only at their place; a Chat Completions stream's reasoning_details come when
        they come, and the Responses decoders do not emit their items in order yet)."""
        self.model = model
        self.ordered = ordered
        self.provider = provider
        self.id = id
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._reasoning: list[str] = []
        self._details: list[ReasoningDetail] = []
        self._passthrough: list[dict[str, Any]] = []
        self._annotations: list[dict[str, Any]] = []
        self._slots: dict[int, _Slot] = {}
        self._kinds: list[BlockKind] = []  # each block's kind, in arrival order
        self._usage: Usage | None = None
        self._finish: Finish | None = None
        self.error: StreamError | None = None
        self.events = 0

    @property
    def started(self) -> bool:
        return self.events > 0

    @property
    def finished(self) -> bool:
        return self._finish is not None

    def feed(self, event: StreamEvent) -> None:
        self.events += 1
        t = type(event)
        if t is TextDelta:
            if event.text:  # type: ignore[union-attr]
                if not self._text:  # the text block's place: its first visible piece
                    self._kinds.append("text")
                self._text.append(event.text)  # type: ignore[union-attr]
        elif t is ToolCallDelta:
            slot = self._slots.get(event.index)  # type: ignore[union-attr]
            if slot is None:
                slot = self._slots[event.index] = _Slot("", "")  # type: ignore[union-attr]
                self._kinds.append("tool_call")
            slot.args.append(event.arguments)  # type: ignore[union-attr]
        elif t is ReasoningDelta:
            if event.text:  # type: ignore[union-attr]
                self._reasoning.append(event.text)  # type: ignore[union-attr]
        elif t is ToolCallStart:
            slot = self._slots.get(event.index)  # type: ignore[union-attr]
            if slot is None:
                self._slots[event.index] = _Slot(event.id, event.name)  # type: ignore[union-attr]
                self._kinds.append("tool_call")
            else:
                slot.id = slot.id or event.id  # type: ignore[union-attr]
                slot.name = slot.name or event.name  # type: ignore[union-attr]
        elif t is ToolCallEnd:
            slot = self._slots.get(event.index)  # type: ignore[union-attr]
            if slot is not None:
                slot.ended = True
        elif t is ReasoningBlock:
            self._details.append({"issuer": event.issuer, "block": event.block})  # type: ignore[union-attr]
            self._kinds.append("reasoning")
        elif t is UsageEvent:
            self._usage = event.usage  # type: ignore[union-attr]
        elif t is Finish:
            self._finish = event  # type: ignore[assignment]
        elif t is RefusalDelta:
            self._refusal.append(event.text)  # type: ignore[union-attr]
        elif t is Passthrough:
            self._passthrough.append({"issuer": event.issuer, "block": event.block})  # type: ignore[union-attr]
            self._kinds.append("passthrough")
        elif t is StreamError:
            self.error = event  # type: ignore[assignment]
        elif t is Annotation:
            self._annotations.append(event.annotation)  # type: ignore[union-attr]

    def message(self, *, complete_calls_only: bool = False) -> AssistantMessage:
        """The assistant message so far. With ``complete_calls_only``, tool calls
        that never ended (a cut stream) are left out: partial calls are never
        handed out as complete."""
        msg: AssistantMessage = {"role": "assistant"}
        text = "".join(self._text)
        msg["content"] = text if text or not self._slots else None
        if self._reasoning:
            msg["reasoning_content"] = "".join(self._reasoning)
        if self._details:
            msg["reasoning_details"] = list(self._details)
        if self._refusal:
            msg["refusal"] = "".join(self._refusal)
        if self._annotations:
            msg["annotations"] = list(self._annotations)
        calls: list[ToolCall] = []
        finished = self._finish is not None
        for index in sorted(self._slots):
            slot = self._slots[index]
            if complete_calls_only and not (slot.ended or finished):
                continue
            args = "".join(slot.args)
            calls.append(
                {
                    "id": slot.id or deterministic_tool_call_id(slot.name, args, index),
                    "type": "function",
                    "function": {"name": slot.name, "arguments": args},
                }
            )
        if calls:
            msg["tool_calls"] = calls  # type: ignore[typeddict-item]
        elif msg["content"] is None:
            msg["content"] = ""
        if self._passthrough:
            msg["passthrough"] = list(self._passthrough)  # type: ignore[typeddict-item]
        order = order_field(self._kinds) if self.ordered else None
        if order is not None:
            msg["block_order"] = order
        return msg

    def result(self, *, interrupted: bool = False, raw: dict[str, Any] | None = None) -> Completion:
        """The :class:`Completion` so far (call after the stream ended or was cut).
        ``interrupted``: the stream was cut short; with no finish seen, the finish
        reason is then ``None`` (a partial result, not an answer that stopped).
        ``raw``: the upstream's body the events came from, kept as ``Completion.raw``."""
        msg = self.message(complete_calls_only=interrupted or self._finish is None)
        finish = self._finish
        reason: FinishReason | None
        if finish is not None:
            reason = finish.reason
            native, matched = finish.native, finish.stop_sequence
        elif interrupted:
            reason, native, matched = None, None, None
        else:
            reason, native, matched = ("tool_calls" if msg.get("tool_calls") else "stop"), None, None
        return Completion(
            message=msg,
            finish_reason=reason,
            usage=self._usage if self._usage is not None else empty_usage(),
            model=self.model,
            provider=self.provider,
            interrupted=interrupted,
            id=self.id,
            native_finish_reason=native,
            stop_sequence=matched,
            raw=raw,
        )
