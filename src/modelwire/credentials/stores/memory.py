"""In-process store: dicts under one lock. For unit tests and Redis fail-open."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..cooldown import Mark
from ..credential import PooledCredential
from ._ops import Acquired, Health, Order, apply_mark, choose, new_lease_id

__all__ = ["MemoryStore"]


class MemoryStore:
    """Same semantics as the SQLite and Redis stores, kept in this process only."""

    url = "memory://"

    def __init__(self) -> None:
        self.health: Health = "ok"
        self._mutex = threading.RLock()
        self._records: dict[tuple[str, str], dict[str, Any]] = {}
        self._leases: dict[str, dict[str, tuple[str, float]]] = {}  # provider -> lease -> (cred, exp)
        self._rotation: dict[str, int] = {}
        self._salt: bytes | None = None
        self._locks: dict[str, threading.Lock] = {}

    def salt(self) -> bytes:
        with self._mutex:
            if self._salt is None:
                self._salt = os.urandom(32)
            return self._salt

    def list(self, provider: str | None = None) -> list[PooledCredential]:
        with self._mutex:
            return [
                PooledCredential.from_record(r)
                for (p, _), r in sorted(self._records.items())
                if provider is None or p == provider
            ]

    def get(self, provider: str, cred_id: str) -> PooledCredential | None:
        with self._mutex:
            record = self._records.get((provider, cred_id))
            return PooledCredential.from_record(record) if record else None

    def put(self, cred: PooledCredential) -> None:
        with self._mutex:
            self._records[(cred.provider, cred.id)] = cred.to_record(with_secret=True)

    def insert_if_absent(self, cred: PooledCredential) -> PooledCredential:
        with self._mutex:
            key = (cred.provider, cred.id)
            if key not in self._records:
                self._records[key] = cred.to_record(with_secret=True)
            return PooledCredential.from_record(self._records[key])

    def delete(self, provider: str, cred_id: str) -> bool:
        with self._mutex:
            return self._records.pop((provider, cred_id), None) is not None

    def patch(self, provider: str, cred_id: str, fields: Mapping[str, Any]) -> PooledCredential | None:
        with self._mutex:
            record = self._records.get((provider, cred_id))
            if record is None:
                return None
            record = {**record, **fields}
            self._records[(provider, cred_id)] = record
            return PooledCredential.from_record(record)

    def mark(self, provider: str, cred_id: str, mark: Mark, now: float) -> PooledCredential | None:
        with self._mutex:
            record = self._records.get((provider, cred_id))
            if record is None:
                return None
            record = apply_mark(record, mark, now)
            self._records[(provider, cred_id)] = record
            return PooledCredential.from_record(record)

    def acquire(
        self, provider: str, candidates: Sequence[str], *, cap: int, ttl: float, now: float,
        order: Order,
    ) -> Acquired | None:
        with self._mutex:
            records = {c: self._records[(provider, c)] for c in candidates
                       if (provider, c) in self._records}
            rotation = self._rotation.get(provider, 0)
            chosen = choose(candidates, records, self._counts(provider, now), cap=cap, now=now,
                            order=order, rotation=rotation)
            if chosen is None:
                return None
            if order == "rotate":
                self._rotation[provider] = rotation + 1
            record = records[chosen]
            record["request_count"] = int(record.get("request_count") or 0) + 1
            lease = Acquired(chosen, new_lease_id(), now + ttl)
            self._leases.setdefault(provider, {})[lease.lease_id] = (chosen, lease.expires_at)
            return lease

    def renew(self, provider: str, lease_id: str, *, ttl: float, now: float) -> bool:
        with self._mutex:
            leases = self._leases.get(provider, {})
            held = leases.get(lease_id)
            if held is None or held[1] <= now:
                leases.pop(lease_id, None)
                return False
            leases[lease_id] = (held[0], now + ttl)
            return True

    def release(self, provider: str, lease_id: str) -> None:
        with self._mutex:
            self._leases.get(provider, {}).pop(lease_id, None)

    def lease_counts(self, provider: str, now: float) -> dict[str, int]:
        with self._mutex:
            return self._counts(provider, now)

    def _counts(self, provider: str, now: float) -> dict[str, int]:
        leases = self._leases.get(provider, {})
        for lease_id in [k for k, (_, exp) in leases.items() if exp <= now]:
            del leases[lease_id]  # expired: a crashed holder's lease frees itself
        counts: dict[str, int] = {}
        for cred_id, _ in leases.values():
            counts[cred_id] = counts.get(cred_id, 0) + 1
        return counts

    @contextmanager
    def lock(self, name: str, *, ttl: float = 30.0, timeout: float = 30.0) -> Iterator[None]:
        with self._mutex:
            lock = self._locks.setdefault(name, threading.Lock())
        if not lock.acquire(timeout=timeout):
            raise TimeoutError(f"lock {name!r} not acquired in {timeout} s")
        try:
            yield None
        finally:
            lock.release()

    def close(self) -> None:
        pass
