"""Chat Completions answers: the JSON body and the ``chat.completion.chunk`` stream.

As OpenAI sends it (../shared/corpus): the first chunk carries the role, tool calls
open with ``id``/``type``/``name`` and ``arguments: ""`` and continue id-less by
``index``, the finish chunk has an empty delta, the usage chunk (only with
``stream_options.include_usage``) has ``choices: []``, then ``data: [DONE]``.
DeepSeek-style profiles put reasoning in ``reasoning_content``.
"""

from __future__ import annotations

from typing import Any

from .codecs_sse import DONE, sse
from .model import Reply
from .rules import Parsed
from .wire import RenderContext, chunks, dumps, new_id

__all__ = ["body", "events"]


def _usage(ctx: RenderContext) -> dict[str, Any]:
    u = ctx.usage
    return {
        "prompt_tokens": u.input,  # OpenAI semantics: cached tokens included
        "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0,
                                      "rejected_prediction_tokens": 0},
    }


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"id": new_id("call_", 24), "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}} for c in reply.calls]


def body(parsed: Parsed, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None,
                               "refusal": None, "annotations": []}
    if reply.reasoning and ctx.emits_reasoning_content:
        message["reasoning_content"] = reply.reasoning
    if reply.calls:
        message["tool_calls"] = _calls(reply)
    return {
        "id": new_id("chatcmpl-", 29),
        "object": "chat.completion",
        "created": ctx.created,
        "model": parsed.model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": reply.finish}],
        "usage": _usage(ctx),
        "service_tier": "default",
        "system_fingerprint": "fp_emulator",
    }


def events(parsed: Parsed, reply: Reply, ctx: RenderContext) -> list[bytes]:
    cid = new_id("chatcmpl-", 29)
    include_usage = bool(parsed.options.get("include_usage"))
    out: list[bytes] = []

    def emit(delta: dict[str, Any], finish: str | None = None) -> None:
        chunk: dict[str, Any] = {
            "id": cid, "object": "chat.completion.chunk", "created": ctx.created,
            "model": parsed.model, "service_tier": "default", "system_fingerprint": "fp_emulator",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            chunk["usage"] = None
        out.append(sse(dumps(chunk).decode()))

    first: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
    emit(first)
    if reply.reasoning and ctx.emits_reasoning_content:
        for piece in chunks(reply.reasoning):
            emit({"content": None, "reasoning_content": piece})
    for piece in chunks(reply.text):
        emit({"content": piece})
    for index, call in enumerate(_calls(reply)):
        emit({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                              "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for piece in chunks(call["function"]["arguments"], 8):
            emit({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    emit({}, reply.finish)
    if include_usage:
        out.append(sse(dumps({
            "id": cid, "object": "chat.completion.chunk", "created": ctx.created,
            "model": parsed.model, "service_tier": "default", "system_fingerprint": "fp_emulator",
            "choices": [], "usage": _usage(ctx)}).decode()))
    out.append(DONE)
    return out
