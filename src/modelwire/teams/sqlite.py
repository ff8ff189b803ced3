"""The SQLite ``KeyStore``: keys, teams and the spend record in the state file.

The same file (and the same habits) as the SQLite credential store: WAL, so the
gateway's readers never wait for the spend writer; ``synchronous=NORMAL``; a busy
timeout; ``BEGIN IMMEDIATE`` for changes; files readable by the owner only; one
connection per thread and a fresh one after ``fork``. No secret is stored: keys are
kept by their SHA-256.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..errors import ConfigError
from .model import Scope, SpendBy, SpendPoint, SpendRow, SpendTotal, Team, VirtualKey
from .records import key_from_record, key_to_record, team_from_record, team_to_record

__all__ = ["SQLiteKeyStore", "create_tables", "insert_spend", "spent_since"]

_BUSY_MS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS team_keys (
    id TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE,
    team_id TEXT, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS teams (
    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spend (
    time REAL NOT NULL, request_id TEXT NOT NULL, key_id TEXT, team_id TEXT,
    model_asked TEXT NOT NULL, model_served TEXT NOT NULL, provider TEXT NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL, cost_usd REAL, status INTEGER NOT NULL,
    latency_ms REAL NOT NULL);
CREATE INDEX IF NOT EXISTS spend_by_key ON spend (key_id, time);
CREATE INDEX IF NOT EXISTS spend_by_team ON spend (team_id, time);
CREATE INDEX IF NOT EXISTS spend_by_time ON spend (time);
"""

_GROUP = {"key": "key_id", "team": "team_id", "model": "model_asked"}


class SQLiteKeyStore:
    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.url = "sqlite:///" + self.path
        self._local = threading.local()
        self._pid = os.getpid()
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        self._db()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.chmod(self.path + suffix, 0o600)
            except FileNotFoundError:
                pass

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None or self._pid != os.getpid():
            self._pid = os.getpid()
            old = os.umask(0o077)
            try:
                db = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
                db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                create_tables(db)
            except sqlite3.DatabaseError as exc:
                raise ConfigError(f"teams store {self.path}: cannot open: {exc}") from None
            finally:
                os.umask(old)
            self._local.db = db
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        old = os.umask(0o077)
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

    # ------------------------------------------------------------------ keys
    def create_key(self, key: VirtualKey) -> None:
        try:
            with self._write() as db:
                db.execute("INSERT INTO team_keys (id, key_hash, name, team_id, record) "
                           "VALUES (?, ?, ?, ?, ?)", _key_row(key))
        except sqlite3.IntegrityError:
            raise ValueError(f"a key named {key.name!r} exists already") from None

    def update_key(self, key: VirtualKey) -> None:
        try:
            with self._write() as db:
                cur = db.execute("UPDATE team_keys SET key_hash = ?, name = ?, team_id = ?, "
                                 "record = ? WHERE id = ?", (*_key_row(key)[1:], key.id))
        except sqlite3.IntegrityError:
            raise ValueError(f"a key named {key.name!r} exists already") from None
        if cur.rowcount == 0:
            raise KeyError(key.id)

    def _key(self, where: str, value: str) -> VirtualKey | None:
        row = self._db().execute(f"SELECT record FROM team_keys WHERE {where} = ?",
                                 (value,)).fetchone()
        return key_from_record(json.loads(row[0])) if row else None

    def get_key(self, key_id: str) -> VirtualKey | None:
        return self._key("id", key_id)

    def key_by_hash(self, key_hash: str) -> VirtualKey | None:
        return self._key("key_hash", key_hash)

    def key_by_name(self, name: str) -> VirtualKey | None:
        return self._key("name", name)

    def list_keys(self) -> list[VirtualKey]:
        rows = self._db().execute("SELECT record FROM team_keys ORDER BY name").fetchall()
        return [key_from_record(json.loads(r[0])) for r in rows]

    # ------------------------------------------------------------------ teams
    def create_team(self, team: Team) -> None:
        try:
            with self._write() as db:
                db.execute("INSERT INTO teams (id, name, record) VALUES (?, ?, ?)",
                           (team.id, team.name, json.dumps(team_to_record(team))))
        except sqlite3.IntegrityError:
            raise ValueError(f"a team named {team.name!r} exists already") from None

    def update_team(self, team: Team) -> None:
        try:
            with self._write() as db:
                cur = db.execute("UPDATE teams SET name = ?, record = ? WHERE id = ?",
                                 (team.name, json.dumps(team_to_record(team)), team.id))
        except sqlite3.IntegrityError:
            raise ValueError(f"a team named {team.name!r} exists already") from None
        if cur.rowcount == 0:
            raise KeyError(team.id)

    def _team(self, where: str, value: str) -> Team | None:
        row = self._db().execute(f"SELECT record FROM teams WHERE {where} = ?",
                                 (value,)).fetchone()
        return team_from_record(json.loads(row[0])) if row else None

    def get_team(self, team_id: str) -> Team | None:
        return self._team("id", team_id)

    def team_by_name(self, name: str) -> Team | None:
        return self._team("name", name)

    def list_teams(self) -> list[Team]:
        rows = self._db().execute("SELECT record FROM teams ORDER BY name").fetchall()
        return [team_from_record(json.loads(r[0])) for r in rows]

    # ------------------------------------------------------------------ spend
    def add_spend(self, rows: Sequence[SpendRow]) -> None:
        if not rows:
            return
        with self._write() as db:
            insert_spend(db, rows)

    def spend(self, by: SpendBy, since: float) -> list[SpendTotal]:
        column = _GROUP[by]
        rows = self._db().execute(
            f"SELECT COALESCE({column}, ''), COUNT(*), SUM(input_tokens), SUM(output_tokens), "
            f"COALESCE(SUM(cost_usd), 0), SUM(cost_usd IS NULL) FROM spend WHERE time >= ? "
            f"GROUP BY 1 ORDER BY 5 DESC, 1", (since,)).fetchall()
        names = self._names(by)
        return [SpendTotal(group, int(n), int(i or 0), int(o or 0), float(c), int(u or 0),
                           names.get(group, ""))
                for group, n, i, o, c, u in rows]

    def _names(self, by: SpendBy) -> dict[str, str]:
        if by == "model":
            return {}
        table = "team_keys" if by == "key" else "teams"
        return dict(self._db().execute(f"SELECT id, name FROM {table}").fetchall())

    def spent(self, scope: Scope, since: float) -> float:
        return spent_since(self._db(), scope, since)

    def spend_series(self, since: float, step: float) -> list[SpendPoint]:
        rows = self._db().execute(
            "SELECT CAST((time - ?) / ? AS INTEGER), COUNT(*), COALESCE(SUM(cost_usd), 0) FROM spend "
            "WHERE time >= ? GROUP BY 1 ORDER BY 1", (since, step, since)).fetchall()
        return [SpendPoint(since + int(i) * step, int(n), float(c)) for i, n, c in rows]

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


def create_tables(db: sqlite3.Connection) -> None:
    """The store's tables in ``db`` (the SQLite limiter shares the file)."""
    db.executescript(_SCHEMA)


def insert_spend(db: sqlite3.Connection, rows: Sequence[SpendRow]) -> None:
    """Insert ``rows`` (in the caller's transaction)."""
    db.executemany(
        "INSERT INTO spend VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(r.time, r.request_id, r.key_id, r.team_id, r.model_asked, r.model_served,
          r.provider, r.input_tokens, r.output_tokens, r.cache_read_tokens,
          r.cache_write_tokens, r.reasoning_tokens, r.cost_usd, r.status, r.latency_ms)
         for r in rows])


def spent_since(db: sqlite3.Connection, scope: Scope, since: float) -> float:
    """USD of ``scope``'s priced spend rows from ``since`` on."""
    column = "key_id" if scope.kind == "key" else "team_id"
    row = db.execute(
        f"SELECT COALESCE(SUM(cost_usd), 0) FROM spend WHERE {column} = ? AND time >= ?",
        (scope.id, since)).fetchone()
    return float(row[0])


def _key_row(key: VirtualKey) -> tuple[str, str, str, str | None, str]:
    return (key.id, key.key_hash, key.name, key.team_id, json.dumps(key_to_record(key)))
