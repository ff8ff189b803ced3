"""What an outcome does to a credential: pure policy, no I/O, clock passed in.

The rules (Hermes credential pool §2.10, kept; litellm#40130 avoided):

- ``rate_limited`` and ``billing`` cool the credential: 1 hour by default; a reset
  time from the provider (headers or body, :func:`~modelwire.resilience.retry_after.reset_at`)
  wins over the default;
- ``auth_failed`` on an API key cools it for 5 minutes (a key can come back after
  a billing fix or a propagation delay); a terminal reason (``invalid_grant``,
  ``token_revoked``…) marks it ``dead``;
- ``revoked`` marks it ``dead``: terminal until the user logs in again;
- a sole credential cools for at most 60 s unless the error was billing/quota —
  cooling the only key for an hour would stop the agent on a short burst;
- ``overloaded`` and ``server_error`` never cool: the endpoint is busy, not the key;
- re-marking keeps the later deadline (the store applies ``max(existing, new)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .credential import TERMINAL_REASONS, AuthType, Status

__all__ = [
    "AUTH_COOLDOWN",
    "DEFAULT_COOLDOWN",
    "SOLE_CREDENTIAL_MAX_COOLDOWN",
    "Mark",
    "Outcome",
    "decide",
    "error_reason",
]

Outcome: TypeAlias = Literal[
    "success", "rate_limited", "billing", "auth_failed", "revoked", "overloaded",
    "server_error", "error",
]
OUTCOMES: tuple[str, ...] = Outcome.__args__  # type: ignore[attr-defined]

DEFAULT_COOLDOWN = 3600.0
AUTH_COOLDOWN = 300.0
SOLE_CREDENTIAL_MAX_COOLDOWN = 60.0


@dataclass(frozen=True, slots=True)
class Mark:
    """A state change to apply: ``status`` with ``until`` (cooling), code and reason."""

    status: Status
    until: float | None = None
    code: str | None = None
    reason: str | None = None


def decide(
    outcome: Outcome,
    *,
    auth_type: AuthType,
    now: float,
    sole: bool,
    error: BaseException | Mapping[str, Any] | None = None,
) -> Mark | None:
    """The mark an outcome earns, or ``None`` when the credential's state is untouched."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")
    code = _code(error, outcome)
    reason = error_reason(error)
    if outcome == "revoked" or (outcome == "auth_failed" and _is_terminal(error)):
        return Mark("dead", None, code, reason)
    if outcome == "rate_limited":
        until = _provider_reset(error, now) or now + DEFAULT_COOLDOWN
        if sole:
            until = min(until, now + SOLE_CREDENTIAL_MAX_COOLDOWN)
        return Mark("cooling", until, code, reason)
    if outcome == "billing":  # quota: the sole-credential cap does not apply
        return Mark("cooling", _provider_reset(error, now) or now + DEFAULT_COOLDOWN, code, reason)
    if outcome == "auth_failed":
        until = now + AUTH_COOLDOWN  # OAuth reaches here only after a refresh did not help
        if sole:
            until = min(until, now + SOLE_CREDENTIAL_MAX_COOLDOWN)
        return Mark("cooling", until, code, reason)
    return None  # success, overloaded, server_error, error


def error_reason(error: BaseException | Mapping[str, Any] | None) -> str | None:
    """A short, secret-free description of an error for ``last_error_reason``."""
    if error is None:
        return None
    from ..errors import redact

    text = str(_attr(error, "message") or ("" if isinstance(error, dict) else error))
    if not text:
        return None if isinstance(error, dict) else type(error).__name__
    return redact(text)[:300]


def _attr(error: BaseException | Mapping[str, Any] | None, name: str) -> Any:
    """Read a fact from a ProviderError, or from a plain dict of the same names (None if absent)."""
    if isinstance(error, dict):
        return error.get(name)
    return getattr(error, name, None)


def _code(error: BaseException | Mapping[str, Any] | None, outcome: str) -> str:
    status = _attr(error, "status")
    code = _attr(error, "code")
    if code:
        return str(code)
    return str(status) if status else outcome


def _is_terminal(error: BaseException | Mapping[str, Any] | None) -> bool:
    if error is None:
        return False
    candidates = [_attr(error, "code")]
    body = _attr(error, "body")
    if isinstance(body, dict):
        inner = body.get("error")  # OAuth: {"error": "invalid_grant"}; APIs: {"error": {...}}
        candidates += [inner.get("code"), inner.get("type")] if isinstance(inner, dict) else [inner]
    return any(isinstance(c, str) and c.lower() in TERMINAL_REASONS for c in candidates)


def _provider_reset(error: BaseException | Mapping[str, Any] | None, now: float) -> float | None:
    if error is None:
        return None
    from ..resilience.retry_after import reset_at

    headers = _attr(error, "headers") or {}
    found = reset_at(headers, _attr(error, "body"), now)
    if found is None:
        retry_after = _attr(error, "retry_after")
        if isinstance(retry_after, (int, float)) and retry_after > 0:
            found = now + float(retry_after)
    return found
