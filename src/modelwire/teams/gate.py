"""The per-request part of teams: who a virtual key is, and what its request may cost.

``Gate.key_for`` finds a key by its hash in a small in-memory cache whose entries live
``ttl`` seconds (0.5 by default), so a revoked key is refused within that time on
every instance, and the store is read at most once per key per ``ttl`` (in a thread,
never on the event loop; concurrent misses for one key share one read; unknown keys
are cached too, so a flood of bad keys does not become a flood of reads).

``Gate.admit`` checks the model list and reserves the request's worst case with the
``Limiter``; the ``Ticket`` it returns settles with the answer's usage and queues the
request's spend row (``SpendWriter``), once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..providers.prices import Price
from .model import KEY_PREFIX, SpendRow, Team, VirtualKey, hash_key
from .spendlog import SpendWriter
from .store import (
    Demand,
    KeyRefused,
    KeyStore,
    Limiter,
    ModelNotAllowed,
    RecordingLimiter,
    Reservation,
)

__all__ = ["Gate", "Ticket", "worst_case_usd"]

_MAX_CACHED = 10_000
_PER = 1_000_000


def worst_case_usd(price: Price | None, input_tokens: int, max_tokens: int) -> float:
    """The most a request can cost: its input at the input rate (no cache discount) and
    ``max_tokens`` at the dearer of the output and reasoning rates; 0.0 unpriced."""
    if price is None:
        return 0.0
    out = max(price.output, price.reasoning or 0.0)
    write = max(price.input, price.cache_write or 0.0)
    return (input_tokens * write + max_tokens * out) / _PER


@dataclass(slots=True)
class _Entry:
    until: float
    key: VirtualKey | None
    team: Team | None


class Gate:
    def __init__(self, store: KeyStore, limiter: Limiter, writer: SpendWriter | None, *,
                 ttl: float = 0.5, default_max_tokens: int = 4096,
                 clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store, self.limiter, self.writer = store, limiter, writer
        # a reserved request's spend row goes with its settle (never lost between them)
        self.recording: RecordingLimiter | None = \
            limiter if isinstance(limiter, RecordingLimiter) else None
        self.ttl = ttl
        self.default_max_tokens = default_max_tokens
        self._clock, self._monotonic = clock, monotonic
        self._cache: dict[str, _Entry] = {}
        self._reading: dict[str, asyncio.Future[_Entry]] = {}

    @staticmethod
    def is_virtual(secret: str) -> bool:
        return secret.startswith(KEY_PREFIX)

    # ------------------------------------------------------------ keys
    def cached(self, secret: str) -> tuple[VirtualKey, Team | None] | None:
        """The key from the cache only (None: not cached or stale); raises KeyRefused
        for a cached unknown, revoked or expired key."""
        entry = self._cache.get(hash_key(secret))
        if entry is None or entry.until <= self._monotonic():
            return None
        return self._active(entry)

    async def key_for(self, secret: str) -> tuple[VirtualKey, Team | None]:
        """The active key ``secret`` names and its team; KeyRefused otherwise."""
        digest = hash_key(secret)
        entry = self._cache.get(digest)
        if entry is None or entry.until <= self._monotonic():
            entry = await self._read(digest)
        return self._active(entry)

    def key_now(self, secret: str) -> tuple[VirtualKey, Team | None]:
        """As ``key_for``, reading the store in this thread on a miss (the gateway's
        synchronous checks: model listings, token counts)."""
        digest = hash_key(secret)
        entry = self._cache.get(digest)
        if entry is None or entry.until <= self._monotonic():
            entry = self._store_read(digest)
        return self._active(entry)

    def _active(self, entry: _Entry) -> tuple[VirtualKey, Team | None]:
        key = entry.key
        if key is None:
            raise KeyRefused("unknown")
        now = self._clock()
        if key.revoked_at is not None and key.revoked_at <= now:
            raise KeyRefused("revoked", key.name)
        if key.expires_at is not None and now >= key.expires_at:
            raise KeyRefused("expired", key.name)
        return key, entry.team

    async def _read(self, digest: str) -> _Entry:
        pending = self._reading.get(digest)
        if pending is not None:
            return await asyncio.shield(pending)
        pending = asyncio.get_running_loop().create_future()
        self._reading[digest] = pending
        try:
            entry = await asyncio.to_thread(self._store_read, digest)
            pending.set_result(entry)
            return entry
        except BaseException as exc:
            pending.set_exception(exc)
            pending.exception()  # retrieved: waiters (if any) get it too
            raise
        finally:
            del self._reading[digest]

    def _store_read(self, digest: str) -> _Entry:
        key = self.store.key_by_hash(digest)
        team = self.store.get_team(key.team_id) if key is not None and key.team_id else None
        entry = _Entry(self._monotonic() + self.ttl, key, team)
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()
        self._cache[digest] = entry
        return entry

    def forget(self) -> None:
        """Drop every cached key (an admin change on this instance takes effect now)."""
        self._cache.clear()

    # ------------------------------------------------------------ requests
    async def admit(self, key: VirtualKey | None, team: Team | None, model: str,
                    price: Price | None, input_tokens: int, max_tokens: int | None,
                    request_id: str = "") -> Ticket:
        """A ticket for one request (``key`` None: an unlimited key; its spend is still
        recorded). Raises ModelNotAllowed, RateLimited or BudgetExhausted."""
        reservation = None
        if key is not None:
            if not key.allows(model):
                raise ModelNotAllowed(key.name, model, key.models)
            limited = (key.budget or key.rpm or key.tpm or
                       (team is not None and (team.budget or team.rpm or team.tpm)))
            if limited:
                out = max_tokens or self.default_max_tokens
                demand = Demand(key, team, worst_case_usd(price, input_tokens, out),
                                input_tokens + out, model, request_id)
                reservation = await self.limiter.reserve(demand)
        return Ticket(self, key, team, model, reservation, self._clock())


class Ticket:
    """One admitted request: settle it once with what it used (or nothing)."""

    __slots__ = ("_done", "gate", "handed", "key", "model", "reservation", "started", "team")

    def __init__(self, gate: Gate, key: VirtualKey | None, team: Team | None, model: str,
                 reservation: Reservation | None, started: float) -> None:
        self.gate, self.key, self.team, self.model = gate, key, team, model
        self.reservation, self.started = reservation, started
        self._done = False
        self.handed = False  # a stream settles it when it ends, not the handler

    async def settle(self, *, request_id: str, status: int, usage: Mapping[str, Any] | None,
                     cost_usd: float | None, provider: str = "", model_served: str = "",
                     latency_ms: float = 0.0, cut: bool = False) -> None:
        """Settle the reservation from ``usage`` (None: nothing was served: released;
        with ``cut``, a stream cut before its usage came: charged the reserved worst
        case, so a cut never spends a budget for free) and queue the spend row. A
        second call does nothing."""
        if self._done:
            return
        self._done = True
        u = usage or {}
        prompt = int(u.get("prompt_tokens") or 0)
        completion = int(u.get("completion_tokens") or 0)
        reservation = self.reservation
        tokens = prompt + completion
        if usage is None and reservation is not None:
            if cut:  # charged the worst case
                demand = reservation.demand
                cost_usd = demand.cost_usd if cost_usd is None else cost_usd
                tokens = demand.tokens
            else:  # nothing served: released
                tokens = 0
        row = SpendRow(  # SpendRow's field order
            self.started, request_id, None if self.key is None else self.key.id,
            None if self.team is None else self.team.id, self.model, model_served,
            provider, prompt, completion, int(u.get("cache_read_tokens") or 0),
            int(u.get("cache_write_tokens") or 0), int(u.get("reasoning_tokens") or 0),
            cost_usd, status, latency_ms)
        gate = self.gate
        if reservation is not None and gate.recording is not None:
            released = usage is None and not cut
            await gate.recording.finish(reservation, None if released else cost_usd, tokens, row)
            return
        if reservation is not None:
            if usage is None and not cut:
                await gate.limiter.release(reservation)
            else:
                await gate.limiter.settle(reservation, cost_usd, tokens)
        if gate.writer is not None:
            gate.writer.record(row)
