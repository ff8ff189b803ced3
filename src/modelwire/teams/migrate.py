"""The PostgreSQL schema of teams as plain SQL files shipped in the package
(``teams/migrations/NNNN_name.sql``), applied in order by ``modelwire db upgrade``.

Each file runs in its own transaction together with its row in ``modelwire_migrations``
(version, name, checksum, applied_at), so a failed file leaves nothing behind and a
second run applies nothing twice. A transaction-level advisory lock makes instances that
upgrade at once take turns. The files are ordinary SQL: a DBA can read them, or apply
them with ``psql`` and insert the rows by hand.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["Migration", "MigrationState", "migrations", "pending", "status", "upgrade"]

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK = 0x6D77_7465  # "mwte": the advisory lock id of these migrations

_TABLE = """
CREATE TABLE IF NOT EXISTS modelwire_migrations (
    version     text PRIMARY KEY,
    name        text NOT NULL,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: str  # "0001"
    name: str  # "teams"
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class MigrationState:
    migration: Migration
    applied_at: str | None  # ISO time, None: not applied
    checksum: str | None = None  # what was applied (differs: the file changed since)


def migrations() -> list[Migration]:
    """The shipped files, in order."""
    found = []
    for entry in (resources.files("modelwire.teams") / "migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(match.group(1), match.group(2), entry.read_text("utf-8")))
    return sorted(found, key=lambda m: m.version)


def _applied(conn: Any) -> dict[str, tuple[str, str]]:
    exists = conn.execute("SELECT to_regclass('modelwire_migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return {}
    rows = conn.execute("SELECT version, checksum, applied_at FROM modelwire_migrations").fetchall()
    return {v: (c, at.isoformat(timespec="seconds")) for v, c, at in rows}


def status(conn: Any) -> list[MigrationState]:
    """Every shipped migration and whether (and when) it was applied."""
    done = _applied(conn)
    return [MigrationState(m, done[m.version][1] if m.version in done else None,
                           done[m.version][0] if m.version in done else None)
            for m in migrations()]


def pending(conn: Any) -> list[Migration]:
    return [s.migration for s in status(conn) if s.applied_at is None]


def upgrade(conn: Any) -> list[Migration]:
    """Apply what is not applied yet, in order; the ones applied now. ``conn`` is a
    psycopg connection in autocommit mode (each file gets its own transaction)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute(_TABLE)
    applied = []
    for migration in migrations():
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            done = conn.execute("SELECT 1 FROM modelwire_migrations WHERE version = %s",
                                (migration.version,)).fetchone()
            if done:
                continue
            conn.execute(migration.sql)
            conn.execute("INSERT INTO modelwire_migrations (version, name, checksum) "
                         "VALUES (%s, %s, %s)",
                         (migration.version, migration.name, migration.checksum))
        applied.append(migration)
    return applied
