"""The three front doors: how each protocol's request enters and its answer leaves.

A door decodes the client's body with its codec into the internal model,
opens sealed reasoning the client echoed, and encodes the Client's answer
back with the same codec — sealing reasoning the client's protocol cannot
carry natively (see :mod:`modelwire.gateway.seal`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..codecs import CODECS, Codec
from ..events import ReasoningBlock, ReasoningDelta, StreamEvent
from ..types import Message, ReasoningDetail
from ..wire.api import ApiMode
from .errors import HttpError, error_body
from .seal import Sealer

__all__ = ["DOORS", "Door", "holds_envelope", "open_sealed", "seal_events", "seal_message"]


@dataclass(frozen=True, slots=True)
class Door:
    """One front door: the protocol its clients speak and every fact that follows."""

    api_mode: ApiMode
    codec: Codec  # decodes the client's request, encodes the answer
    # the issuer the door's codec gives reasoning its clients echo (the codecs' default);
    # blocks of this issuer travel natively through this door
    issuer: str
    native_types: frozenset[str]  # block types the door's clients carry natively
    answer_prefix: str  # the protocol's id prefix for an answer
    # client headers the upstream needs to read the client's own bytes (the lane)
    passthrough_headers: tuple[str, ...] = ()
    # fields naming state kept by the vendor's servers: refused, this gateway keeps none
    stateful_fields: tuple[str, ...] = ()
    # the SSE event name of an error after bytes went out (None: a bare ``data:`` line)
    error_event: str | None = "error"
    seals: bool = True  # foreign reasoning is sealed for this door's clients
    history: str = "messages"  # the body's field that holds the conversation

    def error_frame(self, err: HttpError, request_id: str) -> bytes:
        """An error as the last SSE frame of a relayed stream, in the door's shape."""
        payload = orjson.dumps(error_body(err, self.api_mode, request_id))
        if self.error_event is None:
            return b"data: " + payload + b"\n\n"
        return b"event: " + self.error_event.encode() + b"\ndata: " + payload + b"\n\n"

    def answer_args(self, request_id: str, created: int, model: str) -> dict[str, Any]:
        """The keywords the door's codec takes for one answer (``encode_response`` and
        ``StreamEncoder`` alike, the same for every codec): the answer's id, its time (a
        protocol without one ignores it), and the model name to show. The id reuses the request id's unique part (random
        per process, then a counter): unique per answer without drawing randomness per
        request, and an operator finds the access-log line from the id a client reports."""
        return {"id": self.answer_prefix + request_id.removeprefix("req_"), "model": model,
                "created": created}


# OpenAI-compatible clients keep reasoning_details entries as they are: nothing sealed
DOORS: dict[ApiMode, Door] = {
    "chat_completions": Door(
        "chat_completions", CODECS["chat_completions"], "openai", frozenset(), "chatcmpl-",
        error_event=None, seals=False),
    "anthropic_messages": Door(
        "anthropic_messages", CODECS["anthropic_messages"], "anthropic",
        frozenset({"thinking", "redacted_thinking"}), "msg_",
        passthrough_headers=("anthropic-version", "anthropic-beta")),
    "responses": Door(
        "responses", CODECS["responses"], "openai", frozenset({"reasoning"}), "resp_",
        stateful_fields=("previous_response_id", "conversation"), history="input"),
}


def _is_native(door: Door, issuer: str, block: dict[str, Any]) -> bool:
    if not door.seals:
        return True
    return issuer == door.issuer and block.get("type") in door.native_types


def _sealed_block(door: Door, sealer: Sealer, issuer: str, block: dict[str, Any], text: str) -> dict[str, Any]:
    envelope = sealer.seal(issuer, block)
    if door.api_mode == "anthropic_messages":
        return {"type": "thinking", "thinking": text, "signature": envelope}
    summary = [{"type": "summary_text", "text": text}] if text else []
    return {"type": "reasoning", "id": "rs_" + envelope[-24:].replace("-", "x").replace("_", "y"),
            "summary": summary, "encrypted_content": envelope}


def _block_text(block: dict[str, Any]) -> str:
    for key in ("thinking", "text", "summary", "content", "reasoning"):
        value = block.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    return ""


def seal_message(message: dict[str, Any], spec: Door, sealer: Sealer) -> dict[str, Any]:
    """A non-stream answer: replace foreign reasoning blocks by sealed native ones."""
    details = message.get("reasoning_details")
    if not details or not spec.seals:
        return message
    out = []
    for entry in details:
        issuer, block = entry.get("issuer", ""), entry.get("block", {})
        if _is_native(spec, issuer, block):
            out.append(entry)
        else:
            text = _block_text(block) or ("" if len(details) > 1 else message.get("reasoning_content", ""))
            out.append({"issuer": spec.issuer, "block": _sealed_block(spec, sealer, issuer, block, text)})
    return {**message, "reasoning_details": out}


def seal_events(events: Iterable[StreamEvent], spec: Door, sealer: Sealer) -> list[StreamEvent]:
    """Stream events: a foreign ReasoningBlock becomes a signature delta plus a sealed native block."""
    if not spec.seals:
        return list(events)
    out: list[StreamEvent] = []
    for ev in events:
        if isinstance(ev, ReasoningBlock) and not _is_native(spec, ev.issuer, ev.block):
            sealed = _sealed_block(spec, sealer, ev.issuer, ev.block, _block_text(ev.block))
            if spec.api_mode == "anthropic_messages":
                out.append(ReasoningDelta(signature=sealed["signature"]))
            out.append(ReasoningBlock(spec.issuer, sealed))
        else:
            out.append(ev)
    return out


def _envelope(entry: object) -> object:
    """The value of a reasoning entry that would carry a sealed envelope, if any (any
    shape a client sends is looked at: this runs on every request)."""
    block = entry.get("block") if isinstance(entry, dict) else None
    if not isinstance(block, dict):
        return None
    return block.get("signature") or block.get("encrypted_content")


def holds_envelope(messages: Sequence[Message]) -> bool:
    """Whether :func:`open_sealed` has anything to open: a sealed envelope in an assistant
    message's ``reasoning_details`` (decoded strings: however the client's JSON spelled it)."""
    for message in messages:
        if message["role"] == "assistant" and isinstance(details := message.get("reasoning_details"), list):
            for entry in details:
                if Sealer.is_sealed(_envelope(entry)):
                    return True
    return False


def open_sealed(messages: list[Message], sealer: Sealer) -> list[Message]:
    """Restore sealed reasoning the client echoed; drop envelopes that do not open.
    ``messages`` itself comes back when it holds no envelope."""
    if not holds_envelope(messages):
        return messages
    out: list[Message] = []
    for message in messages:
        details = message.get("reasoning_details")
        # a decoded request's messages all have a role (the codecs check it)
        if message["role"] != "assistant" or not isinstance(details, list):
            out.append(message)
            continue
        restored: list[ReasoningDetail] = []
        changed = tampered = False
        for entry in details:
            envelope = _envelope(entry)
            if Sealer.is_sealed(envelope):
                changed = True
                opened = sealer.open(envelope)
                if opened is None:  # tampered or foreign: dropped, never forwarded
                    tampered = True
                else:
                    restored.append({"issuer": opened.issuer, "block": opened.block})
            else:
                restored.append(entry)
        if changed:
            message = copy.copy(message)
            message["reasoning_details"] = restored
            if not restored:
                message.pop("reasoning_details")
            if tampered:
                # the readable text beside a broken seal is the client's, not the
                # upstream's: it must not travel as the upstream's own reasoning
                message.pop("reasoning_content", None)
        out.append(message)
    return out
