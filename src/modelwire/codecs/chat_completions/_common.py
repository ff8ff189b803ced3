"""Pieces the Chat Completions codec shares between bodies and streams.

Usage conversion (every provider's variant into :class:`~modelwire.types.Usage`),
finish reasons, error bodies, and JSON parsing with typed errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...errors import (
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
from ...types import FinishReason, JSONValue, Usage

# isinstance(x, MAPPING) answers for a dict without the ABC machinery (a Python-level
# __instancecheck__ call per check: a dozen per request on the gateway's path)
MAPPING = (dict, Mapping)

DEFAULT_ISSUER = "openai"

# Provider finish reasons -> ours. Anything else is "stop" with the native kept.
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    # legacy OpenAI function calling
    "function_call": "tool_calls",
    # Anthropic's OpenAI-compatible endpoint and some proxies leak native names
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    # Hugging Face TGI and vLLM variants
    "eos": "stop",
    "eos_token": "stop",
    "model_length": "length",
    # Gemini via compat layers (upper case)
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
}


def finish_reason(native: JSONValue, has_tool_calls: bool) -> tuple[FinishReason, str | None]:
    """Our finish reason and the provider's own (``None`` when they are the same).

    Ollama and some llama.cpp builds answer ``stop`` for a turn that made tool
    calls; an agent loop keys on ``tool_calls``, so a turn with calls that
    stopped normally is ``tool_calls`` (the native ``stop`` is kept).
    """
    if not isinstance(native, str) or not native:
        return ("tool_calls" if has_tool_calls else "stop"), None
    reason = _FINISH.get(native, "stop")
    if reason == "stop" and has_tool_calls:
        reason = "tool_calls"
    return reason, (None if native == reason else native)


def usage_from_wire(raw: Mapping[str, Any]) -> Usage:
    """Any provider's Chat Completions usage object -> our :class:`Usage`.

    Cached prompt tokens: OpenAI ``prompt_tokens_details.cached_tokens``;
    DeepSeek ``prompt_cache_hit_tokens``; Mistral ``num_cached_tokens``;
    Hugging Face routers top-level ``cached_tokens``. Cache writes: OpenRouter
    and Avian ``prompt_tokens_details.cache_write_tokens``, Vercel
    ``cache_creation_input_tokens``. Reasoning: ``completion_tokens_details.
    reasoning_tokens``.
    """
    get = raw.get
    # the three every answer has, checked inline (no call each: this runs per answer)
    prompt = get("prompt_tokens")
    prompt = prompt if type(prompt) is int else 0
    completion = get("completion_tokens")
    completion = completion if type(completion) is int else 0
    total = get("total_tokens")
    total = total if type(total) is int else 0
    pdet = get("prompt_tokens_details")
    pdet = pdet if pdet and isinstance(pdet, MAPPING) else {}
    cdet = get("completion_tokens_details")
    cdet = cdet if cdet and isinstance(cdet, MAPPING) else {}
    # the first count given, in loops rather than a call per candidate (per answer)
    cache_read = 0
    for value in (pdet.get("cached_tokens"), get("prompt_cache_hit_tokens"), get("num_cached_tokens"),
                  get("cached_tokens")):
        if value and type(value) is int:  # not bool (a subclass); JSON has no other ints
            cache_read = value
            break
    cache_write = 0
    for value in (pdet.get("cache_write_tokens"), get("cache_creation_input_tokens")):
        if value and type(value) is int:
            cache_write = value
            break
    reasoning = cdet.get("reasoning_tokens")
    reasoning = reasoning if type(reasoning) is int else 0
    if reasoning and total == prompt + completion + reasoning:
        # xAI counts reasoning outside completion_tokens (total = prompt +
        # completion + reasoning); OpenAI semantics put it inside.
        completion += reasoning
    if not total:
        total = prompt + completion
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "reasoning_tokens": reasoning,
        "raw": dict(raw),
    }


def usage_to_wire(usage: Usage) -> dict[str, Any]:
    """Our usage -> OpenAI's usage object (details only when they say something)."""
    out: dict[str, Any] = {
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "total_tokens": usage["total_tokens"],
    }
    if usage.get("cache_read_tokens") or usage.get("cache_write_tokens"):
        details: dict[str, int] = {"cached_tokens": usage.get("cache_read_tokens", 0)}
        if usage.get("cache_write_tokens"):
            details["cache_write_tokens"] = usage["cache_write_tokens"]
        out["prompt_tokens_details"] = details
    if usage.get("reasoning_tokens"):
        out["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning_tokens"]}
    return out


def loads(data: bytes | str, what: str) -> Any:
    """Parse JSON; malformed input is a :class:`ProtocolError` naming ``what``."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"{what} is not valid JSON: {exc}") from exc


def dumps(obj: JSONValue) -> bytes:
    return orjson.dumps(obj)


# ------------------------------------------------------------------------ errors
_BY_CODE: dict[str, type[ProviderError]] = {
    "context_length_exceeded": ContextLengthError,
    "string_above_max_length": ContextLengthError,
    "content_filter": ContentFilterError,
    "content_policy_violation": ContentFilterError,
    "model_not_found": ModelNotFoundError,
    "deploymentnotfound": ModelNotFoundError,  # Azure: the deployment is the model
    "insufficient_quota": BillingError,  # OpenAI answers 429 for an empty balance
    "invalid_api_key": AuthenticationError,
    "rate_limit_exceeded": RateLimitError,
    "server_error": ServerError,
    "overloaded_error": OverloadedError,
    "overloaded": OverloadedError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "insufficient_balance": BillingError,  # DeepSeek 402
}

_BY_STATUS: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: BillingError,
    403: PermissionDeniedError,
    404: BadRequestError,
    408: ServerError,
    409: BadRequestError,
    413: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
    529: OverloadedError,
}


def error_class(status: int | None, code: str | None, type_: str | None) -> type[ProviderError]:
    for key in (code, type_):
        if key and key.lower() in _BY_CODE:
            return _BY_CODE[key.lower()]
    if status is None:
        return ServerError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    if status >= 400:
        return BadRequestError
    return ServerError  # an error body with a 2xx status: the provider failed


def parse_error_body(body: bytes | dict | list | str | None) -> tuple[Any, dict[str, Any]]:
    """(parsed body, the error object inside it) for every shape seen in the wild.

    * OpenAI, Groq, DeepSeek, xAI: ``{"error": {"message", "type", "param", "code"}}``
    * OpenRouter: ``{"error": {"code": 429, "message", "metadata": {"raw", "provider_name"}}}``
    * Mistral: ``{"object": "error", "message", "type", "code"}`` (flat), and 422
      validation bodies ``{"detail": [...]}``
    * Gemini's OpenAI-compatible endpoint: a list holding one ``{"error": {...}}``
    * plain text (proxies, HTML pages)
    """
    parsed: Any = body
    if isinstance(body, (bytes, bytearray, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else body
        try:
            parsed = orjson.loads(text) if text.strip() else None
        except orjson.JSONDecodeError:
            return text, {"message": text.strip()[:2000]}
    node = parsed
    if isinstance(node, list) and node and isinstance(node[0], dict):
        node = node[0]
    if not isinstance(node, dict):
        return parsed, {"message": "" if node is None else str(node)[:2000]}
    inner = node.get("error")
    if isinstance(inner, dict):
        return parsed, inner
    if isinstance(inner, str):  # {"error": "message"} (vLLM, some proxies)
        return parsed, {"message": inner, "type": node.get("type"), "code": node.get("code")}
    if "message" in node or node.get("object") == "error":
        return parsed, node
    if "detail" in node:  # FastAPI-style 422 (Mistral validation)
        return parsed, {"message": _text(node["detail"])}
    return parsed, {"message": _text(node)}


def _text(value: JSONValue) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()[:2000]


def error_message(err: Mapping[str, Any]) -> str:
    message = err.get("message")
    message = message if isinstance(message, str) else _text(message) if message is not None else ""
    metadata = err.get("metadata")
    if isinstance(metadata, MAPPING):
        # OpenRouter's own message is generic ("Provider returned error"); the
        # upstream's words are in metadata.raw.
        raw = metadata.get("raw")
        if isinstance(raw, str) and raw and raw not in message:
            message = f"{message}: {raw}" if message else raw
    return message or "provider error"


def error_code(err: Mapping[str, Any]) -> tuple[str | None, str | None]:
    code = err.get("code")
    type_ = err.get("type")
    return (
        code if isinstance(code, str) else None,
        type_ if isinstance(type_, str) else None,
    )


def status_in_error(err: Mapping[str, Any]) -> int | None:
    """An HTTP status carried inside an error object (Groq ``status_code``,
    OpenRouter numeric ``code``)."""
    for key in ("status_code", "status", "code"):
        value = err.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None
