"""Responses API bodies: an upstream's ``response`` object -> :class:`~modelwire.Completion`.

A response's ``output`` items fold into one assistant message: ``output_text``
parts are its text, ``refusal`` parts its refusal, ``function_call`` items its
tool calls (the ``call_id`` is the tool-call id, never the ``fc_`` item id),
``reasoning`` items its ``reasoning_content`` (summary and raw reasoning text)
plus one :class:`~modelwire.events.ReasoningBlock` each (the item verbatim, so
``encrypted_content`` goes back byte-exact), and any other item (hosted tool
calls such as ``web_search_call``) a :class:`~modelwire.events.Passthrough`.

Non-stream bodies are decoded by turning them into the same events the stream
decoder emits and folding them with the one :class:`~modelwire.Accumulator`,
so a stream and its non-stream twin cannot disagree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from ...accumulate import Accumulator
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
    RefusalDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from ...types import FinishReason, JSONValue, Usage
from ._decode_request import reasoning_texts
from ._namespaces import call_name
from .errors import decode_error, error_from_payload

__all__ = [
    "DEFAULT_ISSUER",
    "decode_response",
    "finish_of",
    "mint_id",
    "output_events",
    "usage_in",
    "usage_out",
]

DEFAULT_ISSUER = "openai"
REASONING_SEPARATOR = "\n\n"  # between summary parts / reasoning items in reasoning_content


def mint_id(prefix: str, *parts: object) -> str:
    """A deterministic id in OpenAI's style (codecs have no clock or randomness)."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:48]
    return f"{prefix}_{digest}"


# ================================================================ usage / finish
def usage_in(raw: JSONValue) -> Usage:
    """Responses usage -> internal usage (``input_tokens`` already includes cached)."""
    raw = raw if isinstance(raw, dict) else {}
    inp = _int(raw.get("input_tokens"))
    out = _int(raw.get("output_tokens"))
    in_details = raw.get("input_tokens_details")
    in_details = in_details if isinstance(in_details, dict) else {}
    out_details = raw.get("output_tokens_details")
    out_details = out_details if isinstance(out_details, dict) else {}
    return {
        "prompt_tokens": inp,
        "completion_tokens": out,
        "total_tokens": _int(raw.get("total_tokens")) or inp + out,
        "cache_read_tokens": _int(in_details.get("cached_tokens")),
        # Bedrock Mantle reports prompt-cache writes here; OpenAI never does
        "cache_write_tokens": _int(in_details.get("cache_write_tokens")),
        "reasoning_tokens": _int(out_details.get("reasoning_tokens")),
        "raw": raw,
    }


def _int(value: JSONValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_out(usage: Usage | None) -> dict[str, Any] | None:
    """Internal usage -> the Responses API's usage object, always from the counts: the
    upstream's ``raw`` may be another protocol's with the same key names (Anthropic's has
    ``input_tokens`` / ``output_tokens`` but no ``total_tokens``, which Codex requires)."""
    if usage is None:
        return None
    return {
        "input_tokens": usage["prompt_tokens"],
        # cache_write_tokens: required by the API's schema (openai >= 3.5x types)
        "input_tokens_details": {"cache_write_tokens": usage["cache_write_tokens"],
                                 "cached_tokens": usage["cache_read_tokens"]},
        "output_tokens": usage["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
        "total_tokens": usage["total_tokens"],
    }


def finish_of(response: Mapping[str, Any], has_calls: bool) -> Finish:
    """``status`` / ``incomplete_details`` -> finish reason (OpenAI's vocabulary)."""
    status = response.get("status")
    if status == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason") or "unknown"
        mapped: FinishReason = "content_filter" if reason == "content_filter" else "length"
        return Finish(mapped, f"incomplete: {reason}")
    return Finish("tool_calls" if has_calls else "stop", status if isinstance(status, str) else None)


# ================================================================ output -> events
def output_events(response: Mapping[str, Any], issuer: str) -> list[StreamEvent]:
    """The events a stream of ``response`` would have produced, in order."""
    output = response.get("output")
    if output is None:
        output = []
    if not isinstance(output, list):
        raise ProtocolError("response 'output' must be a list")
    events: list[StreamEvent] = []
    calls = 0
    reasoning_seen = False
    text_len = 0  # of the message text so far: annotations count from its start
    for item in output:
        if not isinstance(item, dict):
            raise ProtocolError("response output item must be an object")
        kind = item.get("type")
        if kind == "message":
            text, refusal = _message_text(item)
            if text:
                events.append(TextDelta(text))
                events += message_annotations(item, text_len)
                text_len += len(text)
            if refusal:
                events.append(RefusalDelta(refusal))
        elif kind == "function_call":
            if not isinstance(item.get("name"), str):
                raise ProtocolError("function_call output item without a name")
            events.append(ToolCallStart(calls, str(item.get("call_id") or ""), call_name(item)))
            arguments = item.get("arguments") or ""
            if not isinstance(arguments, str):
                raise ProtocolError("function_call arguments must be a string")
            if arguments:
                events.append(ToolCallDelta(calls, arguments))
            events.append(ToolCallEnd(calls))
            calls += 1
        elif kind == "reasoning":
            for text in reasoning_texts(item):
                events.append(ReasoningDelta(REASONING_SEPARATOR + text if reasoning_seen else text))
                reasoning_seen = True
            events.append(ReasoningBlock(issuer, item))
        elif isinstance(kind, str):
            events.append(Passthrough(issuer, item))
        else:
            raise ProtocolError("response output item without a type")
    if not output and isinstance(response.get("output_text"), str) and response["output_text"]:
        # some compatible servers send only the SDK convenience field (Hermes #normalize)
        events.append(TextDelta(response["output_text"]))
    if response.get("usage") is not None:
        events.append(UsageEvent(usage_in(response.get("usage"))))
    events.append(finish_of(response, calls > 0))
    return events


def message_annotations(item: Mapping[str, Any], offset: int) -> list[Annotation]:
    """A message item's ``output_text`` annotations as events, their indices moved to count
    from the start of the whole message text (``offset``: its length before this item)."""
    out: list[Annotation] = []
    content = item.get("content")
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") == "output_text":
            out += part_annotations(part, offset)
            offset += len(part.get("text") or "")
    return out


def part_annotations(part: Mapping[str, Any], offset: int) -> list[Annotation]:
    """An ``output_text`` part's annotations as events; ``offset``: where the part's text
    starts in the message text."""
    found = [annotation_in(raw, offset) for raw in part.get("annotations") or ()]
    return [Annotation(a) for a in found if a is not None]


def annotation_in(raw: JSONValue, offset: int = 0) -> dict[str, Any] | None:
    """A Responses annotation (flat: ``{"type": "url_citation", "url": ...}``) -> Chat
    Completions' shape (the fields under the type's name), indices moved by ``offset``."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        return None
    kind = raw["type"]
    inner = {k: v for k, v in raw.items() if k != "type"}
    for key in ("start_index", "end_index"):
        if type(inner.get(key)) is int:
            inner[key] += offset
    return {"type": kind, kind: inner}


def annotation_out(annotation: JSONValue) -> dict[str, Any] | None:
    """Chat Completions' annotation shape -> the Responses API's flat one."""
    if not isinstance(annotation, dict) or not isinstance(annotation.get("type"), str):
        return None
    inner = annotation.get(annotation["type"])
    return {"type": annotation["type"], **inner} if isinstance(inner, dict) else None


def _message_text(item: Mapping[str, Any]) -> tuple[str, str]:
    content = item.get("content") or []
    if isinstance(content, str):
        return content, ""
    text, refusal = [], []
    for part in content:
        if not isinstance(part, dict):
            raise ProtocolError("message content part must be an object")
        if part.get("type") == "output_text":
            text.append(part.get("text") or "")
        elif part.get("type") == "refusal":
            refusal.append(part.get("refusal") or "")
    return "".join(text), "".join(refusal)


# ================================================================ decode
def decode_response(body: bytes | dict[str, Any], *, issuer: str | None = None) -> Completion:
    """A ``response`` object -> :class:`Completion`. A ``failed`` one raises its error."""
    data = _json(body)
    if "error" in data and data.get("error") and "output" not in data:
        raise decode_error(400, {}, data)
    if data.get("status") == "failed":
        raise error_from_payload(data.get("error") or {}, body=data)
    acc = Accumulator(model=str(data.get("model") or ""), id=str(data.get("id") or ""), ordered=True)
    for event in output_events(data, issuer or DEFAULT_ISSUER):
        acc.feed(event)
    return acc.result(raw=data)


def _json(body: JSONValue) -> dict[str, Any]:
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        try:
            body = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ProtocolError(f"response body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ProtocolError("response body must be a JSON object")
    return body


