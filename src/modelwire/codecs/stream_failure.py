"""Whose failure ended a started stream: one vocabulary the three stream encoders map
to their protocol's error words.

A started stream ends in an error far more often because the upstream failed (the
connection cut, a stall, a 5xx event) than because the request was wrong, and clients
decide on the error's type whether to retry: an error with no status and no telling
class is the upstream's, never a client mistake (issue: a cut stream reached Chat
Completions clients as ``invalid_request_error``, which SDKs do not retry).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from ..errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ContentFilterError,
    ContextLengthError,
    MessageError,
    ModelNotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ReadTimeoutError,
)

__all__ = ["FailureKind", "failure_kind"]

FailureKind: TypeAlias = Literal[
    "rate_limit", "overloaded", "auth", "permission", "billing", "not_found", "request", "timeout", "upstream",
]

# most specific first; anything else is the upstream's failure
_KINDS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], FailureKind], ...] = (
    (RateLimitError, "rate_limit"),
    (OverloadedError, "overloaded"),
    (AuthenticationError, "auth"),
    (PermissionDeniedError, "permission"),
    (BillingError, "billing"),
    (ModelNotFoundError, "not_found"),
    ((BadRequestError, ContextLengthError, ContentFilterError, MessageError), "request"),
    (ReadTimeoutError, "timeout"),
)


def failure_kind(error: BaseException) -> FailureKind:
    """What ended the stream, by the error's class, then by its HTTP status."""
    for cls, kind in _KINDS:
        if isinstance(error, cls):
            return kind
    status = getattr(error, "status", None)
    if isinstance(status, int) and 400 <= status < 500:
        return "request"
    return "upstream"
