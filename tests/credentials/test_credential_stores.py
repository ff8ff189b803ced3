"""Store specifics: SQLite files and pragmas, URLs, Redis fail-open."""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import stat
import time

import pytest

from modelwire.credentials import CredentialPool, PooledCredential
from modelwire.credentials.stores import default_store_url, open_store, sqlite_path
from modelwire.credentials.stores.sqlite import SQLiteStore
from modelwire.errors import ConfigError


def test_sqlite_files_are_owner_only(tmp_path):
    path = tmp_path / "deep" / "state.db"
    store = SQLiteStore(str(path))
    store.put(PooledCredential(provider="acme", id="x", secret="sk-test-0123456789abcdef"))
    for suffix in ("", "-wal", "-shm"):
        f = path.parent / (path.name + suffix)
        assert f.exists(), f
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    store.close()


def test_sqlite_uses_wal_and_normal_sync(sqlite_store):
    db = sqlite_store._db()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def test_sqlite_waits_for_another_writer_instead_of_failing(tmp_path):
    store = SQLiteStore(str(tmp_path / "state.db"))
    other = sqlite3.connect(str(tmp_path / "state.db"), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    import threading

    done = threading.Event()

    def write():
        store.put(PooledCredential(provider="acme", id="x", secret="sk-test-0123456789abcdef"))
        done.set()

    t = threading.Thread(target=write)
    t.start()
    assert not done.wait(0.2)  # blocked behind the other writer, not failed
    other.execute("COMMIT")
    assert done.wait(5)
    t.join()
    assert store.get("acme", "x") is not None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:////abs/state.db", "/abs/state.db"),
        ("sqlite:///rel/state.db", "rel/state.db"),
        ("sqlite:///~/x/state.db", os.path.expanduser("~/x/state.db")),
        ("sqlite:///$MW_TEST_DIR/state.db", "/from/env/state.db"),
    ],
    ids=["absolute", "relative", "home", "variable"],
)
def test_sqlite_urls_expand_home_and_variables(url, expected, monkeypatch):
    monkeypatch.setenv("MW_TEST_DIR", "/from/env")
    assert sqlite_path(url) == expected


def test_default_store_lives_under_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_store_url() == f"sqlite:///{tmp_path}/modelwire/state.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_store_url().endswith("/.local/share/modelwire/state.db")


def test_open_store_rejects_unknown_urls():
    with pytest.raises(ConfigError, match="credential_pool.store"):
        open_store("mongodb://x", shared=False)


def test_open_store_shares_one_object_per_url(tmp_path):
    url = f"sqlite:///{tmp_path}/s.db"
    assert open_store(url) is open_store(url)
    assert open_store("memory://", shared=False) is not open_store("memory://", shared=False)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed on exit: nothing listens there


def test_unreachable_redis_fails_open_fast(caplog, clock):
    from modelwire.credentials.stores.redis import RedisStore

    # a loopback socket that accepts connections but never answers: every command hangs,
    # so the 50 ms timeout must cut it
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    store = RedisStore(f"redis://127.0.0.1:{silent.getsockname()[1]}/0", prefix="x:")
    caplog.set_level(logging.WARNING, logger="modelwire.credentials")
    started = time.monotonic()
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",),
                          environ={"ACME_API_KEY": "sk-env-redisdown0000000001"})
    with pool.lease() as lease:
        pool.report(lease, "success")
    elapsed = time.monotonic() - started
    assert pool.health == "degraded"
    # one timed-out attempt (~50 ms), then local state; without the timeout this hangs
    assert elapsed < 1.0
    warnings = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(warnings) == 1
    silent.close()


def test_redis_refused_connection_fails_open(clock):
    from modelwire.credentials.stores.redis import RedisStore

    store = RedisStore(f"redis://:hunter2password@127.0.0.1:{_dead_port()}/0", prefix="x:")
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=(), environ={})
    pool.add("sk-test-0123456789abcdef", label="a")
    with pool.lease() as lease:
        assert lease.credential.label == "a"
    assert store.health == "degraded"
    assert "hunter2" not in store._safe_url()


def test_redis_degraded_mode_keeps_the_last_known_state(redis_url, clock):
    from modelwire.credentials.stores.redis import RedisStore

    store = RedisStore(redis_url, prefix="deg:", timeout=2.0)
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=(), environ={})
    pool.add("sk-test-0123456789abcdef", label="a")
    assert [c.label for c in pool.credentials()] == ["a"]
    import redis

    store._redis = redis.Redis(host="127.0.0.1", port=_dead_port(), socket_timeout=0.05,
                               socket_connect_timeout=0.05, decode_responses=True)
    store._scripts = {k: store._redis.register_script(v.script) for k, v in store._scripts.items()}
    with pool.lease() as lease:  # served from the in-process copy
        assert lease.credential.label == "a"
    assert pool.health == "degraded"


def test_unreachable_redis_lock_falls_back_to_a_local_lock():
    from modelwire.credentials.stores.redis import RedisStore

    store = RedisStore(f"redis://127.0.0.1:{_dead_port()}/0", prefix="x:")
    with store.lock("refresh", timeout=1):
        assert store.health == "degraded"
    with store.lock("refresh", timeout=1):  # released: can be taken again
        pass
