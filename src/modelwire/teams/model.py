"""The records of teams: virtual keys, teams, budgets and spend rows, as frozen values.

A virtual key's secret (``mw-`` + 32 random bytes, urlsafe base64) is shown once, when
it is made; only its SHA-256 is stored. A plain hash (no salt, no slow KDF) is enough
here because the secret is 256 random bits, not a password: nobody can guess it from
its hash, and a fast hash lets the gateway find a key by its hash in one lookup.
Times are Unix seconds (UTC); budget periods are calendar periods in UTC.
"""

from __future__ import annotations

import calendar
import fnmatch
import hashlib
import re
import secrets
import time as _time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

__all__ = [
    "KEY_PREFIX",
    "PERIODS",
    "Budget",
    "Period",
    "Scope",
    "ScopeKind",
    "SpendBy",
    "SpendPoint",
    "SpendRow",
    "SpendTotal",
    "Team",
    "VirtualKey",
    "display_prefix",
    "hash_key",
    "new_id",
    "new_secret",
    "parse_duration",
]

Period: TypeAlias = Literal["day", "week", "month", "total"]
PERIODS: tuple[Period, ...] = ("day", "week", "month", "total")
ScopeKind: TypeAlias = Literal["key", "team"]
SpendBy: TypeAlias = Literal["key", "team", "model"]

KEY_PREFIX = "mw-"
_SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh virtual key: ``mw-`` and 32 random bytes in urlsafe base64 (43 characters)."""
    return KEY_PREFIX + secrets.token_urlsafe(_SECRET_BYTES)


def hash_key(secret: str) -> str:
    """The stored form of a key: its SHA-256, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def display_prefix(secret: str) -> str:
    """What ``keys list`` shows of a key: enough to tell keys apart, too little to use."""
    return secret[: len(KEY_PREFIX) + 6] + "…"


def new_id(kind: str) -> str:
    """A record id: ``key_`` / ``team_`` and 12 random hex digits (not secret)."""
    return f"{kind}_{secrets.token_hex(6)}"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """Seconds in ``90d``, ``12h``, ``30m``, ``2w``, ``45s``; ValueError says the form."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"expected a duration such as 90d, 12h, 30m or 2w, got {text!r}")
    return float(match.group(1)) * _UNIT[match.group(2)]


@dataclass(frozen=True, slots=True)
class Budget:
    """``usd`` per ``period`` (a calendar day, ISO week or month in UTC, or ``total``)."""

    usd: float
    period: Period = "month"

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``50/month``, ``5/day``, ``20/week``, ``100/total`` or ``100`` (total)."""
        amount, _, period = text.strip().lstrip("$").partition("/")
        period = period.strip() or "total"
        if period not in PERIODS:
            raise ValueError(f"budget period must be one of {', '.join(PERIODS)}, "
                             f"got {period!r} in {text!r}")
        try:
            usd = float(amount)
        except ValueError:
            raise ValueError(f"budget must be USD/period such as 50/month, got {text!r}") from None
        if usd < 0:
            raise ValueError(f"budget must not be negative, got {text!r}")
        return cls(usd, period)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.usd:g}/{self.period}"

    def window_start(self, now: float) -> float:
        """When the current period began (0.0 for ``total``)."""
        if self.period == "total":
            return 0.0
        t = _time.gmtime(now)
        day = calendar.timegm((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0))
        if self.period == "day":
            return float(day)
        if self.period == "week":
            return float(day - t.tm_wday * 86400)  # Monday 00:00 UTC
        return float(calendar.timegm((t.tm_year, t.tm_mon, 1, 0, 0, 0)))

    def resets_at(self, now: float) -> float | None:
        """When the next period begins (None for ``total``: it never resets)."""
        if self.period == "total":
            return None
        start = self.window_start(now)
        if self.period == "day":
            return start + 86400
        if self.period == "week":
            return start + 7 * 86400
        t = _time.gmtime(start)
        year, month = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
        return float(calendar.timegm((year, month, 1, 0, 0, 0)))


@dataclass(frozen=True, slots=True)
class Scope:
    """What a budget or limit belongs to: one key or one team."""

    kind: ScopeKind
    id: str
    name: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.name or self.id}"


@dataclass(frozen=True, slots=True)
class Team:
    id: str
    name: str
    budget: Budget | None = None
    rpm: int | None = None  # requests per minute; None: no limit
    tpm: int | None = None  # tokens (input + output) per minute; None: no limit
    created_at: float = 0.0
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def scope(self) -> Scope:
        return Scope("team", self.id, self.name)


@dataclass(frozen=True, slots=True)
class VirtualKey:
    """A person's or program's key: what it may call and how much. ``models``: glob
    patterns of the model names it may ask for (empty: all)."""

    id: str
    name: str
    key_hash: str
    prefix: str  # for display only: "mw-AbC123…"
    team_id: str | None = None
    models: tuple[str, ...] = ()
    budget: Budget | None = None
    rpm: int | None = None
    tpm: int | None = None
    expires_at: float | None = None
    revoked_at: float | None = None
    created_at: float = 0.0
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def scope(self) -> Scope:
        return Scope("key", self.id, self.name)

    def allows(self, model: str) -> bool:
        """Whether the key may ask for ``model`` (glob match, case-sensitive)."""
        return not self.models or any(fnmatch.fnmatchcase(model, p) for p in self.models)

    def is_active(self, now: float) -> bool:
        if self.revoked_at is not None and self.revoked_at <= now:
            return False
        return self.expires_at is None or now < self.expires_at


@dataclass(frozen=True, slots=True)
class SpendRow:
    """One request's record: who, which model, tokens by kind, cost; never content.
    ``cost_usd`` is None when the serving model's price is unknown."""

    time: float
    request_id: str
    key_id: str | None
    team_id: str | None
    model_asked: str
    model_served: str
    provider: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    status: int = 200
    latency_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class SpendTotal:
    """Totals of the spend rows of one group (a key id, team id or model name; ``""``
    for rows without one, as requests from unlimited keys have no key id)."""

    group: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    unpriced: int = 0  # requests whose cost is unknown (not in cost_usd)
    name: str = ""  # the key's or team's name, where the store knows it


@dataclass(frozen=True, slots=True)
class SpendPoint:
    """The spend rows of one time step (``modelwire spend``'s sparkline): ``start`` (Unix
    seconds), how many requests, and their known cost."""

    start: float
    requests: int
    cost_usd: float
