"""Responses API errors: an error answer, a ``response.failed`` or an ``error`` event ->
the most specific :class:`~modelwire.errors.ProviderError`."""

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
    ProviderError,
    RateLimitError,
    ServerError,
)
from ...types import JSONValue
from ...wire.retry_hints import retry_after_seconds

__all__ = ["decode_error", "error_from_payload"]


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
    body: JSONValue = None,
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


def decode_error(status: int, headers: Mapping[str, str] | None, body: bytes | dict[str, Any] | str | None) -> ProviderError:
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


def _retry_after(headers: dict[str, str], body: JSONValue) -> float | None:
    return retry_after_seconds(headers, body)
