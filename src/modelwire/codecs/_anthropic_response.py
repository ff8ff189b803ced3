"""Anthropic Messages responses: usage, finish reasons, errors, non-stream bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ..blockorder import ordered_items
from ..completion import Completion
from ..errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ContextLengthError,
    ModelNotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProtocolError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from ..events import (
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
from ..types import FinishReason, Usage

__all__ = [
    "DEFAULT_ISSUER",
    "STOP_REASONS",
    "block_events",
    "decode_error",
    "decode_response",
    "encode_response",
    "error_from",
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


def native_stop_reason(reason: str, native: str | None) -> str:
    return native if native in STOP_REASONS else _REVERSE.get(reason, "end_turn")


def stop_fields(reason: str, native: str | None, matched: str | None) -> tuple[str, str | None]:
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


# -------------------------------------------------------------------- errors
_ERROR_TYPES: dict[str, type[ProviderError]] = {
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "billing_error": BillingError,
    "rate_limit_error": RateLimitError,
    "overloaded_error": OverloadedError,
    "api_error": ServerError,
    "timeout_error": ServerError,
    "request_too_large": BadRequestError,
    "invalid_request_error": BadRequestError,
}
_BY_STATUS: dict[int, type[ProviderError]] = {
    401: AuthenticationError, 402: BillingError, 403: PermissionDeniedError,
    404: ModelNotFoundError, 429: RateLimitError, 529: OverloadedError,
}


def error_from(
    etype: str, message: str, *, status: int | None = None, headers: Mapping[str, str] | None = None,
    body: Any = None, request_id: str | None = None,
) -> ProviderError:
    cls = _ERROR_TYPES.get(etype)
    if etype == "not_found_error":
        # Anthropic answers 404 not_found_error "model: <id>" for an unknown model
        cls = ModelNotFoundError if "model" in message.lower() else BadRequestError
    if cls is BadRequestError and "prompt is too long" in message.lower():
        cls = ContextLengthError  # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
    if cls is None:
        cls = _BY_STATUS.get(status or 0) or (ServerError if (status or 0) >= 500 else BadRequestError)
    hdrs = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    retry_after = None
    if hdrs or body is not None:
        from ..resilience.retry_after import retry_after_seconds

        retry_after = retry_after_seconds(hdrs, body)
    return cls(
        message or etype or f"HTTP {status}",
        status=status,
        headers=hdrs,
        body=body,
        code=etype or None,
        request_id=request_id or hdrs.get("request-id") or hdrs.get("x-request-id"),
        retry_after=retry_after,
    )


def decode_error(status: int, headers: Mapping[str, str] | None, body: bytes | dict | str | None) -> ProviderError:
    parsed: Any = body
    if isinstance(body, (bytes, str)):
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = body.decode(errors="replace") if isinstance(body, bytes) else body
    err = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(err, dict):
        etype, message = str(err.get("type") or ""), str(err.get("message") or "")
    else:
        etype, message = "", (parsed if isinstance(parsed, str) else "")[:500]
    rid = parsed.get("request_id") if isinstance(parsed, dict) else None
    return error_from(etype, message, status=status, headers=headers, body=parsed, request_id=rid)


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
    from ..accumulate import Accumulator
    from ..events import UsageEvent

    data = load_json(body, "Anthropic response")
    if data.get("type") == "error":  # an error body behind a 200 (proxies do this)
        err = data.get("error") if isinstance(data.get("error"), dict) else {}
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
    result = acc.result()
    from dataclasses import replace

    return replace(result, raw=data)


def _answer_tool_use(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    try:
        args = orjson.loads(fn.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        args = {}
    return {"type": "tool_use", "id": call.get("id") or "", "name": fn.get("name") or "",
            "input": args if isinstance(args, dict) else {}}


def _answer_blocks(msg: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any], bool]:
    """The answer's blocks in the turn's order, the citations to put on its text, and
    whether any native thinking block was among them."""
    content: list[dict[str, Any]] = []
    citations: list[Any] = []
    thought = False
    for kind, item in ordered_items(msg):
        if kind == "reasoning":
            block = item.get("block") or {}
            if block.get("type") in THINKING_TYPES and item.get("issuer") == DEFAULT_ISSUER:
                content.append(block)
                thought = True
        elif kind == "passthrough":
            block = item.get("block") or {}
            if block.get("type") == "citations":
                citations.extend(block.get("citations") or [])
            elif block:
                content.append(block)
        elif kind == "text":
            text = item if isinstance(item, str) else (item.get("text", "") if item.get("type") == "text" else "")
            if text:
                content.append({"type": "text", "text": text})
        else:
            content.append(_answer_tool_use(item))
    return content, citations, thought


def encode_response(completion: Completion, request: dict[str, Any] | None = None, *,
                    id: str | None = None, model: str | None = None) -> dict[str, Any]:
    """A Completion as Anthropic's non-stream response body, its blocks in the order the
    upstream gave them (``block_order``; by default thinking, server tools, text, tools).
    ``id`` and ``model``: the answer's own (a gateway mints one per answer and names the
    model the client asked for); by default the completion's."""
    msg = completion.message
    content, citations, thought = _answer_blocks(msg)  # type: ignore[arg-type]
    if "block_order" not in msg:
        # the default grouping: the text parts are one text block, as before
        texts = [i for i, b in enumerate(content) if b.get("type") == "text" and set(b) == {"type", "text"}]
        if len(texts) > 1:
            joined = {"type": "text", "text": "".join(content[i]["text"] for i in texts)}
            content = [b for i, b in enumerate(content) if i not in texts[1:]]
            content[texts[0]] = joined
    if citations:
        for b in content:
            if b.get("type") == "text":
                b["citations"] = citations
                break
    if not thought and msg.get("reasoning_content"):
        # foreign reasoning: shown as thinking with no signature (the gateway seals it
        # where it can; an unsigned block coming back is dropped, never trusted)
        content.insert(0, {"type": "thinking", "thinking": msg["reasoning_content"], "signature": ""})
    stop, matched = stop_fields(completion.finish_reason, completion.native_finish_reason,
                                completion.stop_sequence)
    return {
        "id": id or completion.id or "msg_modelwire",
        "type": "message",
        "role": "assistant",
        "model": model or completion.model or (request or {}).get("model", ""),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": matched,
        "usage": native_usage(completion.usage),
    }
