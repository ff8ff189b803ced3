"""The three front doors: how each protocol's request enters and its answer leaves.

A door decodes the client's body with its codec into the internal model,
opens sealed reasoning the client echoed, and encodes the Client's answer
back with the same codec — sealing reasoning the client's protocol cannot
carry natively (see :mod:`modelwire.gateway.seal`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..events import ReasoningBlock, ReasoningDelta, StreamEvent
from .errors import Door
from .seal import Sealer

__all__ = ["DOORS", "DoorSpec", "answer_args", "open_sealed", "seal_events", "seal_message"]


@dataclass(frozen=True, slots=True)
class DoorSpec:
    name: Door
    issuer: str  # reasoning blocks of this issuer travel natively through this door
    native_types: frozenset[str]  # block types the door's clients carry natively


DOORS: dict[Door, DoorSpec] = {
    "chat_completions": DoorSpec("chat_completions", "", frozenset()),
    "anthropic_messages": DoorSpec(
        "anthropic_messages", "anthropic", frozenset({"thinking", "redacted_thinking"})
    ),
    "responses": DoorSpec("responses", "openai", frozenset({"reasoning"})),
}


# each protocol's id prefix for an answer
_ANSWER_PREFIX: dict[Door, str] = {
    "chat_completions": "chatcmpl-", "anthropic_messages": "msg_", "responses": "resp_",
}


def answer_args(door: Door, request_id: str, created: int, model: str) -> dict[str, Any]:
    """The keywords the door's codec takes for one answer (``encode_response`` and
    ``StreamEncoder`` alike, the same for every codec): the answer's id, its time (a
    protocol without one ignores it), and the model name to show. The id reuses the request id's unique part (random per
    process, then a counter): unique per answer without drawing randomness per request,
    and an operator finds the access-log line from the id a client reports."""
    return {"id": _ANSWER_PREFIX[door] + request_id.removeprefix("req_"), "model": model, "created": created}


def _is_native(door: DoorSpec, issuer: str, block: dict[str, Any]) -> bool:
    if door.name == "chat_completions":
        return True  # OpenAI-compatible clients keep reasoning_details entries as they are
    return issuer == door.issuer and block.get("type") in door.native_types


def _sealed_block(door: DoorSpec, sealer: Sealer, issuer: str, block: dict[str, Any], text: str) -> dict[str, Any]:
    envelope = sealer.seal(issuer, block)
    if door.name == "anthropic_messages":
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


def seal_message(message: dict[str, Any], door: Door, sealer: Sealer) -> dict[str, Any]:
    """A non-stream answer: replace foreign reasoning blocks by sealed native ones."""
    spec = DOORS[door]
    details = message.get("reasoning_details")
    if not details or spec.name == "chat_completions":
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


def seal_events(events: Iterable[StreamEvent], door: Door, sealer: Sealer) -> list[StreamEvent]:
    """Stream events: a foreign ReasoningBlock becomes a signature delta plus a sealed native block."""
    spec = DOORS[door]
    if spec.name == "chat_completions":
        return list(events)
    out: list[StreamEvent] = []
    for ev in events:
        if isinstance(ev, ReasoningBlock) and not _is_native(spec, ev.issuer, ev.block):
            sealed = _sealed_block(spec, sealer, ev.issuer, ev.block, _block_text(ev.block))
            if door == "anthropic_messages":
                out.append(ReasoningDelta(signature=sealed["signature"]))
            out.append(ReasoningBlock(spec.issuer, sealed))
        else:
            out.append(ev)
    return out


def open_sealed(messages: list[dict[str, Any]], sealer: Sealer) -> list[dict[str, Any]]:
    """Restore sealed reasoning the client echoed; drop envelopes that do not open."""
    out = []
    for message in messages:
        details = message.get("reasoning_details") if message.get("role") == "assistant" else None
        if not details:
            out.append(message)
            continue
        restored = []
        changed = tampered = False
        for entry in details:
            block = entry.get("block", {}) if isinstance(entry, dict) else {}
            envelope = block.get("signature") or block.get("encrypted_content")
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
