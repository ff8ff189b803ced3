"""What a Redis store did on local state while Redis did not answer, to merge back.

Kept per credential and per lease, never as an ever-growing log: its size is bounded by
the credentials and the live leases, however long the outage lasts. The merge rules
(:meth:`RedisStore.reconcile <.redis.RedisStore>`): records written here are written
there (those only inserted here never replace one there); cooldowns keep the later
``until`` and ``dead`` wins; request counts are added; leases taken here are entered
there with their expiry (expired ones are dropped by the next acquire), released ones
removed. A reset to ``ok`` made while degraded is not merged: the shared state keeps
its cooldown (which has expired by then, unless another machine set a later one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cooldown import Mark
from ..credential import PooledCredential

__all__ = ["Journal"]

Key = tuple[str, str]  # (provider, credential id)


@dataclass
class Journal:
    written: dict[Key, PooledCredential] = field(default_factory=dict)  # put: replace there
    inserted: dict[Key, PooledCredential] = field(default_factory=dict)  # insert_if_absent
    deleted: set[Key] = field(default_factory=set)
    patches: dict[Key, dict[str, Any]] = field(default_factory=dict)
    marks: dict[Key, tuple[Mark, float]] = field(default_factory=dict)
    counts: Counter[Key] = field(default_factory=Counter)
    leases: dict[str, tuple[str, str, float]] = field(default_factory=dict)  # id -> provider, cred, expiry
    released: dict[str, str] = field(default_factory=dict)  # lease id -> provider

    def __bool__(self) -> bool:
        return bool(self.written or self.inserted or self.deleted or self.patches or self.marks
                    or self.counts or self.leases or self.released)

    def summary(self) -> str:
        return (f"{len(self.written) + len(self.inserted)} records, {len(self.deleted)} deletions, "
                f"{len(self.marks)} cooldowns, {sum(self.counts.values())} requests counted, "
                f"{len(self.leases)} leases, {len(self.released)} releases")

    def put(self, cred: PooledCredential) -> None:
        key = (cred.provider, cred.id)
        self.deleted.discard(key)
        self.patches.pop(key, None)  # the whole record supersedes earlier patches
        self.written[key] = cred

    def insert(self, cred: PooledCredential) -> None:
        key = (cred.provider, cred.id)
        if key not in self.written:
            self.inserted.setdefault(key, cred)

    def delete(self, provider: str, cred_id: str) -> None:
        key = (provider, cred_id)
        for pending in (self.written, self.inserted, self.patches, self.marks, self.counts):
            pending.pop(key, None)
        self.deleted.add(key)

    def patch(self, provider: str, cred_id: str, fields: Mapping[str, Any]) -> None:
        body = {k: v for k, v in fields.items() if k != "request_count"}
        self.patches.setdefault((provider, cred_id), {}).update(body)

    def mark(self, provider: str, cred_id: str, mark: Mark, now: float) -> None:
        if mark.status == "ok":
            return  # not merged (see the module docstring)
        key = (provider, cred_id)
        held = self.marks.get(key)
        if held is None or _later(mark, held[0]):
            self.marks[key] = (mark, now)

    def acquired(self, provider: str, cred_id: str, lease_id: str, expires_at: float) -> None:
        self.counts[(provider, cred_id)] += 1
        self.leases[lease_id] = (provider, cred_id, expires_at)

    def renewed(self, lease_id: str, expires_at: float) -> None:
        held = self.leases.get(lease_id)
        if held is not None:
            self.leases[lease_id] = (held[0], held[1], expires_at)

    def release(self, provider: str, lease_id: str) -> None:
        if self.leases.pop(lease_id, None) is None:  # taken before the outage: free it there
            self.released[lease_id] = provider


def _later(new: Mark, old: Mark) -> bool:
    """Whether ``new`` says more than ``old``: dead wins, then the later cooldown."""
    if old.status == "dead":
        return False
    if new.status == "dead":
        return True
    return (new.until or 0.0) >= (old.until or 0.0)
