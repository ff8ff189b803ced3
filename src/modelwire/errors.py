"""The whole modelwire exception tree.

::

    ModelwireError
    ├── ConfigError                     bad or missing modelwire.yaml values (names file and key path)
    ├── MessageError                    the conversation breaks a protocol rule (names the message index)
    │   └── UnsupportedContentError     content the target cannot express (names the part)
    ├── CredentialError
    │   ├── NoCredentialsError          no key configured (names the variables to set)
    │   └── PoolExhaustedError          every credential cooling (``next_available_at``)
    ├── TransportError                  the HTTP exchange failed before a provider answered
    │   ├── ConnectError
    │   ├── ReadTimeoutError            includes stale streams (no bytes for too long)
    │   └── StreamInterruptedError      the connection dropped mid-stream
    ├── ProviderError                   the provider answered with an error (facts attached)
    │   ├── AuthenticationError         401
    │   ├── PermissionDeniedError       403
    │   ├── BillingError                402 / quota exhausted
    │   ├── RateLimitError              429
    │   ├── OverloadedError             529 / "overloaded"
    │   ├── ServerError                 5xx
    │   ├── ContextLengthError          prompt too long for the model
    │   ├── ContentFilterError          refused by a safety filter
    │   ├── ModelNotFoundError          unknown model id
    │   └── BadRequestError             any other caller mistake (400/404/413/422)
    ├── ProtocolError                   malformed stream or body
    └── FallbackExhaustedError          every model in the chain failed (``errors``)

Errors raised mid-stream carry ``partial``: the :class:`~modelwire.Completion`
accumulated so far. No secret ever appears in a message or ``repr``: messages
are passed through :func:`redact` before they are stored.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .completion import Completion
    from .types import JSONValue

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "BillingError",
    "ConfigError",
    "ConnectError",
    "ContentFilterError",
    "ContextLengthError",
    "CredentialError",
    "FallbackExhaustedError",
    "MessageError",
    "ModelNotFoundError",
    "ModelwireError",
    "NoCredentialsError",
    "OverloadedError",
    "PermissionDeniedError",
    "PoolExhaustedError",
    "ProtocolError",
    "ProviderError",
    "RateLimitError",
    "ReadTimeoutError",
    "ServerError",
    "StreamInterruptedError",
    "TransportError",
    "UnsupportedContentError",
    "redact",
]

# Things that look like secrets: provider key prefixes and long bearer tokens.
_SECRET_RE = re.compile(
    r"(?:sk-[A-Za-z0-9_\-]{6,}|sk_[A-Za-z0-9_\-]{6,}|xai-[A-Za-z0-9_\-]{6,}|mw-[A-Za-z0-9_\-]{20,}|"
    r"gsk_[A-Za-z0-9_\-]{6,}|AIza[A-Za-z0-9_\-]{10,}|hf_[A-Za-z0-9]{10,}|"
    r"(?<=Bearer )[A-Za-z0-9._\-]{12,}|(?<=api[_-]key=)[A-Za-z0-9._\-]{8,})"
)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Mask anything that looks like an API key, plus the given ``secrets``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, _mask(secret))
    return _SECRET_RE.sub(lambda m: _mask(m.group(0)), text)


def _mask(secret: str) -> str:
    return f"{secret[:3]}…{secret[-4:]}" if len(secret) > 12 else "…"


class ModelwireError(Exception):
    """Base of every error modelwire raises."""

    partial: Completion | None = None

    def __init__(self, message: str = "", *, partial: Completion | None = None) -> None:
        message = redact(str(message))
        super().__init__(message)
        self.message = message
        if partial is not None:
            self.partial = partial

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class ConfigError(ModelwireError):
    """The configuration is missing, malformed or names something unknown."""


class MessageError(ModelwireError):
    """The conversation breaks a protocol rule. ``index`` names the message."""

    def __init__(self, message: str, *, index: int | None = None,
                 partial: Completion | None = None) -> None:
        super().__init__(message, partial=partial)
        self.index = index


class UnsupportedContentError(MessageError):
    """Content the target cannot express (the message names the part)."""


class CredentialError(ModelwireError):
    """No usable credential."""


class NoCredentialsError(CredentialError):
    """No credential configured for a provider; the message names the variables."""


class PoolExhaustedError(CredentialError):
    """Every credential is cooling; ``next_available_at`` (epoch seconds) says when one frees."""

    def __init__(self, message: str, *, next_available_at: float | None = None,
                 partial: Completion | None = None) -> None:
        super().__init__(message, partial=partial)
        self.next_available_at = next_available_at


class TransportError(ModelwireError):
    """The HTTP exchange failed before or while the provider answered."""


class ConnectError(TransportError):
    """Could not connect (DNS, refused, TLS)."""


class ReadTimeoutError(TransportError):
    """No bytes arrived in time (before the first byte, or a stale stream)."""


class StreamInterruptedError(TransportError):
    """The connection dropped in the middle of a stream."""


class ProviderError(ModelwireError):
    """The provider answered with an error.

    ``str()`` is the provider's own message. Facts: ``status``, ``provider``,
    ``model``, ``request_id``, ``retry_after`` (seconds), ``headers`` (lowercased),
    ``body`` (parsed JSON, or text), ``code`` (the provider's error type/code).
    """

    default_status: int | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        provider: str | None = None,
        model: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
        body: JSONValue = None,
        code: str | None = None,
        partial: Completion | None = None,
    ) -> None:
        super().__init__(message, partial=partial)
        self.status = status if status is not None else self.default_status
        self.provider = provider
        self.model = model
        self.request_id = request_id
        self.retry_after = retry_after
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.body = body
        self.code = code

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, status={self.status!r}, "
            f"provider={self.provider!r}, model={self.model!r})"
        )


class AuthenticationError(ProviderError):
    default_status = 401


class PermissionDeniedError(ProviderError):
    default_status = 403


class BillingError(ProviderError):
    default_status = 402


class RateLimitError(ProviderError):
    default_status = 429


class OverloadedError(ProviderError):
    default_status = 529


class ServerError(ProviderError):
    default_status = 500


class ContextLengthError(ProviderError):
    default_status = 400


class ContentFilterError(ProviderError):
    default_status = 400


class ModelNotFoundError(ProviderError):
    default_status = 404


class BadRequestError(ProviderError):
    default_status = 400


class ProtocolError(ModelwireError):
    """The provider's stream or body is malformed (not what its protocol allows)."""


class FallbackExhaustedError(ModelwireError):
    """Every model in the chain failed; ``errors`` holds each attempt's error, in order,
    and ``skipped`` each fallback entry that never ran, with why (``"name (reason)"``)."""

    def __init__(self, errors: list[ModelwireError], *, skipped: Sequence[str] = (),
                 partial: Completion | None = None) -> None:
        lines = "; ".join(f"{type(e).__name__}: {e}" for e in errors)
        message = f"all {len(errors)} attempts failed: {lines}"
        if skipped:
            message += f"; skipped: {'; '.join(skipped)}"
        super().__init__(message, partial=partial)
        self.errors = list(errors)
        self.skipped = tuple(skipped)
