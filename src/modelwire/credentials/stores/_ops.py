"""The store operations' semantics as pure functions over plain records.

The memory and SQLite stores run these inside their lock / transaction; the Redis
store runs the same rules as Lua scripts (``redis.py``) and its tests hold it to
the same behaviour.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..cooldown import Mark

# what a store reports of its backend: "degraded" while it serves from a local fallback
Health: TypeAlias = Literal["ok", "degraded"]

__all__ = ["Acquired", "Health", "Order", "apply_mark", "choose", "is_available_record", "new_lease_id"]

# How candidates are ordered before the cap is applied:
#   "ordered"     as given (fill_first: by priority; random: shuffled by the pool)
#   "rotate"      rotated by a counter kept in the store (round_robin, shared by processes)
#   "least_used"  by request count at the moment of the choice
Order: TypeAlias = Literal["ordered", "rotate", "least_used"]


@dataclass(frozen=True, slots=True)
class Acquired:
    credential_id: str
    lease_id: str
    expires_at: float


def new_lease_id() -> str:
    return uuid.uuid4().hex


def is_available_record(record: Mapping[str, Any], now: float) -> bool:
    status = record.get("status", "ok")
    if status == "ok":
        return True
    if status == "cooling":
        until = record.get("cooldown_until")
        return until is None or float(until) <= now
    return False  # dead


def choose(
    candidates: Sequence[str],
    records: Mapping[str, Mapping[str, Any]],
    lease_counts: Mapping[str, int],
    *,
    cap: int,
    now: float,
    order: Order,
    rotation: int,
) -> str | None:
    """The credential to lease: first under the cap in strategy order, else the least leased.

    Never blocks: when every available credential is at its cap, the one with the
    fewest live leases is handed out (ties: strategy order).
    """
    available = [c for c in candidates if c in records and is_available_record(records[c], now)]
    if not available:
        return None
    if order == "rotate":
        k = rotation % len(available)
        available = available[k:] + available[:k]
    elif order == "least_used":
        position = {c: i for i, c in enumerate(available)}
        available.sort(key=lambda c: (int(records[c].get("request_count") or 0), position[c]))
    for cred_id in available:
        if lease_counts.get(cred_id, 0) < cap:
            return cred_id
    return min(available, key=lambda c: lease_counts.get(c, 0))  # min() keeps the first tie


def apply_mark(record: dict[str, Any], mark: Mark, now: float) -> dict[str, Any]:
    """A new record with ``mark`` applied: cooldown = max(existing, new); dead is terminal."""
    new = dict(record)
    if mark.status == "ok":  # an explicit reset (or a fresh login) clears everything
        new.update(status="ok", cooldown_until=None, status_at=now,
                   last_error_code=None, last_error_reason=None)
        return new
    if record.get("status") == "dead":
        return new
    new.update(status_at=now, last_error_code=mark.code, last_error_reason=mark.reason)
    if mark.status == "dead":
        new.update(status="dead", cooldown_until=None)
        return new
    existing = record.get("cooldown_until") if record.get("status") == "cooling" else None
    until = mark.until if mark.until is not None else now
    if existing is not None:
        until = max(float(existing), until)  # never shorten a window (litellm#40130)
    new.update(status="cooling", cooldown_until=until)
    return new
