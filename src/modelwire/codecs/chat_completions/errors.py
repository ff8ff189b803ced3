"""Chat Completions errors: every provider's error body, and an error inside a 200
stream, -> the most specific :class:`~modelwire.errors.ProviderError`."""

from __future__ import annotations

from collections.abc import Mapping

from ...errors import ProviderError
from ...types import JSONValue
from ._common import (
    MAPPING,
    error_class,
    error_code,
    error_message,
    parse_error_body,
    status_in_error,
)

__all__ = ["decode_error", "stream_error"]


# ------------------------------------------------------------------------ errors
def decode_error(status: int, headers: Mapping[str, str] | None,
                 body: bytes | dict | list | str | None) -> ProviderError:
    """An error response -> the most specific :class:`ProviderError`."""
    parsed, err = parse_error_body(body)
    code, type_ = error_code(err)
    if status == 200:
        status = status_in_error(err) or status
    cls = error_class(status if status != 200 else None, code, type_)
    hdrs = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    from ...wire.retry_hints import retry_after_seconds

    return cls(
        error_message(err),
        status=status if status != 200 else None,
        request_id=hdrs.get("x-request-id") or hdrs.get("request-id"),
        retry_after=retry_after_seconds(hdrs, parsed),
        headers=hdrs,
        body=parsed,
        code=code or type_ or (str(err["code"]) if isinstance(err.get("code"), int) else None),
    )


def stream_error(err: JSONValue, chunk: JSONValue) -> ProviderError:
    """An ``{"error": ...}`` inside a 200 stream (Groq ``tool_use_failed``,
    OpenRouter mid-stream failures)."""
    inner = err if isinstance(err, MAPPING) else {"message": str(err)}
    status = status_in_error(inner)
    code, type_ = error_code(inner)
    return error_class(status, code, type_)(
        error_message(inner), status=status, body=chunk, code=code or type_,
    )
