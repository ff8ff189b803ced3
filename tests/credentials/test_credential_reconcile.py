"""Redis outages reconcile: what a process did on local state while Redis was frozen is
merged when it answers (cooldowns, counts, leases); a Redis that comes back empty is
detected by its generation key and re-seeded, never "no credentials"."""

from __future__ import annotations

import logging
import time
import uuid

import pytest
from redisproc import RedisProcess

from modelwire.credentials.cooldown import Mark
from modelwire.credentials.credential import PooledCredential
from modelwire.credentials.stores.redis import RedisStore


@pytest.fixture
def redis_proc(tmp_path):
    proc = RedisProcess(str(tmp_path)).start()
    yield proc
    proc.stop()


def _store(proc: RedisProcess, prefix: str) -> RedisStore:
    return RedisStore(proc.url, prefix=prefix, timeout=0.05, reconnect_interval=0.05)


def _cred(n: int) -> PooledCredential:
    return PooledCredential(id=f"c{n}", provider="acme", label=f"k{n}", source="manual",
                            secret=f"sk-test-{n:04d}-0123456789abcdef", status_at=0.0)


def _until_healthy(store: RedisStore) -> None:
    deadline = time.monotonic() + 10
    while store.health != "ok" and time.monotonic() < deadline:
        store.list("acme")  # any call tries Redis again once the interval passed
        time.sleep(0.06)
    assert store.health == "ok"


def test_changes_made_while_redis_is_frozen_are_merged_when_it_answers(redis_proc, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="modelwire.credentials")
    prefix = f"r{uuid.uuid4().hex[:6]}:"
    store = _store(redis_proc, prefix)
    for n in range(2):
        store.put(_cred(n))
    before = store.acquire("acme", ["c0"], cap=5, ttl=600, now=1000.0, order="ordered")
    assert before is not None
    redis_proc.freeze()
    try:
        store.list("acme")
        assert store.health == "degraded"
        taken = [store.acquire("acme", ["c0", "c1"], cap=5, ttl=600, now=1000.0, order="ordered")
                 for _ in range(3)]
        assert all(taken)
        store.mark("acme", "c1", Mark("cooling", until=5000.0, code="429"), now=1000.0)
        store.release("acme", before.lease_id)  # taken before the outage: freed there too
        store.put(_cred(7))  # added while degraded
    finally:
        redis_proc.thaw()
    _until_healthy(store)
    peer = _store(redis_proc, prefix)  # another machine's view, straight from Redis
    by_id = {c.id: c for c in peer.list("acme")}
    assert by_id["c0"].request_count == 4  # one before, three while degraded: added
    assert by_id["c1"].status == "cooling" and by_id["c1"].cooldown_until == 5000.0
    assert "c7" in by_id
    counts = peer.lease_counts("acme", 1000.0)
    assert counts == {"c0": 3}  # the three leases taken locally, not the released one
    assert any("merged local changes" in r.getMessage() for r in caplog.records)


def test_a_later_cooldown_set_elsewhere_wins_over_the_merged_one(redis_proc) -> None:
    prefix = f"r{uuid.uuid4().hex[:6]}:"
    store, peer = _store(redis_proc, prefix), None
    store.put(_cred(0))
    redis_proc.freeze()
    try:
        store.list("acme")
        store.mark("acme", "c0", Mark("cooling", until=2000.0), now=1000.0)
    finally:
        redis_proc.thaw()
    peer = _store(redis_proc, prefix)
    peer.mark("acme", "c0", Mark("cooling", until=9000.0), now=1001.0)
    _until_healthy(store)
    assert peer.get("acme", "c0").cooldown_until == 9000.0  # type: ignore[union-attr]


def test_a_redis_that_comes_back_empty_is_reseeded(redis_proc, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="modelwire.credentials")
    prefix = f"r{uuid.uuid4().hex[:6]}:"
    store = _store(redis_proc, prefix)
    salt = store.salt()
    for n in range(3):
        store.put(_cred(n))
    redis_proc.kill()
    redis_proc.start()  # the same port, no data
    time.sleep(0.06)  # past the reconnect interval: the next call reaches the new Redis
    seen = store.list("acme")
    _until_healthy(store)
    peer = _store(redis_proc, prefix)
    assert sorted(c.id for c in peer.list("acme")) == ["c0", "c1", "c2"]
    assert len(seen) == 3 and peer.salt() == salt  # env credentials keep their ids
    assert any("wrote back the 3 credentials" in r.getMessage() for r in caplog.records)


def test_a_fresh_process_marking_an_emptied_redis_as_new_does_not_hide_the_loss(redis_proc) -> None:
    prefix = f"r{uuid.uuid4().hex[:6]}:"
    store = _store(redis_proc, prefix)
    store.put(_cred(0))
    redis_proc.kill()
    redis_proc.start()
    newcomer = _store(redis_proc, prefix)
    assert newcomer.list("acme") == []  # it knows nothing to restore: a new generation
    time.sleep(0.06)
    store.list("acme")
    _until_healthy(store)
    assert [c.id for c in newcomer.list("acme")] == ["c0"]
