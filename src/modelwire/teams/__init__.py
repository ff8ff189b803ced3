"""Teams: virtual keys, teams, budgets, rate limits and the spend record.

What the gateway needs to serve many people from one place: who a key belongs to and
what it may use (``model``), where keys, teams and spend live and how requests are
admitted and settled (``store``: the ``KeyStore`` and ``Limiter`` Protocols and the
typed refusals), and their backends (SQLite here; Redis and PostgreSQL in their own
modules). Stands on the bottom floor, ``errors``, ``config`` and ``providers.prices``
only; the gateway imports this package, never the reverse.
"""

from __future__ import annotations

from .model import Budget, Scope, SpendPoint, SpendRow, SpendTotal, Team, VirtualKey
from .store import (
    BudgetExhausted,
    Demand,
    KeyRefused,
    KeyStore,
    Limiter,
    ModelNotAllowed,
    RateLimited,
    RecordingLimiter,
    Reservation,
    TeamsRefusal,
)

__all__ = [
    "Budget",
    "BudgetExhausted",
    "Demand",
    "KeyRefused",
    "KeyStore",
    "Limiter",
    "ModelNotAllowed",
    "RateLimited",
    "RecordingLimiter",
    "Reservation",
    "Scope",
    "SpendPoint",
    "SpendRow",
    "SpendTotal",
    "Team",
    "TeamsRefusal",
    "VirtualKey",
]
