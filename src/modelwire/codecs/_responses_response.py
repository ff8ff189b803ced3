"""Responses API bodies: ``response`` objects <-> :class:`~modelwire.Completion`, and errors.

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
import secrets
from collections.abc import Mapping
from typing import Any

import orjson

from ..accumulate import Accumulator
from ..blockorder import ordered_items
from ..completion import Completion
from ..errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ContentFilterError,
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
    RefusalDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from ..types import FinishReason, Request, Usage
from ._responses_decode import custom_input, custom_names, reasoning_texts
from ._responses_hosted import output_item
from ._responses_namespaces import call_name, namespace_table, split_name
from ._responses_request import request_fields
from ._responses_shell import is_shell_call, shell_call_item

__all__ = [
    "DEFAULT_ISSUER",
    "decode_error",
    "decode_response",
    "encode_response",
    "error_from_payload",
    "finish_of",
    "mint_id",
    "output_events",
    "response_object",
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
def usage_in(raw: Any) -> Usage:
    """Responses usage -> internal usage (``input_tokens`` already includes cached)."""
    raw = raw if isinstance(raw, dict) else {}
    inp = _int(raw.get("input_tokens"))
    out = _int(raw.get("output_tokens"))
    in_details = raw.get("input_tokens_details") or {}
    out_details = raw.get("output_tokens_details") or {}
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


def _int(value: Any) -> int:
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


def annotation_in(raw: Any, offset: int = 0) -> dict[str, Any] | None:
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


def annotation_out(annotation: Any) -> dict[str, Any] | None:
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
    completion = acc.result()
    return Completion(
        message=completion.message,
        finish_reason=completion.finish_reason,
        usage=completion.usage,
        model=completion.model,
        id=completion.id,
        native_finish_reason=completion.native_finish_reason,
        raw=data,
    )


def _json(body: Any) -> dict[str, Any]:
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        try:
            body = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ProtocolError(f"response body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ProtocolError("response body must be a JSON object")
    return body


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
    completion: Completion, request: Request | None = None, *, created_at: int = 0,
    id: str | None = None, model: str | None = None,
) -> dict[str, Any]:
    """A :class:`Completion` -> the ``response`` object ``POST /responses`` returns, its
    items in the turn's order (``block_order``).
    ``id`` and ``model``: the answer's own (a gateway mints one per answer and names the
    model the client asked for; item ids derive from ``id``); by default the completion's."""
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
        id=rid, model=model or completion.model, status=status, request=request, created_at=created_at,
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


def _status_of(reason: FinishReason) -> tuple[str, str | None]:
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


# ================================================================ errors
_BY_STATUS: dict[int, type[ProviderError]] = {
    400: BadRequestError, 401: AuthenticationError, 402: BillingError, 403: PermissionDeniedError,
    404: BadRequestError, 409: BadRequestError, 413: BadRequestError, 422: BadRequestError,
    429: RateLimitError, 529: OverloadedError,
}
_BY_CODE: dict[str, type[ProviderError]] = {
    "context_length_exceeded": ContextLengthError,
    "model_not_found": ModelNotFoundError,
    "insufficient_quota": BillingError,
    "billing_hard_limit_reached": BillingError,
    "credit_balance_exhausted": BillingError,
    "rate_limit_exceeded": RateLimitError,
    "too_many_requests": RateLimitError,
    "content_filter": ContentFilterError,
    "content_policy_violation": ContentFilterError,
    "server_error": ServerError,
    "server_is_overloaded": OverloadedError,
    "overloaded": OverloadedError,
    "invalid_api_key": AuthenticationError,
}
# response.failed / error-event codes carry no HTTP status: give each a plausible one
_STATUS_OF_CLASS: dict[type[ProviderError], int] = {
    RateLimitError: 429, BillingError: 402, ServerError: 500, OverloadedError: 529,
    AuthenticationError: 401, ModelNotFoundError: 404,
}


def _error_class(status: int | None, code: str | None, kind: str | None) -> type[ProviderError]:
    for key in (code, kind):
        if key and key in _BY_CODE:
            return _BY_CODE[key]
    if status is None:
        return ServerError if not code else BadRequestError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    return BadRequestError


def error_from_payload(
    err: Mapping[str, Any], *, status: int | None = None, headers: Mapping[str, str] | None = None,
    body: Any = None,
) -> ProviderError:
    """An error object (``{"message", "type", "code", "param"}``) -> the right class."""
    err = err if isinstance(err, Mapping) else {}
    code = err.get("code") if isinstance(err.get("code"), str) else None
    kind = err.get("type") if isinstance(err.get("type"), str) else None
    message = err.get("message") if isinstance(err.get("message"), str) else None
    cls = _error_class(status, code, kind)
    hdrs = {k.lower(): v for k, v in (headers or {}).items()}
    return cls(
        message or f"provider error {code or kind or status}",
        status=status if status is not None else _STATUS_OF_CLASS.get(cls),
        request_id=hdrs.get("x-request-id") or hdrs.get("request-id"),
        retry_after=_retry_after(hdrs, body),
        headers=hdrs,
        body=body if body is not None else dict(err),
        code=code or kind,
    )


def decode_error(status: int, headers: Mapping[str, str], body: bytes | dict[str, Any] | str | None) -> ProviderError:
    """An HTTP error answer from a Responses endpoint -> :class:`ProviderError`."""
    parsed: Any = body
    if isinstance(body, (bytes, bytearray, str)):
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = body.decode(errors="replace") if isinstance(body, (bytes, bytearray)) else body
    err: Any = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(err, str):
        err = {"message": err}
    if not isinstance(err, dict):
        err = {"message": parsed if isinstance(parsed, str) and parsed else f"HTTP {status}"}
    return error_from_payload(err, status=status, headers=headers, body=parsed)


def _retry_after(headers: dict[str, str], body: Any) -> float | None:
    try:
        from ..resilience.retry_after import retry_after_seconds
    except ImportError:  # the resilience part may not be installed in this checkout yet
        return _simple_retry_after(headers)
    return retry_after_seconds(headers, body)


def _simple_retry_after(headers: dict[str, str]) -> float | None:
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(key)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None
