"""Errors in each front door's own shape, with the status a client can act on.

The rule: a client's mistake is a 4xx that says what was wrong; a failure of
the gateway's own upstream credentials is a 502 with the provider's message
(never a 401 that would blame the client's key); an overloaded upstream is 529
at the Anthropic door and 503 at the OpenAI doors (OpenAI clients do not know
529); the gateway's own "all credentials cooling" is a 429 with Retry-After.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeAlias

from .. import errors as E
from ..wire.api import ApiMode
from .scrub import scrub

__all__ = ["Door", "GatewayError", "HttpError", "error_body", "from_exception", "scrubbed"]

Door: TypeAlias = ApiMode  # the front doors are the three protocols

# our error kinds -> (OpenAI type, Anthropic type)
_TYPES = {
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("authentication_error", "authentication_error"),
    402: ("insufficient_quota", "billing_error"),  # a virtual key's budget is spent
    403: ("permission_error", "permission_error"),
    404: ("not_found_error", "not_found_error"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_error"),
    500: ("server_error", "api_error"),
    502: ("server_error", "api_error"),
    503: ("server_error", "overloaded_error"),
    504: ("server_error", "api_error"),
    529: ("server_error", "overloaded_error"),
}


@dataclass(frozen=True, slots=True)
class HttpError:
    status: int
    message: str
    code: str | None = None
    retry_after: float | None = None
    kind: str | None = None  # override the type name (e.g. "overloaded_error")


class GatewayError(Exception):
    """Raised inside the gateway for a client-facing error (before any upstream call)."""

    def __init__(self, status: int, message: str, code: str | None = None, *,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.http = HttpError(status, message, code, retry_after)


def from_exception(exc: BaseException, door: Door) -> HttpError:
    """Map any error to what the client at ``door`` should see."""
    if isinstance(exc, GatewayError):
        return exc.http
    msg = scrub(str(exc)) or type(exc).__name__
    if isinstance(exc, E.PoolExhaustedError):
        import time

        wait = None if exc.next_available_at is None else max(1.0, exc.next_available_at - time.time())
        return HttpError(429, f"all upstream credentials are cooling down: {msg}", "credentials_cooling", wait)
    if isinstance(exc, E.MessageError):
        return HttpError(400, msg, "invalid_conversation")
    if isinstance(exc, E.ProtocolError):
        return HttpError(502, f"the upstream sent a malformed answer: {msg}", "upstream_protocol_error")
    if isinstance(exc, E.ConfigError):
        return HttpError(404, msg, "model_not_found")
    if isinstance(exc, E.NoCredentialsError):
        return HttpError(502, f"the gateway has no upstream credential: {msg}", "upstream_credentials")
    if isinstance(exc, E.FallbackExhaustedError):
        return HttpError(502, msg, "all_fallbacks_failed")
    if isinstance(exc, E.ReadTimeoutError):
        return HttpError(504, f"the upstream timed out: {msg}", "upstream_timeout")
    if isinstance(exc, E.TransportError):
        return HttpError(502, f"could not reach the upstream: {msg}", "upstream_unreachable")
    if isinstance(exc, E.ProviderError):
        return _provider(exc, door)
    return HttpError(500, "internal gateway error", "internal_error")


def scrubbed(exc: E.ModelwireError) -> E.ModelwireError:
    """``exc`` with its message scrubbed of key-like strings (:mod:`.scrub`), for a
    stream's error event (the encoders write ``str(error)``); changed in place: the
    gateway is its last holder."""
    text = str(exc)
    clean = scrub(text)
    if clean != text:
        exc.args = (clean,)
        exc.message = clean
    return exc


def _provider(exc: E.ProviderError, door: Door) -> HttpError:
    msg = scrub(str(exc))
    if isinstance(exc, (E.AuthenticationError, E.PermissionDeniedError, E.BillingError)):
        # the gateway's own upstream credential failed: not the client's key
        return HttpError(502, f"upstream {exc.provider or ''} rejected the gateway's credential: {msg}".replace("  ", " "), "upstream_auth")
    if isinstance(exc, E.RateLimitError):
        return HttpError(429, msg, "rate_limited", exc.retry_after)
    if isinstance(exc, E.OverloadedError):
        status = 529 if door == "anthropic_messages" else 503
        return HttpError(status, msg, "overloaded", exc.retry_after, kind="overloaded_error")
    if isinstance(exc, E.ServerError):
        status = exc.status if exc.status and 500 <= exc.status <= 504 else 502
        return HttpError(status, msg, "upstream_error", exc.retry_after)
    if isinstance(exc, E.ModelNotFoundError):
        return HttpError(404, msg, "model_not_found")
    if isinstance(exc, E.ContextLengthError):
        return HttpError(400, msg, "context_length_exceeded")
    if isinstance(exc, E.ContentFilterError):
        return HttpError(400, msg, "content_filter")
    status = exc.status if exc.status and 400 <= exc.status < 500 and exc.status not in (401, 403) else 400
    return HttpError(status, msg, exc.code)


def error_body(err: HttpError, door: Door, request_id: str) -> dict:
    """The error body in the door's shape."""
    openai_type, anthropic_type = _TYPES.get(err.status, ("server_error", "api_error"))
    if err.kind:
        anthropic_type = err.kind
    if door == "anthropic_messages":
        return {
            "type": "error",
            "error": {"type": anthropic_type, "message": err.message},
            "request_id": request_id,
        }
    return {
        "error": {
            "message": err.message,
            "type": openai_type,
            "param": None,
            "code": err.code,
            "request_id": request_id,
        }
    }


def retry_after_header(err: HttpError) -> dict[str, str]:
    if err.retry_after is None:
        return {}
    return {"retry-after": str(max(1, math.ceil(err.retry_after)))}
