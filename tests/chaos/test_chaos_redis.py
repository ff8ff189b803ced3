"""Redis frozen (SIGSTOP) and killed (kill -9, restarted empty) while several stores
(one per worker, as separate processes would hold) lease, count and cool credentials:
no update lost across the freeze (journaled, merged), no credential lost across the
restart (re-seeded), every store healthy again afterwards."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import pytest
from redisproc import RedisProcess

from modelwire.credentials.cooldown import Mark
from modelwire.credentials.credential import PooledCredential
from modelwire.credentials.stores.redis import RedisStore

from .conftest import report, scale

WORKERS = 4


@pytest.fixture
def redis_proc(tmp_path):
    proc = RedisProcess(str(tmp_path)).start()
    yield proc
    proc.stop()


def _cred(n: int) -> PooledCredential:
    return PooledCredential(id=f"c{n}", provider="acme", label=f"k{n}", source="manual",
                            secret=f"sk-chaos-{n:04d}-0123456789abcdef", status_at=0.0)


def _workers(stores: list[RedisStore], cycles: int, middle: Callable[[], None]) -> list[int]:
    """Each store leases and releases ``cycles`` times; ``middle`` runs once all have
    done a third of theirs. Returns each worker's leases."""
    done = [0] * len(stores)
    third = threading.Barrier(len(stores) + 1)
    ids = [f"c{n}" for n in range(len(stores))]

    def work(i: int) -> None:
        for n in range(cycles):
            if n == cycles // 3:
                third.wait(30)
            got = stores[i].acquire("acme", ids, cap=WORKERS, ttl=600, now=1000.0, order="rotate")
            assert got is not None
            done[i] += 1
            stores[i].release("acme", got.lease_id)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    third.wait(30)
    middle()
    for t in threads:
        t.join(60)
    return done


def _healthy(stores: list[RedisStore]) -> float:
    started = time.monotonic()
    deadline = started + 15
    while any(s.health != "ok" for s in stores) and time.monotonic() < deadline:
        for s in stores:
            s.list("acme")
        time.sleep(0.06)
    assert all(s.health == "ok" for s in stores)
    return time.monotonic() - started


@pytest.mark.timeout(1200)  # the full run's phases take minutes
def test_redis_frozen_mid_run_loses_no_update(redis_proc) -> None:
    prefix = f"chaos{uuid.uuid4().hex[:6]}:"
    stores = [RedisStore(redis_proc.url, prefix=prefix, timeout=0.05, reconnect_interval=0.05)
              for _ in range(WORKERS)]
    for n in range(WORKERS):
        stores[0].put(_cred(n))
        stores[0].put(_cred(100 + n))  # cooled while frozen (not leased: it stays cooling)
    for store in stores:
        store.list("acme")  # as a pool does when it opens: the local copy for degraded mode
    cycles = scale(60, 300)

    def freeze() -> None:
        redis_proc.freeze()
        for i, store in enumerate(stores):  # cooldowns set while frozen
            store.mark("acme", f"c{100 + i}", Mark("cooling", until=2000.0 + i), now=1000.0)
        time.sleep(0.3)  # frozen for a while: the workers run on local state meanwhile
        redis_proc.thaw()

    done = _workers(stores, cycles, freeze)
    recovery = _healthy(stores)
    fresh = RedisStore(redis_proc.url, prefix=prefix, timeout=2.0)
    listed = {c.id: c for c in fresh.list("acme")}
    counted = sum(c.request_count for c in listed.values())
    # a command a frozen Redis runs after its client gave up (50 ms) is counted there and
    # in the journal too: counts are at least once, never lost
    lost, twice = max(0, sum(done) - counted), max(0, counted - sum(done))
    cooled = sum(1 for i in range(WORKERS) if listed[f"c{100 + i}"].cooldown_until == 2000.0 + i)
    report("redis_sigstop", workers=WORKERS, leases=sum(done), counted=counted, lost_updates=lost,
           counted_twice=twice, cooldowns_merged=f"{cooled}/{WORKERS}", recovery_s=round(recovery, 2))
    assert sum(done) == WORKERS * cycles
    assert lost == 0 and cooled == WORKERS


@pytest.mark.timeout(1200)  # the full run's phases take minutes
def test_redis_killed_and_restarted_empty_keeps_every_credential(redis_proc) -> None:
    prefix = f"chaos{uuid.uuid4().hex[:6]}:"
    stores = [RedisStore(redis_proc.url, prefix=prefix, timeout=0.05, reconnect_interval=0.05)
              for _ in range(WORKERS)]
    for i, store in enumerate(stores):
        store.put(_cred(i))
    for store in stores:
        store.list("acme")  # every store holds every record locally
    cycles = scale(60, 300)

    def kill_and_restart() -> None:
        redis_proc.kill()
        time.sleep(0.2)
        redis_proc.start()

    done = _workers(stores, cycles, kill_and_restart)
    recovery = _healthy(stores)
    assert sum(done) == WORKERS * cycles  # no worker ever found "no credentials"
    fresh = RedisStore(redis_proc.url, prefix=prefix, timeout=2.0)
    ids = sorted(c.id for c in fresh.list("acme"))
    assert all(fresh.get("acme", f"c{i}") is not None for i in range(WORKERS))
    report("redis_kill9", workers=WORKERS, credentials_after=f"{len(ids)}/{WORKERS}",
           recovery_s=round(recovery, 2))
    assert ids == [f"c{i}" for i in range(WORKERS)]
