"""Responses answers: the response object and the typed event stream.

The stream is what the official SDK's ``responses.stream()`` expects
(../shared/corpus): ``response.created`` first, ``response.in_progress``, per item
``output_item.added`` ... ``output_item.done`` (reasoning summary parts, content
parts and text deltas, function-call argument deltas), then ``response.completed``
(or ``response.incomplete``), every event with its ``sequence_number``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .codecs_sse import sse
from .model import Reply
from .rules import Parsed
from .wire import RenderContext, chunks, dumps, new_id

__all__ = ["body", "events", "output_items"]


def _usage(ctx: RenderContext) -> dict[str, Any]:
    u = ctx.usage
    return {
        "input_tokens": u.input,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": u.input + u.output,
    }


def output_items(parsed: Parsed, reply: Reply, ctx: RenderContext) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.reasoning:
        rid = new_id("rs_", 48)
        item: dict[str, Any] = {"id": rid, "type": "reasoning", "summary": []}
        if parsed.options.get("summary"):
            item["summary"] = [{"type": "summary_text", "text": reply.reasoning}]
        if parsed.options.get("encrypted"):
            follows = "function_call" if reply.calls else "message"
            item["encrypted_content"] = ctx.signer.seal_reasoning(rid, reply.reasoning, follows)
        items.append(item)
    if reply.text or not reply.calls:
        items.append({"id": new_id("msg_", 48), "type": "message", "status": "completed",
                      "content": [{"type": "output_text", "annotations": [], "logprobs": [],
                                   "text": reply.text}], "role": "assistant"})
    namespaces = parsed.options.get("namespaces") or {}
    for call in reply.calls:
        item = {"id": new_id("fc_", 48), "type": "function_call", "status": "completed",
                "arguments": call.arguments, "call_id": new_id("call_", 24), "name": call.name}
        if call.name in namespaces:  # a namespace member: the API names the two apart
            item["namespace"], item["name"] = namespaces[call.name]
        items.append(item)
    return items


def body(parsed: Parsed, reply: Reply, ctx: RenderContext,
         items: list[dict[str, Any]] | None = None, rid: str | None = None) -> dict[str, Any]:
    echo = parsed.options.get("echo") or {}
    reasoning = r if isinstance(r := echo.get("reasoning"), dict) else {}
    incomplete = reply.finish == "length"
    tools = [dict({"strict": True}, **t) for t in echo.get("tools") or []]
    return {
        "id": rid or new_id("resp_", 48),
        "object": "response",
        "created_at": ctx.created,
        "status": "incomplete" if incomplete else "completed",
        "background": False,
        "completed_at": ctx.created,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": echo.get("instructions"),
        "max_output_tokens": echo.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": parsed.model,
        "output": items if items is not None else output_items(parsed, reply, ctx),
        "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "previous_response_id": echo.get("previous_response_id"),
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "service_tier": "default",
        "store": parsed.options.get("store", True),
        "temperature": 1.0,
        "text": dict({"format": {"type": "text"}, "verbosity": "medium"},
                     **(echo["text"] if isinstance(echo.get("text"), dict) else {})),
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": tools,
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": _usage(ctx),
        "user": None,
        "metadata": echo.get("metadata") or {},
    }


def events(parsed: Parsed, reply: Reply, ctx: RenderContext,
           items: list[dict[str, Any]], rid: str) -> list[bytes]:
    final = body(parsed, reply, ctx, items, rid)
    out: list[bytes] = []

    def emit(data: dict[str, Any]) -> None:
        data["sequence_number"] = len(out)
        out.append(sse(dumps(data).decode(), data["type"]))

    pending = dict(final, status="in_progress", output=[], usage=None, completed_at=None,
                   incomplete_details=None)
    emit({"type": "response.created", "response": pending})
    emit({"type": "response.in_progress", "response": pending})
    for index, item in enumerate(items):
        _item_events(emit, index, item)
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    emit({"type": kind, "response": final})
    return out


def _item_events(emit: Callable[[dict[str, Any]], None], index: int, item: dict[str, Any]) -> None:
    iid, kind = item["id"], item["type"]
    base = {"item_id": iid, "output_index": index}
    if kind == "reasoning":
        emit({"type": "response.output_item.added", "output_index": index,
              "item": dict(item, summary=[])})
        for s_index, part in enumerate(item["summary"]):
            emit({"type": "response.reasoning_summary_part.added", **base, "summary_index": s_index,
                  "part": {"type": "summary_text", "text": ""}})
            for piece in chunks(part["text"]):
                emit({"type": "response.reasoning_summary_text.delta", **base,
                      "summary_index": s_index, "delta": piece})
            emit({"type": "response.reasoning_summary_text.done", **base, "summary_index": s_index,
                  "text": part["text"]})
            emit({"type": "response.reasoning_summary_part.done", **base, "summary_index": s_index,
                  "part": part})
    elif kind == "message":
        text = item["content"][0]["text"]
        emit({"type": "response.output_item.added", "output_index": index,
              "item": dict(item, status="in_progress", content=[])})
        part0 = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        emit({"type": "response.content_part.added", **base, "content_index": 0, "part": part0})
        for piece in chunks(text):
            emit({"type": "response.output_text.delta", **base, "content_index": 0, "delta": piece,
                  "logprobs": []})
        emit({"type": "response.output_text.done", **base, "content_index": 0, "text": text,
              "logprobs": []})
        emit({"type": "response.content_part.done", **base, "content_index": 0,
              "part": item["content"][0]})
    else:
        emit({"type": "response.output_item.added", "output_index": index,
              "item": dict(item, status="in_progress", arguments="")})
        for piece in chunks(item["arguments"], 8):
            emit({"type": "response.function_call_arguments.delta", **base, "delta": piece})
        emit({"type": "response.function_call_arguments.done", **base,
              "arguments": item["arguments"]})
    emit({"type": "response.output_item.done", "output_index": index, "item": item})
