"""Anthropic Messages answers: the JSON body and the SSE event sequence.

The stream follows what api.anthropic.com sends (see ../shared/corpus):
``message_start``, ``content_block_start``, a ``ping`` after the first block start,
``thinking_delta`` / ``signature_delta`` / ``text_delta`` / ``input_json_delta``,
``content_block_stop``, ``message_delta`` (cumulative usage), ``message_stop``.
Like the real API, data lines carry trailing padding spaces after the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .codecs_sse import sse
from .model import Reply
from .rules import Parsed
from .signing import thinking_place
from .wire import RenderContext, chunks, dumps, new_id

__all__ = ["body", "events"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _usage(ctx: RenderContext, output: int | None = None) -> dict[str, Any]:
    u = ctx.usage
    return {
        "input_tokens": u.input - u.cache_read - u.cache_write,  # Anthropic excludes cache
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": u.cache_write, "ephemeral_1h_input_tokens": 0},
        "output_tokens": u.output if output is None else output,
        "service_tier": "standard",
    }


def _blocks(reply: Reply, ctx: RenderContext) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning,
                       "signature": ctx.signer.sign_thinking(reply.reasoning, 0)})
    if reply.text or not reply.calls:
        blocks.append({"type": "text", "text": reply.text})
    ordinal = 1
    for i, call in enumerate(reply.calls):
        if i and reply.reasoning and ctx.interleaved:
            # interleaved thinking: a signed thinking block before each further tool call
            text = f"Next I will call {call.name}."
            blocks.append({"type": "thinking", "thinking": text,
                           "signature": ctx.signer.sign_thinking(text, thinking_place(ordinal, i))})
            ordinal += 1
        blocks.append({"type": "tool_use", "id": new_id("toolu_01", 22), "name": call.name,
                       "input": json.loads(call.arguments or "{}")})
    return blocks


def body(parsed: Parsed, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    return {
        "id": new_id("msg_01", 22),
        "type": "message",
        "role": "assistant",
        "model": parsed.model,
        "content": _blocks(reply, ctx),
        "stop_reason": "stop_sequence" if reply.stop_sequence else _STOP[reply.finish],
        "stop_sequence": reply.stop_sequence,
        "usage": _usage(ctx),
    }


def events(parsed: Parsed, reply: Reply, ctx: RenderContext) -> list[bytes]:
    full = body(parsed, reply, ctx)
    out: list[bytes] = []

    def emit(data: dict[str, Any]) -> None:
        pad = " " * ((len(out) * 7) % 16)  # Anthropic pads data lines with spaces
        out.append(sse(dumps(data).decode() + pad, data["type"]))

    start = dict(full, content=[], stop_reason=None, usage=_usage(ctx, output=1))
    emit({"type": "message_start", "message": start})
    for index, block in enumerate(full["content"]):
        _block_events(emit, index, block)
        if index == 0:
            emit({"type": "ping"})
    emit({"type": "message_delta",
          "delta": {"stop_reason": full["stop_reason"], "stop_sequence": full["stop_sequence"]},
          "usage": {k: v for k, v in full["usage"].items() if k not in ("cache_creation", "service_tier")}})
    emit({"type": "message_stop"})
    return out


def _block_events(emit: Callable[[dict[str, Any]], None], index: int, block: dict[str, Any]) -> None:
    kind = block["type"]
    if kind == "thinking":
        emit({"type": "content_block_start", "index": index,
              "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        for piece in chunks(block["thinking"]):
            emit({"type": "content_block_delta", "index": index,
                  "delta": {"type": "thinking_delta", "thinking": piece}})
        emit({"type": "content_block_delta", "index": index,
              "delta": {"type": "signature_delta", "signature": block["signature"]}})
    elif kind == "text":
        emit({"type": "content_block_start", "index": index,
              "content_block": {"type": "text", "text": ""}})
        for piece in chunks(block["text"]):
            emit({"type": "content_block_delta", "index": index,
                  "delta": {"type": "text_delta", "text": piece}})
    else:
        emit({"type": "content_block_start", "index": index,
              "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                "input": {}}})
        for piece in [""] + chunks(json.dumps(block["input"]), 8):
            emit({"type": "content_block_delta", "index": index,
                  "delta": {"type": "input_json_delta", "partial_json": piece}})
    emit({"type": "content_block_stop", "index": index})
