"""Anthropic Messages errors: an error answer or stream error event -> the most specific
:class:`~modelwire.errors.ProviderError`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ContextLengthError,
    ModelNotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
)

__all__ = ["decode_error", "error_from"]


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
        from ...wire.retry_hints import retry_after_seconds

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
