"""A process holding a credential lease is killed with SIGKILL: it never releases, so the
lease must expire by its TTL (SQLite and Redis): counted while it could still be alive,
gone once the TTL has passed, never held for good by a dead process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from redisproc import RedisProcess

from modelwire.credentials.credential import PooledCredential
from modelwire.credentials.stores import open_store

from .conftest import report

TTL = 2.0
# the holder: leases the only credential (cap 1), says so, then waits to be killed
HOLDER = textwrap.dedent("""
    import sys, time
    from modelwire.credentials.stores import open_store
    store = open_store(sys.argv[1], prefix=sys.argv[2], shared=False)
    got = store.acquire("acme", ["c0"], cap=1, ttl=float(sys.argv[3]), now=time.time(),
                        order="rotate")
    print("held" if got else "none", flush=True)
    time.sleep(600)
""")


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/state.db"
        return
    proc = RedisProcess(str(tmp_path)).start()
    yield proc.url
    proc.stop()


def test_a_killed_lease_holder_frees_its_credential_after_the_ttl(store_url) -> None:
    prefix = f"chaos{os.getpid()}:"
    store = open_store(store_url, prefix=prefix, shared=False)
    store.put(PooledCredential(id="c0", provider="acme", label="k0", source="manual",
                               secret="sk-chaos-0000-0123456789abcdef", status_at=0.0))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, store_url, prefix, str(TTL)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        killed_at = time.time()
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    finally:
        if holder.poll() is None:
            holder.kill()
    # counted right after the kill: a dead holder is not told apart from a slow one
    assert store.lease_counts("acme", killed_at).get("c0") == 1
    # once the TTL has passed (on the store's clock, passed in: no sleep) it is gone
    later = killed_at + TTL + 0.5
    assert store.lease_counts("acme", later).get("c0", 0) == 0
    got = store.acquire("acme", ["c0"], cap=1, ttl=TTL, now=later, order="rotate")
    assert got is not None and store.lease_counts("acme", later) == {"c0": 1}
    report("lease_holder_kill9", store=store_url.split(":")[0], ttl_s=TTL,
           held_after_kill=True, free_after_ttl=True)
