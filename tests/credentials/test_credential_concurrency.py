"""Many processes, one store: no lost updates, exact counts, caps respected."""

from __future__ import annotations

import multiprocessing
import time
import uuid
from collections import Counter

import pytest

from modelwire.credentials import CredentialPool
from modelwire.credentials.stores import open_store

PROCESSES = 8
CYCLES = 500
CREDS = 8  # one per process: a credential over its cap of 1 is never justified


def _open(url: str, prefix: str):
    if url.startswith("redis://"):
        from modelwire.credentials.stores.redis import RedisStore

        # this test is about atomicity, not fail-open: a loaded CI machine may stall a
        # command past the 50 ms production timeout, which would (rightly) degrade
        return RedisStore(url, prefix=prefix, timeout=5.0)
    return open_store(url, shared=False)


def _worker(url: str, prefix: str, barrier, results) -> None:
    store = _open(url, prefix)
    pool = CredentialPool("acme", store=store, env_vars=(), environ={}, strategy="fill_first")
    used: Counter[str] = Counter()
    violations = 0
    barrier.wait()
    for i in range(CYCLES):
        with pool.lease() as lease:
            used[lease.credential.id] += 1
            counts = store.lease_counts("acme", time.time())
            if max(counts.values(), default=0) > 1 or lease.credential.id not in counts:
                violations += 1
            pool.report(lease, "success" if i % 7 else "overloaded")
    results.put((dict(used), violations, store.health))


def _run(url: str, prefix: str = "modelwire:") -> None:
    seed = _open(url, prefix)
    pool = CredentialPool("acme", store=seed, env_vars=(), environ={})
    for i in range(CREDS):
        pool.add(f"sk-test-concurrency-{i:04d}-xxxxxxxx", label=f"k{i}", priority=i, cred_id=f"k{i}")
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, prefix, barrier, results))
             for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    total: Counter[str] = Counter()
    for used, violations, health in outcomes:
        assert health == "ok"
        assert violations == 0
        total.update(used)
    assert sum(total.values()) == PROCESSES * CYCLES
    stored = {c.id: c.request_count for c in seed.list("acme")}
    assert stored == {cid: total.get(cid, 0) for cid in stored}  # zero lost updates
    assert sum(stored.values()) == PROCESSES * CYCLES
    assert seed.lease_counts("acme", time.time()) == {}  # every lease released
    assert all(c.status == "ok" for c in seed.list("acme"))
    seed.close()


@pytest.mark.timeout(60)
def test_eight_processes_share_one_sqlite_store(tmp_path):
    _run(f"sqlite:///{tmp_path}/state.db")


@pytest.mark.timeout(60)
def test_eight_processes_share_one_redis(redis_url):
    _run(redis_url, prefix=f"conc{uuid.uuid4().hex[:6]}:")
