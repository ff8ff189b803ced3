"""Anthropic Messages responses: usage, finish reasons, errors, non-stream bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...completion import Completion
from ...errors import (
    ProtocolError,
)
from ...events import (
    Annotation,
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from ...types import FinishReason, Usage
from .errors import error_from

__all__ = [
    "DEFAULT_ISSUER",
    "STOP_REASONS",
    "block_events",
    "decode_response",
    "finish_reason",
    "load_json",
    "native_usage",
    "usage_from",
]

DEFAULT_ISSUER = "anthropic"

# Anthropic stop_reason -> OpenAI finish_reason. pause_turn (a server tool loop hit its
# iteration limit: send the turn back to continue) stays visible in Finish.native.
STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
_REVERSE: dict[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
THINKING_TYPES = ("thinking", "redacted_thinking")


def finish_reason(stop_reason: str | None) -> FinishReason:
    return STOP_REASONS.get(stop_reason or "", "stop")


def citation_notes(citations: Any, start: int, end: int) -> list[Annotation]:
    """A text block's citations that name a web page (a web search's
    ``web_search_result_location``) as url_citation annotations over the block's span;
    the citations themselves stay in the block's passthrough, for Anthropic."""
    out: list[Annotation] = []
    for cite in citations if isinstance(citations, list) else ():
        if isinstance(cite, dict) and isinstance(cite.get("url"), str):
            out.append(Annotation({"type": "url_citation", "url_citation": {
                "url": cite["url"], "title": str(cite.get("title") or ""), "start_index": start,
                "end_index": end}}))
    return out


def native_stop_reason(reason: str | None, native: str | None) -> str:
    return native if native in STOP_REASONS else _REVERSE.get(reason or "", "end_turn")


def stop_fields(reason: str | None, native: str | None, matched: str | None) -> tuple[str, str | None]:
    """``stop_reason`` and ``stop_sequence`` of an answer: a known stop sequence means
    ``stop_sequence`` whatever the upstream's own word for it (vLLM: finish_reason stop,
    with the sequence in ``stop_reason``)."""
    if matched and reason == "stop":
        return "stop_sequence", matched
    return native_stop_reason(reason, native), None


def load_json(body: bytes | str | dict[str, Any], what: str) -> dict[str, Any]:
    if isinstance(body, dict):
        return body
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"{what} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError(f"{what} is not a JSON object")
    return data


# --------------------------------------------------------------------- usage
def _int(raw: Mapping[str, Any], key: str) -> int:
    v = raw.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def usage_from(raw: Mapping[str, Any]) -> Usage:
    """Anthropic usage -> OpenAI semantics. Anthropic's ``input_tokens`` EXCLUDES cache
    reads and writes, OpenAI's ``prompt_tokens`` includes them (litellm#11789 billed
    cache reads twice by getting this wrong)."""
    read = _int(raw, "cache_read_input_tokens")
    write = _int(raw, "cache_creation_input_tokens")
    prompt = _int(raw, "input_tokens") + read + write
    completion = _int(raw, "output_tokens")
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "reasoning_tokens": 0,  # Anthropic counts thinking inside output_tokens, unsplit
        "raw": dict(raw),
    }


def native_usage(usage: Usage | None) -> dict[str, Any]:
    """Our usage -> Anthropic's usage object, always from the counts: the upstream's
    ``raw`` may be another protocol's with the same key names (a Responses usage has
    ``input_tokens`` that include cache reads, which Anthropic's exclude)."""
    if not usage:
        return {"input_tokens": 0, "output_tokens": 0}
    read, write = usage.get("cache_read_tokens", 0), usage.get("cache_write_tokens", 0)
    return {
        "input_tokens": max(usage.get("prompt_tokens", 0) - read - write, 0),
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": usage.get("completion_tokens", 0),
    }


# ------------------------------------------------------------- non-stream body
def block_events(block: dict[str, Any], index: int, issuer: str, offset: int = 0) -> list[StreamEvent]:
    """The events one finished content block stands for (shared with the stream decoder
    so a stream and its non-stream twin fold to the same message). ``offset``: the
    message text's length before this block (where a citation's span starts)."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text") or ""
        out: list[StreamEvent] = [TextDelta(text)] if text else []
        if block.get("citations"):
            out.append(Passthrough(issuer, {"type": "citations", "citations": block["citations"]}))
            out += citation_notes(block["citations"], offset, offset + len(text))
        return out
    if kind == "thinking":
        out = [ReasoningDelta(text=block.get("thinking") or "")] if block.get("thinking") else []
        if block.get("signature"):
            out.append(ReasoningDelta(signature=block["signature"]))
        return [*out, ReasoningBlock(issuer, block)]
    if kind == "redacted_thinking":
        return [ReasoningDelta(redacted=block.get("data") or ""), ReasoningBlock(issuer, block)]
    if kind == "tool_use":
        args = orjson.dumps(block.get("input") or {}).decode()
        return [
            ToolCallStart(index, str(block.get("id") or ""), str(block.get("name") or "")),
            ToolCallDelta(index, args),
            ToolCallEnd(index),
        ]
    # server_tool_use, web_search_tool_result, tool_search_tool_result, mcp_tool_use...:
    # no Chat Completions meaning; kept verbatim
    return [Passthrough(issuer, block)]


def decode_response(body: bytes | dict[str, Any], *, issuer: str | None = None) -> Completion:
    """An Anthropic non-stream body -> Completion (ProtocolError for malformed bodies)."""
    try:
        return _decode_response(body, issuer)
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise ProtocolError(f"malformed Anthropic response: {type(exc).__name__}: {exc}") from exc


def _decode_response(body: bytes | dict[str, Any], issuer: str | None) -> Completion:
    from ...accumulate import Accumulator
    from ...events import UsageEvent

    data = load_json(body, "Anthropic response")
    if data.get("type") == "error":  # an error body behind a 200 (proxies do this)
        err = data.get("error")
        if not isinstance(err, dict):
            err = {}
        raise error_from(str(err.get("type") or ""), str(err.get("message") or ""), body=data,
                         request_id=data.get("request_id"))
    content = data.get("content")
    if not isinstance(content, list):
        raise ProtocolError("Anthropic response has no content list")
    issuer = issuer or DEFAULT_ISSUER
    acc = Accumulator(model=str(data.get("model") or ""), id=str(data.get("id") or ""), ordered=True)
    calls = 0
    text_len = 0
    for block in content:
        if not isinstance(block, dict):
            raise ProtocolError("Anthropic response content holds a non-object")
        for ev in block_events(block, calls, issuer, text_len):
            acc.feed(ev)
        if block.get("type") == "text":
            text_len += len(block.get("text") or "")
        calls += block.get("type") == "tool_use"
    if isinstance(data.get("usage"), dict):
        acc.feed(UsageEvent(usage_from(data["usage"])))
    stop = data.get("stop_reason")
    matched = data.get("stop_sequence")
    acc.feed(Finish(finish_reason(stop), native=stop, stop_sequence=matched if isinstance(matched, str) else None))
    return acc.result(raw=data)


