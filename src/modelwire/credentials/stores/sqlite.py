"""SQLite store: the default, shared safely by every process on one machine.

- WAL journal and ``synchronous=NORMAL``: readers never block the writer, and a
  commit costs no fsync of the database file (durable up to the last checkpoint).
- ``BEGIN IMMEDIATE`` for every change: the write lock is taken before the read,
  so read-modify-write cycles from several processes never lose updates.
- a busy timeout: a process waits for another's short transaction instead of
  failing with "database is locked".
- umask 077 while the files are created, then chmod 0600: the database (which
  holds manually added secrets in plain text) and its ``-wal``/``-shm`` files are
  readable by the owner only.
- one connection per thread (``sqlite3`` connections must not cross threads), and
  a fresh one after ``fork``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..cooldown import Mark
from ..credential import PooledCredential
from ._ops import Acquired, Health, Order, apply_mark, choose, new_lease_id

__all__ = ["SQLiteStore"]

BUSY_TIMEOUT_MS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS credentials (
    provider TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (provider, id));
CREATE TABLE IF NOT EXISTS leases (
    lease_id TEXT PRIMARY KEY, provider TEXT NOT NULL, credential_id TEXT NOT NULL,
    expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS leases_by_provider ON leases (provider, expires_at);
CREATE TABLE IF NOT EXISTS locks (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
"""


class SQLiteStore:
    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.url = "sqlite:///" + self.path
        self.health: Health = "ok"
        self._local = threading.local()
        self._pid = os.getpid()
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        self._db()  # creates the database and its WAL files under umask 077
        self._restrict_files()

    # ------------------------------------------------------------------ connection
    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None or self._pid != os.getpid():
            self._pid = os.getpid()
            old = os.umask(0o077)
            try:
                db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                     isolation_level=None, check_same_thread=True)
                db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                db.executescript(_SCHEMA)
            finally:
                os.umask(old)
            self._local.db = db
        return db

    def _restrict_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.chmod(self.path + suffix, 0o600)
            except FileNotFoundError:
                pass

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        old = os.umask(0o077)  # the -wal/-shm files may be (re)created by this transaction
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            os.umask(old)

    # ------------------------------------------------------------------ records
    def salt(self) -> bytes:
        row = self._db().execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()
        if row:
            return bytes.fromhex(row[0])
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('salt', ?)",
                       (os.urandom(32).hex(),))
            return bytes.fromhex(db.execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()[0])

    def list(self, provider: str | None = None) -> list[PooledCredential]:
        if provider is None:
            rows = self._db().execute("SELECT record FROM credentials ORDER BY provider, id")
        else:
            rows = self._db().execute(
                "SELECT record FROM credentials WHERE provider = ? ORDER BY id", (provider,))
        return [PooledCredential.from_record(json.loads(r[0])) for r in rows.fetchall()]

    def get(self, provider: str, cred_id: str) -> PooledCredential | None:
        row = self._db().execute(
            "SELECT record FROM credentials WHERE provider = ? AND id = ?", (provider, cred_id)
        ).fetchone()
        return PooledCredential.from_record(json.loads(row[0])) if row else None

    def put(self, cred: PooledCredential) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO credentials (provider, id, record) VALUES (?, ?, ?)",
                       (cred.provider, cred.id, json.dumps(cred.to_record(with_secret=True))))

    def insert_if_absent(self, cred: PooledCredential) -> PooledCredential:
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO credentials (provider, id, record) VALUES (?, ?, ?)",
                       (cred.provider, cred.id, json.dumps(cred.to_record(with_secret=True))))
            row = db.execute("SELECT record FROM credentials WHERE provider = ? AND id = ?",
                             (cred.provider, cred.id)).fetchone()
        return PooledCredential.from_record(json.loads(row[0]))

    def delete(self, provider: str, cred_id: str) -> bool:
        with self._write() as db:
            cursor = db.execute("DELETE FROM credentials WHERE provider = ? AND id = ?",
                                (provider, cred_id))
            db.execute("DELETE FROM leases WHERE provider = ? AND credential_id = ?",
                       (provider, cred_id))
            return cursor.rowcount > 0

    def _update(self, provider: str, cred_id: str, change: Any) -> PooledCredential | None:
        with self._write() as db:
            row = db.execute("SELECT record FROM credentials WHERE provider = ? AND id = ?",
                             (provider, cred_id)).fetchone()
            if row is None:
                return None
            record = change(json.loads(row[0]))
            db.execute("UPDATE credentials SET record = ? WHERE provider = ? AND id = ?",
                       (json.dumps(record), provider, cred_id))
        return PooledCredential.from_record(record)

    def patch(self, provider: str, cred_id: str, fields: Mapping[str, Any]) -> PooledCredential | None:
        return self._update(provider, cred_id, lambda record: {**record, **fields})

    def mark(self, provider: str, cred_id: str, mark: Mark, now: float) -> PooledCredential | None:
        return self._update(provider, cred_id, lambda record: apply_mark(record, mark, now))

    # ------------------------------------------------------------------ leases
    def acquire(
        self, provider: str, candidates: Sequence[str], *, cap: int, ttl: float, now: float,
        order: Order,
    ) -> Acquired | None:
        with self._write() as db:
            records = {
                cid: json.loads(rec) for cid, rec in db.execute(
                    "SELECT id, record FROM credentials WHERE provider = ?", (provider,))
                if cid in candidates
            }
            counts = self._counts(db, provider, now)
            key = f"rotation:{provider}"
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            rotation = int(row[0]) if row else 0
            chosen = choose(candidates, records, counts, cap=cap, now=now, order=order,
                            rotation=rotation)
            if chosen is None:
                return None
            if order == "rotate":
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                           (key, str(rotation + 1)))
            record = records[chosen]
            record["request_count"] = int(record.get("request_count") or 0) + 1
            db.execute("UPDATE credentials SET record = ? WHERE provider = ? AND id = ?",
                       (json.dumps(record), provider, chosen))
            lease = Acquired(chosen, new_lease_id(), now + ttl)
            db.execute("INSERT INTO leases (lease_id, provider, credential_id, expires_at) "
                       "VALUES (?, ?, ?, ?)", (lease.lease_id, provider, chosen, lease.expires_at))
        return lease

    def renew(self, provider: str, lease_id: str, *, ttl: float, now: float) -> bool:
        with self._write() as db:
            cursor = db.execute(
                "UPDATE leases SET expires_at = ? WHERE lease_id = ? AND provider = ? "
                "AND expires_at > ?", (now + ttl, lease_id, provider, now))
            return cursor.rowcount > 0

    def release(self, provider: str, lease_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM leases WHERE lease_id = ? AND provider = ?", (lease_id, provider))

    def lease_counts(self, provider: str, now: float) -> dict[str, int]:
        rows = self._db().execute(
            "SELECT credential_id, COUNT(*) FROM leases WHERE provider = ? AND expires_at > ? "
            "GROUP BY credential_id", (provider, now))
        return {cid: n for cid, n in rows.fetchall()}

    @staticmethod
    def _counts(db: sqlite3.Connection, provider: str, now: float) -> dict[str, int]:
        db.execute("DELETE FROM leases WHERE provider = ? AND expires_at <= ?", (provider, now))
        rows = db.execute("SELECT credential_id, COUNT(*) FROM leases WHERE provider = ? "
                          "GROUP BY credential_id", (provider,))
        return {cid: n for cid, n in rows.fetchall()}

    # ------------------------------------------------------------------ lock
    @contextmanager
    def lock(self, name: str, *, ttl: float = 30.0, timeout: float = 30.0) -> Iterator[None]:
        """A lock row with an expiry (wall clock): held across an HTTP refresh without
        keeping a write transaction open (which would stall every lease meanwhile);
        a crashed holder's row expires after ``ttl``."""
        owner = new_lease_id()
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            now = time.time()
            with self._write() as db:
                db.execute("DELETE FROM locks WHERE name = ? AND expires_at <= ?", (name, now))
                got = db.execute("INSERT OR IGNORE INTO locks (name, owner, expires_at) "
                                 "VALUES (?, ?, ?)", (name, owner, now + ttl)).rowcount > 0
            if got:
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"lock {name!r} not acquired in {timeout} s")
            time.sleep(delay)  # polling a lock held by another process: nothing to wait on
            delay = min(delay * 2, 0.1)
        try:
            yield None
        finally:
            with self._write() as db:
                db.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
