"""``PooledCredential``: one key or token of a provider, and its state, as a value.

Frozen: every change is a new value (``dataclasses.replace``) written through a
store. The secret never appears in ``repr`` (only a mask such as ``sk-…abcd``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "TERMINAL_REASONS",
    "AuthType",
    "PooledCredential",
    "Status",
    "mask",
]

AuthType: TypeAlias = Literal["api_key", "oauth"]
# "cooling" with a past cooldown_until is available again with no action (effective "ok").
Status: TypeAlias = Literal["ok", "cooling", "dead"]

# OAuth/auth failure reasons after which a credential can never work again until the
# user logs in again (Hermes _TERMINAL_AUTH_REASONS; RFC 6749 §5.2 invalid_grant;
# providers that rotate refresh tokens answer refresh_token_reused on a replay).
TERMINAL_REASONS = frozenset({
    "invalid_grant", "token_revoked", "token_invalidated", "invalid_token",
    "unauthorized_client", "refresh_token_reused",
})


def mask(secret: str | None) -> str:
    """``sk-or-v1-abc…wxyz`` → ``sk-…wxyz``; short secrets become ``…`` entirely."""
    if not secret:
        return ""
    if len(secret) <= 12:
        return "…"
    head = secret[:3] if secret[:3].isascii() else ""
    return f"{head}…{secret[-4:]}"


@dataclass(frozen=True, slots=True)
class PooledCredential:
    """A credential of one provider.

    ``source``: ``manual`` (added by the user, secret kept in the store),
    ``env:NAME`` (read from the environment at runtime; the store holds only its
    state, under an HMAC fingerprint id), or ``oauth:<flow>``.
    """

    provider: str
    id: str
    label: str = ""
    auth_type: AuthType = "api_key"
    priority: int = 0
    source: str = "manual"
    secret: str = field(default="", repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None  # access-token expiry (epoch seconds), OAuth only
    status: Status = "ok"
    status_at: float | None = None
    last_error_code: str | None = None
    last_error_reason: str | None = None
    cooldown_until: float | None = None
    base_url: str | None = None
    request_count: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any], compare=False, hash=False)

    # ------------------------------------------------------------------ views
    @property
    def masked(self) -> str:
        return mask(self.secret)

    @property
    def is_env(self) -> bool:
        return self.source.startswith("env:")

    @property
    def env_var(self) -> str | None:
        return self.source[4:] if self.is_env else None

    def effective_status(self, now: float) -> Status:
        """``cooling`` whose window has passed reads as ``ok``."""
        if self.status == "cooling" and (self.cooldown_until is None or self.cooldown_until <= now):
            return "ok"
        return self.status

    def is_available(self, now: float) -> bool:
        return self.effective_status(now) == "ok"

    def cooldown_remaining(self, now: float) -> float:
        if self.status != "cooling" or self.cooldown_until is None:
            return 0.0
        return max(0.0, self.cooldown_until - now)

    def needs_refresh(self, now: float, skew: float = 120.0) -> bool:
        """OAuth access token expiring within ``skew`` seconds (refresh 2 minutes early)."""
        return (
            self.auth_type == "oauth"
            and self.expires_at is not None
            and bool(self.refresh_token)
            and self.expires_at - skew <= now
        )

    def __repr__(self) -> str:
        return (
            f"PooledCredential(provider={self.provider!r}, id={self.id!r}, label={self.label!r}, "
            f"auth_type={self.auth_type!r}, source={self.source!r}, secret={self.masked!r}, "
            f"status={self.status!r}, priority={self.priority}, "
            f"request_count={self.request_count})"
        )

    __str__ = __repr__

    # ------------------------------------------------------------------ (de)serialization
    def to_record(self, *, with_secret: bool) -> dict[str, Any]:
        """A JSON-able dict for a store. Env credentials never carry their secret."""
        record = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        record["extra"] = dict(self.extra)
        if not with_secret or self.is_env:
            record["secret"] = ""
            if self.is_env:
                record["refresh_token"] = None
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PooledCredential:
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in record.items() if k in names}
        values["extra"] = dict(values.get("extra") or {})
        for key in ("priority", "request_count"):
            values[key] = int(values.get(key) or 0)
        for key in ("expires_at", "status_at", "cooldown_until"):
            if values.get(key) is not None:
                values[key] = float(values[key])
        return cls(**values)
