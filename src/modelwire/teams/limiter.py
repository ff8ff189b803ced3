"""The in-process ``Limiter``: rate windows and budgets held in this process's memory.

Used with the SQLite store (one gateway process owns the counters; several processes
or machines share a Redis limiter instead). Budgets start from the store's spend for
the current period, read once per scope and period (in a thread, off the event loop);
from then on the counters here are the truth and the spend record follows them.

Admission is all or nothing across the key and its team, decided without an ``await``
between the checks and the bookkeeping, so concurrent requests on one event loop
cannot both take the last of a budget. Windows are sliding: a request counts for the
60 seconds after it was admitted.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .model import Team, VirtualKey
from .store import BudgetExhausted, Demand, KeyStore, RateLimited, Reservation

__all__ = ["LocalLimiter"]

WINDOW_S = 60.0


@dataclass(slots=True)
class _Window:
    """A sliding minute: entries ``[admitted_at, amount, live]`` (amounts settle later;
    ``live`` turns 0 when the entry leaves the window, so a late settle leaves the
    total alone)."""

    entries: deque[list[float]] = field(default_factory=deque)
    total: float = 0.0

    def trim(self, now: float) -> None:
        while self.entries and self.entries[0][0] <= now - WINDOW_S:
            gone = self.entries.popleft()
            self.total -= gone[1]
            gone[2] = 0.0

    def wait_for(self, amount: float, allowed: float, now: float) -> float:
        """Seconds until ``amount`` more fits under ``allowed`` (0: it fits now)."""
        need = self.total + amount - allowed
        if need <= 0:
            return 0.0
        for at, n, _ in self.entries:
            need -= n
            if need <= 0:
                return at + WINDOW_S - now
        return WINDOW_S  # larger than the whole allowance: no wait makes it fit


@dataclass(slots=True)
class _Budget:
    start: float  # the period this count belongs to: [start, until)
    until: float
    settled: float = 0.0
    reserved: float = 0.0

    def current(self, now: float) -> bool:
        return self.start <= now < self.until


@dataclass(slots=True)
class _Held:
    reservation: Reservation
    token_entries: tuple[tuple[str, list[float]], ...]  # (scope id, its tpm entry)
    budgets: tuple[_Budget, ...]


class LocalLimiter:
    def __init__(self, store: KeyStore | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self._requests: dict[str, _Window] = {}
        self._tokens: dict[str, _Window] = {}
        self._budgets: dict[str, _Budget] = {}
        self._seeding: dict[str, asyncio.Future[float]] = {}
        self._held: dict[str, _Held] = {}
        self._ids = itertools.count(1)

    # ------------------------------------------------------------ admission
    async def reserve(self, demand: Demand) -> Reservation:
        owners: list[VirtualKey | Team] = [demand.key]
        if demand.team is not None:
            owners.append(demand.team)
        now = self._clock()
        for owner in owners:  # budgets read from the store first (the only await)
            if owner.budget is not None:
                count = self._budgets.get(owner.id)
                if count is None or not count.current(now):
                    await self._seed(owner)
                    now = self._clock()
        for owner in owners:
            self._check(owner, demand, now)
        return self._grant(owners, demand, now)

    def _check(self, owner: VirtualKey | Team, demand: Demand, now: float) -> None:
        # counters by id: key ids and team ids never collide (key_... / team_...)
        sid = owner.id
        if owner.rpm is not None:
            window = self._requests.get(sid) or self._requests.setdefault(sid, _Window())
            window.trim(now)
            wait = window.wait_for(1, owner.rpm, now)
            if wait > 0:
                raise RateLimited(owner.scope, "rpm", owner.rpm, wait)
        if owner.tpm is not None:
            window = self._tokens.get(sid) or self._tokens.setdefault(sid, _Window())
            window.trim(now)
            wait = window.wait_for(demand.tokens, owner.tpm, now)
            if wait > 0:
                raise RateLimited(owner.scope, "tpm", owner.tpm, wait)
        if owner.budget is not None:
            count = self._budget(owner, now)
            used = count.settled + count.reserved
            if used + demand.cost_usd > owner.budget.usd or used >= owner.budget.usd:
                raise BudgetExhausted(owner.scope, owner.budget.usd, used,
                                      owner.budget.resets_at(now))

    def _grant(self, owners: list[VirtualKey | Team], demand: Demand, now: float) -> Reservation:
        entries: list[tuple[str, list[float]]] = []
        budgets: list[_Budget] = []
        for owner in owners:
            sid = owner.id
            if owner.rpm is not None:
                window = self._requests[sid]
                window.entries.append([now, 1.0, 1.0])
                window.total += 1
            if owner.tpm is not None:
                window = self._tokens[sid]
                entry = [now, float(demand.tokens), 1.0]
                window.entries.append(entry)
                window.total += demand.tokens
                entries.append((sid, entry))
            if owner.budget is not None:
                count = self._budgets[sid]
                count.reserved += demand.cost_usd
                budgets.append(count)
        reservation = Reservation(f"r{next(self._ids)}", demand, now)
        self._held[reservation.id] = _Held(reservation, tuple(entries), tuple(budgets))
        return reservation

    async def settle(self, reservation: Reservation, cost_usd: float | None,
                     tokens: int) -> None:
        self._finish(reservation, cost_usd or 0.0, tokens)

    async def release(self, reservation: Reservation) -> None:
        self._finish(reservation, 0.0, 0)

    def _finish(self, reservation: Reservation, cost: float, tokens: int) -> None:
        held = self._held.pop(reservation.id, None)
        if held is None:
            return  # settled or released already
        for count in held.budgets:
            count.reserved -= reservation.demand.cost_usd
            count.settled += cost  # spent now: in the current period
        for sid, entry in held.token_entries:
            if entry[2]:  # still in its window: the total follows it
                self._tokens[sid].total += tokens - entry[1]
            entry[1] = float(tokens)

    async def close(self) -> None:
        self._held.clear()

    # ------------------------------------------------------------ budgets
    def _budget(self, owner: VirtualKey | Team, now: float) -> _Budget:
        assert owner.budget is not None
        count = self._budgets[owner.id]
        if not count.current(now):  # a new period: what is in flight stays reserved
            count.start, count.until = _period(owner, now)
            count.settled = 0.0
        return count

    async def _seed(self, owner: VirtualKey | Team) -> None:
        """The period's spend so far, from the store, once per scope and period."""
        sid = owner.id
        now = self._clock()
        count = self._budgets.get(sid)
        if count is not None and count.current(now):
            return
        start, until = _period(owner, now)
        pending = self._seeding.get(sid)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._seeding[sid] = pending
            try:
                spent = 0.0
                if self._store is not None:
                    spent = await asyncio.to_thread(self._store.spent, owner.scope, start)
                pending.set_result(spent)
            except BaseException as exc:
                pending.set_exception(exc)
                pending.exception()  # retrieved: the waiters (if any) get it too
                raise
            finally:
                del self._seeding[sid]
            current = self._budgets.get(sid)
            if current is None or current.start != start:
                reserved = current.reserved if current is not None else 0.0
                self._budgets[sid] = _Budget(start, until, spent, reserved)
        else:
            await asyncio.shield(pending)


def _period(owner: VirtualKey | Team, now: float) -> tuple[float, float]:
    """The budget period ``now`` is in: [start, until) (a total budget: all time)."""
    assert owner.budget is not None
    until = owner.budget.resets_at(now)
    return owner.budget.window_start(now), float("inf") if until is None else until
