"""The SQLite limiter: counters and reservations in the state file, so limiters of
different processes on one file admit as one. Two limiters on one file stand for two
workers here (tests/teams/test_workers.py runs real ones); the clock is injected."""

from __future__ import annotations

import asyncio
import calendar
import sqlite3
import subprocess
import sys

import pytest

from modelwire.teams.model import Budget, SpendRow, Team, VirtualKey
from modelwire.teams.owners import process_owner
from modelwire.teams.sqlite import SQLiteKeyStore
from modelwire.teams.sqlite_limiter import LOST, SQLiteLimiter, holds
from modelwire.teams.store import BudgetExhausted, Demand, RateLimited

T0 = float(calendar.timegm((2026, 12, 15, 12, 0, 0)))


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _key(**kw) -> VirtualKey:
    return VirtualKey("key_1", "alice", "h", "mw-x…", **kw)


def _row(rid: str, cost: float) -> SpendRow:
    return SpendRow(T0, rid, "key_1", None, "m", "m", "p", 10, 10, cost_usd=cost)


@pytest.fixture
def path(tmp_path):
    store = SQLiteKeyStore(str(tmp_path / "state.db"))
    store.close()
    return store.path


def _spend(path: str) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT request_id, status, cost_usd FROM spend ORDER BY request_id").fetchall()


def test_rpm_is_counted_once_for_limiters_of_different_processes(path):
    clock = Clock()
    a = SQLiteLimiter(path, clock=clock, owner="a")
    b = SQLiteLimiter(path, clock=clock, owner="b")
    key = _key(rpm=5)

    async def go():
        for i in range(5):
            clock.now = T0 + i
            await (a if i % 2 else b).reserve(Demand(key, None, 0.0, 1))
        for limiter in (a, b):
            with pytest.raises(RateLimited) as refused:
                await limiter.reserve(Demand(key, None, 0.0, 1))
            assert refused.value.limit == "rpm" and refused.value.allowed == 5
            assert refused.value.retry_after == pytest.approx(56)  # the first leaves at T0+60
        clock.now = T0 + 60
        await a.reserve(Demand(key, None, 0.0, 1))
        with pytest.raises(RateLimited):
            await b.reserve(Demand(key, None, 0.0, 1))
        await a.close()
        await b.close()

    asyncio.run(go())


def test_tpm_follows_the_settled_tokens_across_limiters(path):
    clock = Clock()
    a = SQLiteLimiter(path, clock=clock, owner="a")
    b = SQLiteLimiter(path, clock=clock, owner="b")
    key = _key(tpm=1000)

    async def go():
        first = await a.reserve(Demand(key, None, 0.0, 600))
        with pytest.raises(RateLimited) as refused:
            await b.reserve(Demand(key, None, 0.0, 600))
        assert refused.value.limit == "tpm" and refused.value.retry_after == pytest.approx(60)
        await a.finish(first, 0.0, 100, _row("r1", 0.0))  # it used 100 of its 600
        await a.drain()
        await b.reserve(Demand(key, None, 0.0, 600))
        await a.close()
        await b.close()

    asyncio.run(go())


def test_a_budget_is_shared_reserved_and_settled_across_limiters(path):
    clock = Clock()
    a = SQLiteLimiter(path, clock=clock, owner="a")
    b = SQLiteLimiter(path, clock=clock, owner="b")
    key = _key(budget=Budget(1.0, "month"))

    async def go():
        granted = [await a.reserve(Demand(key, None, 0.3, 1)),
                   await b.reserve(Demand(key, None, 0.3, 1)),
                   await a.reserve(Demand(key, None, 0.3, 1))]
        with pytest.raises(BudgetExhausted) as refused:
            await b.reserve(Demand(key, None, 0.3, 1))
        assert refused.value.spent_usd == pytest.approx(0.9)
        assert refused.value.reset_at == float(calendar.timegm((2027, 1, 1, 0, 0, 0)))
        await a.finish(granted[0], 0.05, 10, _row("r1", 0.05))  # 0.25 comes back
        await a.drain()
        await b.reserve(Demand(key, None, 0.3, 1))  # 0.05 + 0.6 + 0.3 = 0.95
        with pytest.raises(BudgetExhausted) as refused:
            await b.reserve(Demand(key, None, 0.1, 1))
        assert refused.value.spent_usd == pytest.approx(0.95)
        await a.close()
        await b.close()

    asyncio.run(go())
    assert _spend(path) == [("r1", 200, 0.05)]  # the settle's row, in its transaction


def test_the_tighter_of_key_and_team_applies_and_a_refusal_holds_nothing(path):
    clock = Clock()
    a = SQLiteLimiter(path, clock=clock, owner="a")
    team = Team("team_1", "platform", budget=Budget(0.5, "month"), rpm=100)
    key = _key(team_id=team.id, budget=Budget(10.0, "month"), rpm=2)

    async def go():
        await a.reserve(Demand(key, team, 0.4, 1))
        with pytest.raises(BudgetExhausted) as refused:  # the team's budget is the tighter
            await a.reserve(Demand(key, team, 0.2, 1))
        assert refused.value.scope.kind == "team"
        await a.reserve(Demand(key, team, 0.1, 1))  # the refusal took no rpm
        with pytest.raises(RateLimited) as limited:
            await a.reserve(Demand(key, team, 0.0, 1))
        assert limited.value.scope.kind == "key" and limited.value.allowed == 2
        await a.close()

    asyncio.run(go())


def test_a_budget_starts_from_the_spend_record_already_in_the_file(path):
    store = SQLiteKeyStore(path)
    store.add_spend([_row("before", 0.7)])
    store.close()
    a = SQLiteLimiter(path, clock=Clock(), owner="a")
    key = _key(budget=Budget(1.0, "month"))

    async def go():
        with pytest.raises(BudgetExhausted) as refused:
            await a.reserve(Demand(key, None, 0.4, 1))
        assert refused.value.spent_usd == pytest.approx(0.7)
        await a.reserve(Demand(key, None, 0.3, 1))
        await a.close()

    asyncio.run(go())


def test_the_holds_of_a_process_that_died_become_lost_spend_rows_at_their_worst_case(path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = process_owner(int(gone.stdout))  # a process that has exited
    clock = Clock()
    key = _key(budget=Budget(1.0, "month"))
    crashed = SQLiteLimiter(path, clock=clock, owner=dead)

    async def held():
        await crashed.reserve(Demand(key, None, 0.3, 1, "chat", "req_a"))
        await crashed.reserve(Demand(key, None, 0.2, 1, "chat", "req_b"))
        # it dies here: no settle ever comes, nothing is written at shutdown

    asyncio.run(held())
    assert len(holds(path)) == 2
    clock.now = T0 + 5
    restarted = SQLiteLimiter(path, clock=clock, owner="a")  # a new worker opens the file
    assert restarted.lost == 2 and holds(path) == []
    assert _spend(path) == [("req_a", LOST, 0.3), ("req_b", LOST, 0.2)]

    async def after():
        await restarted.reserve(Demand(key, None, 0.5, 1))  # 0.3 + 0.2 + 0.5: exactly full
        with pytest.raises(BudgetExhausted) as refused:
            await restarted.reserve(Demand(key, None, 0.01, 1))
        assert refused.value.spent_usd == pytest.approx(1.0)
        await restarted.close()

    asyncio.run(after())


def test_the_holds_of_a_live_process_are_not_taken_as_lost(path):
    clock = Clock()
    key = _key(budget=Budget(1.0, "month"))
    alive = SQLiteLimiter(path, clock=clock)  # this process

    async def go():
        await alive.reserve(Demand(key, None, 0.3, 1))

    asyncio.run(go())
    other = SQLiteLimiter(path, clock=clock, owner="b")
    assert other.lost == 0 and len(holds(path)) == 1
    assert _spend(path) == []


def test_a_busy_file_makes_reserve_wait_its_turn_without_blocking_the_loop(path):
    clock = Clock()
    a = SQLiteLimiter(path, clock=clock, owner="a")
    key = _key(rpm=10)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock

    async def go():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        tick = asyncio.create_task(ticker())
        pending = asyncio.create_task(a.reserve(Demand(key, None, 0.0, 1)))
        deadline = asyncio.get_running_loop().time() + 10
        while ticks < 20:  # the loop runs on while the reserve waits for the lock
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.005)
        assert not pending.done()
        other.execute("COMMIT")
        await asyncio.wait_for(pending, 5)
        tick.cancel()
        await a.close()

    asyncio.run(go())


def test_a_hold_older_than_its_ttl_stops_counting_and_its_late_settle_still_counts(path):
    clock = Clock()
    key = _key(budget=Budget(1.0, "month"))
    slow = SQLiteLimiter(path, clock=clock, owner="a", hold_ttl=100)
    other = SQLiteLimiter(path, clock=clock, owner="b")

    async def go():
        stuck = await slow.reserve(Demand(key, None, 0.6, 1))
        with pytest.raises(BudgetExhausted):
            await other.reserve(Demand(key, None, 0.6, 1))
        clock.now = T0 + 101  # the hold's time is up: it no longer holds the budget
        granted = await other.reserve(Demand(key, None, 0.6, 1))
        await slow.finish(stuck, 0.3, 10, _row("late", 0.3))  # it did answer, after all
        await slow.drain()
        with pytest.raises(BudgetExhausted) as refused:  # 0.3 spent late + 0.6 held
            await other.reserve(Demand(key, None, 0.2, 1))
        assert refused.value.spent_usd == pytest.approx(0.9)
        await other.finish(granted, 0.0, 0, _row("released", 0.0))
        await other.close()
        await slow.close()

    asyncio.run(go())


def test_retry_after_counts_only_the_requests_still_in_the_window(path):
    clock = Clock()
    a = SQLiteLimiter(path, clock=clock, owner="a")
    key = _key(rpm=2)

    async def go():
        await a.reserve(Demand(key, None, 0.0, 1))  # T0: leaves the window at T0+60
        clock.now = T0 + 50
        await a.reserve(Demand(key, None, 0.0, 1))  # leaves at T0+110
        clock.now = T0 + 70  # the first has left (its row not deleted yet: nothing settled)
        await a.reserve(Demand(key, None, 0.0, 1))
        with pytest.raises(RateLimited) as refused:
            await a.reserve(Demand(key, None, 0.0, 1))
        assert refused.value.retry_after == pytest.approx(40)  # the T0+50 one, at T0+110
        await a.close()

    asyncio.run(go())
