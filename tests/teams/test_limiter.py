"""The in-process limiter: sliding minute windows, budgets with reservations, the
tighter of key and team, all with an injected clock (no sleeps)."""

from __future__ import annotations

import asyncio
import calendar

import pytest

from modelwire.teams.limiter import LocalLimiter
from modelwire.teams.model import Budget, Team, VirtualKey
from modelwire.teams.store import BudgetExhausted, Demand, RateLimited

T0 = float(calendar.timegm((2026, 12, 15, 12, 0, 0)))


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Spent:
    """A KeyStore stand-in that knows only what was spent before."""

    def __init__(self, usd: float = 0.0) -> None:
        self.usd, self.calls = usd, []

    def spent(self, scope, since):
        self.calls.append((scope.id, since))
        return self.usd


def _key(**kw) -> VirtualKey:
    return VirtualKey("key_1", "alice", "h", "mw-x…", **kw)


def _run(coro):
    return asyncio.run(coro)


def test_rpm_admits_n_in_a_sliding_minute_and_says_when_the_next_fits():
    clock = Clock()
    limiter = LocalLimiter(clock=clock)
    key = _key(rpm=3)

    async def go():
        for i in range(3):
            clock.now = T0 + i * 10
            await limiter.reserve(Demand(key, None, 0.0, 1))
        with pytest.raises(RateLimited) as refused:
            await limiter.reserve(Demand(key, None, 0.0, 1))
        assert refused.value.limit == "rpm" and refused.value.retry_after == pytest.approx(40)
        clock.now = T0 + 60  # the first request left the window
        await limiter.reserve(Demand(key, None, 0.0, 1))

    _run(go())


def test_tpm_counts_the_settled_tokens_not_the_reservation():
    clock = Clock()
    limiter = LocalLimiter(clock=clock)
    key = _key(tpm=1000)

    async def go():
        first = await limiter.reserve(Demand(key, None, 0.0, 900))
        with pytest.raises(RateLimited) as refused:
            await limiter.reserve(Demand(key, None, 0.0, 200))
        assert refused.value.limit == "tpm"
        await limiter.settle(first, 0.0, 100)  # it used far less than it reserved
        await limiter.reserve(Demand(key, None, 0.0, 800))

    _run(go())


def test_a_budget_refuses_what_would_overshoot_and_reopens_when_settled_below():
    limiter = LocalLimiter(Spent(0.90), clock=Clock())
    key = _key(budget=Budget(1.0, "month"))

    async def go():
        held = await limiter.reserve(Demand(key, None, 0.08, 10))
        with pytest.raises(BudgetExhausted) as refused:
            await limiter.reserve(Demand(key, None, 0.05, 10))
        assert refused.value.reset_at == calendar.timegm((2027, 1, 1, 0, 0, 0))
        await limiter.settle(held, 0.01, 10)
        await limiter.reserve(Demand(key, None, 0.05, 10))  # 0.91 spent + 0.05 fits

    _run(go())


def test_the_team_budget_binds_when_it_is_tighter_than_the_keys():
    limiter = LocalLimiter(Spent(0.0), clock=Clock())
    team = Team("team_1", "ml", budget=Budget(0.10, "day"))
    key = _key(budget=Budget(100.0, "month"), team_id="team_1")

    async def go():
        await limiter.reserve(Demand(key, team, 0.06, 10))
        with pytest.raises(BudgetExhausted) as refused:
            await limiter.reserve(Demand(key, team, 0.06, 10))
        assert refused.value.scope.kind == "team"

    _run(go())


def test_a_refusal_holds_nothing():
    limiter = LocalLimiter(Spent(0.0), clock=Clock())
    team = Team("team_1", "ml", rpm=1)
    key = _key(rpm=10, budget=Budget(1.0, "month"), team_id="team_1")

    async def go():
        await limiter.reserve(Demand(key, team, 0.5, 10))
        with pytest.raises(RateLimited):
            await limiter.reserve(Demand(key, team, 0.5, 10))  # the team's rpm refuses
        # the key's budget was not charged by the refused request: 0.5 more still fits
        other = Team("team_2", "other")
        await limiter.reserve(Demand(key, other, 0.5, 10))

    _run(go())


def test_a_released_reservation_gives_its_budget_back():
    limiter = LocalLimiter(Spent(0.0), clock=Clock())
    key = _key(budget=Budget(1.0, "total"))

    async def go():
        held = await limiter.reserve(Demand(key, None, 0.9, 10))
        await limiter.release(held)
        await limiter.release(held)  # twice: nothing more
        await limiter.reserve(Demand(key, None, 0.9, 10))
        with pytest.raises(BudgetExhausted) as refused:
            await limiter.reserve(Demand(key, None, 0.2, 10))
        assert refused.value.reset_at is None

    _run(go())


def test_the_store_is_read_once_per_scope_and_period_even_under_concurrency():
    store = Spent(0.0)
    clock = Clock()
    limiter = LocalLimiter(store, clock=clock)
    key = _key(budget=Budget(100.0, "day"))

    async def go():
        await asyncio.gather(*[limiter.reserve(Demand(key, None, 0.01, 1)) for _ in range(20)])
        assert len(store.calls) == 1
        clock.now = T0 + 86400  # the next day: read again, from its midnight
        await limiter.reserve(Demand(key, None, 0.01, 1))
        assert store.calls[-1] == ("key_1", calendar.timegm((2026, 12, 16, 0, 0, 0)))

    _run(go())
