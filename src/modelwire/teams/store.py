"""The seams of teams: where keys, teams and spend live (``KeyStore``), how a request
is admitted and settled (``Limiter``), and the typed refusals.

A ``KeyStore`` is synchronous (SQLite and psycopg are); the gateway never calls it per
request on the event loop: it caches key records for under a second and writes spend
in batches from a background thread. A ``Limiter`` is asynchronous because a shared
one (Redis) costs a round trip per request.

Reservations: before a request goes upstream it reserves its worst case (the input
estimate plus ``max_tokens`` at the output price, and one request plus the estimated
tokens in the rpm/tpm windows) against the key and its team; the refusal comes before
any upstream call. After the answer it settles with the real cost and tokens (or
releases the reservation when nothing was served). A budget therefore overshoots only
by what real usage exceeds the reservation (an input estimate below the real input).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import ModelwireError
from .model import Scope, SpendBy, SpendPoint, SpendRow, SpendTotal, Team, VirtualKey

__all__ = [
    "BudgetExhausted",
    "Demand",
    "KeyRefused",
    "KeyStore",
    "Limiter",
    "ModelNotAllowed",
    "RateLimited",
    "RecordingLimiter",
    "Reservation",
    "TeamsRefusal",
]


class TeamsRefusal(ModelwireError):
    """A virtual key may not make this request now (its limits, budget or models)."""


class KeyRefused(TeamsRefusal):
    """The presented virtual key is unknown, revoked or expired (``reason``). Never
    shows the key; names it (``key_name``) only when it was found."""

    def __init__(self, reason: str, key_name: str = "") -> None:
        self.reason, self.key_name = reason, key_name
        text = "invalid gateway key" if reason == "unknown" else \
            f"gateway key {key_name!r} is {reason}"
        super().__init__(text)


class RateLimited(TeamsRefusal):
    """A rate limit is reached: ``limit`` names it (``rpm`` or ``tpm``), ``scope`` whose
    it is, ``retry_after`` the seconds until the window admits the request."""

    def __init__(self, scope: Scope, limit: str, allowed: int, retry_after: float) -> None:
        self.scope, self.limit, self.allowed = scope, limit, allowed
        self.retry_after = max(retry_after, 0.0)
        unit = "requests" if limit == "rpm" else "tokens"
        super().__init__(f"rate limit reached: {scope} allows {allowed} {unit} per minute "
                         f"({limit}); retry after {self.retry_after:.0f}s")


class BudgetExhausted(TeamsRefusal):
    """A budget is spent: ``scope`` whose, ``budget_usd`` its size, ``reset_at`` (Unix
    seconds) when the period starts again (None: a total budget, it never resets)."""

    def __init__(self, scope: Scope, budget_usd: float, spent_usd: float,
                 reset_at: float | None) -> None:
        self.scope, self.budget_usd, self.spent_usd = scope, budget_usd, spent_usd
        self.reset_at = reset_at
        if reset_at is None:
            when = "it does not reset (a total budget)"
        else:
            import time

            when = "it resets at " + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset_at))
        super().__init__(f"budget exhausted: {scope} has spent ${spent_usd:.4f} (with "
                         f"requests in flight) of ${budget_usd:g}; {when}")


class ModelNotAllowed(TeamsRefusal):
    """The key's model list does not include ``model``. Names the key, never shows it."""

    def __init__(self, key_name: str, model: str, patterns: Sequence[str]) -> None:
        self.key_name, self.model, self.patterns = key_name, model, tuple(patterns)
        super().__init__(f"model {model!r} is not allowed for key {key_name!r} "
                         f"(allowed: {', '.join(self.patterns)})")


@dataclass(frozen=True, slots=True)
class Demand:
    """What one request asks of its key and team before it goes upstream: its worst-case
    cost (USD; 0.0 when the price is unknown) and tokens (input estimate + max_tokens);
    the model asked for and the request id name it in a lost request's spend row."""

    key: VirtualKey
    team: Team | None
    cost_usd: float
    tokens: int
    model: str = ""
    request_id: str = ""


@dataclass(frozen=True, slots=True)
class Reservation:
    """A granted demand, to settle or release exactly once."""

    id: str
    demand: Demand
    at: float  # Unix seconds when it was granted


@runtime_checkable
class KeyStore(Protocol):
    """Keys, teams and the spend record. Ids are unique; key hashes are unique; names
    are unique among keys and among teams."""

    def create_key(self, key: VirtualKey) -> None: ...
    def update_key(self, key: VirtualKey) -> None: ...  # replaces the record with its id
    def get_key(self, key_id: str) -> VirtualKey | None: ...
    def key_by_hash(self, key_hash: str) -> VirtualKey | None: ...
    def key_by_name(self, name: str) -> VirtualKey | None: ...
    def list_keys(self) -> list[VirtualKey]: ...
    def create_team(self, team: Team) -> None: ...
    def update_team(self, team: Team) -> None: ...
    def get_team(self, team_id: str) -> Team | None: ...
    def team_by_name(self, name: str) -> Team | None: ...
    def list_teams(self) -> list[Team]: ...
    def add_spend(self, rows: Sequence[SpendRow]) -> None: ...  # one transaction
    def spend(self, by: SpendBy, since: float) -> list[SpendTotal]: ...  # most cost first
    def spent(self, scope: Scope, since: float) -> float: ...  # USD of priced rows
    # per step of ``step`` seconds from ``since``, oldest first; steps without rows left out
    def spend_series(self, since: float, step: float) -> list[SpendPoint]: ...
    def close(self) -> None: ...


@runtime_checkable
class Limiter(Protocol):
    """Admission against budgets and rate limits, for the key and its team together:
    ``reserve`` grants all or raises (``RateLimited``, ``BudgetExhausted``) and holds
    nothing when it raises."""

    async def reserve(self, demand: Demand) -> Reservation: ...
    async def settle(self, reservation: Reservation, cost_usd: float | None,
                     tokens: int) -> None: ...
    async def release(self, reservation: Reservation) -> None: ...
    async def close(self) -> None: ...


@runtime_checkable
class RecordingLimiter(Limiter, Protocol):
    """A ``Limiter`` that writes a reserved request's spend row itself, in the same
    transaction as its settle (the SQLite one), so the row of a reserved request is never
    lost between the two. ``cost_usd`` None or 0 and ``tokens`` 0: a release."""

    async def finish(self, reservation: Reservation, cost_usd: float | None, tokens: int,
                     row: SpendRow) -> None: ...
