"""The Redis limiter against a real redis-server: two limiters on one Redis stand for two
gateway instances, so every count below is a count across instances."""

from __future__ import annotations

import asyncio

import pytest
from redisproc import RedisProcess

from modelwire.teams import Budget, BudgetExhausted, Demand, RateLimited, SpendRow, Team, VirtualKey
from modelwire.teams.redis_limiter import RedisLimiter
from modelwire.teams.sqlite import SQLiteKeyStore

T0 = 1_767_225_600.0 + 3600  # 2026-01-01T01:00:00Z: far from a period boundary


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = RedisProcess(str(tmp_path_factory.mktemp("redis"))).start()
    yield server
    server.stop()


@pytest.fixture
def store(tmp_path):
    s = SQLiteKeyStore(str(tmp_path / "state.db"))
    yield s
    s.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
async def pair(redis_server, store, clock, request):
    """Two limiters (two instances) on one Redis, with a prefix of their own per test."""
    import redis

    prefix = f"t{abs(hash(request.node.nodeid))}:"
    made = [RedisLimiter(redis_server.url, store, prefix=prefix, clock=clock, reconnect_interval=0.0)
            for _ in range(2)]
    yield made
    for limiter in made:
        await limiter.close()
    plain = redis.Redis.from_url(redis_server.url)
    for key in plain.scan_iter(prefix + "*"):
        plain.delete(key)
    plain.close()


def key(name: str = "alice", **limits) -> VirtualKey:
    return VirtualKey(id=f"key_{name}", name=name, key_hash="h-" + name, prefix="mw-x…", **limits)


async def test_an_rpm_limit_admits_n_in_total_across_instances(pair, clock):
    k = key(rpm=5)
    admitted, refused = 0, []
    for i in range(8):
        try:
            await pair[i % 2].reserve(Demand(k, None, 0.0, 10))
            admitted += 1
        except RateLimited as exc:
            refused.append(exc)
        clock.now += 1
    assert admitted == 5 and len(refused) == 3
    first = refused[0]
    assert first.limit == "rpm" and first.allowed == 5 and first.scope == k.scope
    # the oldest request (at T0) leaves the window at T0 + 60; this refusal came at T0 + 5
    assert first.retry_after == pytest.approx(55.0, abs=0.01)
    assert "5 requests per minute (rpm)" in str(first)


async def test_the_minute_slides_a_request_counts_for_sixty_seconds(pair, clock):
    k = key(rpm=1)
    await pair[0].reserve(Demand(k, None, 0.0, 1))
    clock.now += 59.9
    with pytest.raises(RateLimited):
        await pair[1].reserve(Demand(k, None, 0.0, 1))
    clock.now += 0.2
    await pair[1].reserve(Demand(k, None, 0.0, 1))


async def test_tpm_reserves_the_estimate_and_settling_gives_back_the_difference(pair, clock):
    k = key(tpm=1500)
    first = await pair[0].reserve(Demand(k, None, 0.0, 1000))
    with pytest.raises(RateLimited) as refused:
        await pair[1].reserve(Demand(k, None, 0.0, 1000))
    assert refused.value.limit == "tpm" and refused.value.retry_after == pytest.approx(60.0)
    await pair[0].settle(first, None, 200)  # the answer used 200 tokens, not 1000
    await pair[0].drain()
    await pair[1].reserve(Demand(k, None, 0.0, 1000))
    with pytest.raises(RateLimited):
        await pair[0].reserve(Demand(k, None, 0.0, 301))


async def test_64_concurrent_requests_on_two_instances_take_exactly_what_the_budget_holds(pair):
    k = key(budget=Budget(1.0, "month"))

    async def one(i: int):
        try:
            return await pair[i % 2].reserve(Demand(k, None, 0.03, 100))
        except BudgetExhausted as exc:
            return exc

    results = await asyncio.gather(*(one(i) for i in range(64)))
    granted = [r for r in results if not isinstance(r, BudgetExhausted)]
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    assert len(granted) == 33 and len(refused) == 31  # 33 * 0.03 = 0.99 <= 1.0 < 34 * 0.03
    assert refused[0].budget_usd == 1.0 and refused[0].reset_at == 1_769_904_000.0  # 2026-02-01
    for i, r in enumerate(granted):  # each actually cost a third of its worst case
        await pair[i % 2].settle(r, 0.01, 50)
    for limiter in pair:
        await limiter.drain()
    # settled 0.33, nothing held: 22 more worst cases of 0.03 fit (0.33 + 0.66 = 0.99)
    more = [await one(i) for i in range(23)]
    assert sum(not isinstance(r, BudgetExhausted) for r in more) == 22


async def test_a_budget_starts_from_the_spend_record(pair, store):
    k = key(budget=Budget(1.0, "month"))
    store.add_spend([SpendRow(time=T0 - 60, request_id="r1", key_id=k.id, team_id=None,
                              model_asked="m", model_served="m", provider="p", cost_usd=0.9)])
    with pytest.raises(BudgetExhausted) as refused:
        await pair[0].reserve(Demand(k, None, 0.2, 10))
    assert refused.value.spent_usd == pytest.approx(0.9)
    await pair[1].reserve(Demand(k, None, 0.1, 10))  # 0.9 + 0.1 fits exactly


async def test_release_gives_the_hold_back_and_a_dead_instances_hold_expires(pair, clock):
    k = key(budget=Budget(1.0, "total"))
    held = await pair[0].reserve(Demand(k, None, 0.6, 10))
    with pytest.raises(BudgetExhausted):
        await pair[1].reserve(Demand(k, None, 0.6, 10))
    await pair[0].release(held)
    await pair[0].drain()
    crashed = await pair[1].reserve(Demand(k, None, 0.6, 10))  # its instance dies: never settled
    assert crashed.id
    clock.now += pair[0].hold_ttl + 1
    await pair[0].reserve(Demand(k, None, 0.6, 10))


async def test_settle_returns_before_redis_has_it_and_drain_waits_for_it(pair):
    k = key(budget=Budget(1.0, "total"))
    r = await pair[0].reserve(Demand(k, None, 0.8, 10))
    await pair[0].settle(r, 0.1, 10)  # sent, not awaited: the answer does not wait on Redis
    assert pair[0].settling == 1
    await pair[0].drain()
    assert pair[0].settling == 0
    await pair[1].reserve(Demand(k, None, 0.9, 10))  # 0.1 spent + 0.9 fits: the hold is gone


async def test_key_and_team_are_admitted_together_or_not_at_all(pair):
    team = Team(id="team_eng", name="eng", rpm=1)
    alice, bob = key("alice", team_id="team_eng", rpm=10), key("bob", team_id="team_eng", rpm=1)
    await pair[0].reserve(Demand(alice, team, 0.0, 1))
    with pytest.raises(RateLimited) as refused:
        await pair[1].reserve(Demand(bob, team, 0.0, 1))
    assert refused.value.scope == team.scope
    # bob's own window took nothing from the refused request: alone, he still has his one
    await pair[1].reserve(Demand(bob, None, 0.0, 1))


async def test_settling_a_reservation_twice_counts_it_once(pair):
    k = key(budget=Budget(1.0, "total"))
    r = await pair[0].reserve(Demand(k, None, 0.5, 10))
    await pair[0].settle(r, 0.5, 10)
    await pair[0].drain()
    await pair[1].settle(r, 0.5, 10)  # the hold is gone; only the cost would count again
    await pair[1].drain()
    # 0.5 or 1.0 spent: the second settle must not have added its cost
    await pair[0].reserve(Demand(k, None, 0.5, 10))


async def test_redis_going_away_admits_locally_and_coming_back_uses_it_again(
        redis_server, store, clock, caplog):
    limiter = RedisLimiter(redis_server.url, store, prefix="outage:", clock=clock,
                           reconnect_interval=0.0)
    try:
        k = key(rpm=100)
        await limiter.reserve(Demand(k, None, 0.0, 1))
        assert limiter.health == "ok"
        redis_server.kill()
        r = await limiter.reserve(Demand(k, None, 0.0, 1))  # served, not an error
        assert limiter.health == "degraded"
        assert "unreachable" in caplog.text and "status: degraded" in caplog.text
        await limiter.settle(r, 0.0, 1)
        await limiter.drain()
        redis_server.start()
        await limiter.reserve(Demand(k, None, 0.0, 1))
        assert limiter.health == "ok" and "reachable again" in caplog.text
    finally:
        await limiter.close()


async def test_what_was_spent_while_redis_was_frozen_counts_in_its_budget_once_it_is_back(
        redis_server, store, clock):
    limiter = RedisLimiter(redis_server.url, store, prefix="frozen:", clock=clock,
                           reconnect_interval=0.0, timeout=0.3)
    other = RedisLimiter(redis_server.url, store, prefix="frozen:", clock=clock)
    try:
        k = key(budget=Budget(1.0, "total"))
        await limiter.release(await limiter.reserve(Demand(k, None, 0.1, 1)))  # counted in Redis
        await limiter.drain()
        redis_server.freeze()
        try:
            local = await limiter.reserve(Demand(k, None, 0.8, 1))  # Redis silent: granted here
        finally:
            redis_server.thaw()
        assert limiter.health == "degraded"
        await limiter.settle(local, 0.7, 1)  # answered after Redis is back
        await limiter.drain()
        assert limiter.health == "ok"
        with pytest.raises(BudgetExhausted) as refused:  # another instance sees the 0.7
            await other.reserve(Demand(k, None, 0.5, 1))
        assert refused.value.spent_usd == pytest.approx(0.7)
    finally:
        await limiter.close()
        await other.close()
