"""The PostgreSQL ``KeyStore``: keys, teams and the spend record shared by every gateway
instance (psycopg 3).

The schema comes from the shipped migrations (:mod:`.migrate`), applied by
``modelwire db upgrade``; opening a database whose schema is behind is a ConfigError
that says so, rather than DDL run by whichever instance starts first. One connection
per thread (the gateway reads keys from a thread pool, the spend writer has its own
thread) and a fresh one after ``fork`` or a dropped connection. Spend rows go in with
``COPY``: a batch is one round trip. No secret is stored: keys are kept by SHA-256.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from ..errors import ConfigError
from .migrate import pending
from .model import Scope, SpendBy, SpendPoint, SpendRow, SpendTotal, Team, VirtualKey
from .records import key_from_record, key_to_record, team_from_record, team_to_record

__all__ = ["PostgresKeyStore", "connect", "safe_url"]

T = TypeVar("T")
CONNECT_TIMEOUT = 5  # seconds

_GROUP = {"key": "key_id", "team": "team_id", "model": "model_asked"}
_SPEND_COLUMNS = ("time, request_id, key_id, team_id, model_asked, model_served, provider, "
                  "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
                  "reasoning_tokens, cost_usd, status, latency_ms")


def safe_url(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    scheme, _, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at:
        return url
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{host}" if user else f"{scheme}://{host}"


def connect(url: str) -> Any:
    """An autocommit psycopg connection to ``url``; ConfigError (no password in it) when
    the server cannot be reached or refuses."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError("PostgreSQL needs psycopg: pip install 'modelwire[postgres]' "
                          f"({exc})") from None
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"teams store {safe_url(url)}: cannot connect: {detail}") from None


def _time(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


class PostgresKeyStore:
    def __init__(self, url: str) -> None:
        self.url = url
        self._local = threading.local()
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._open: list[Any] = []  # every thread's connection, for close()
        behind = pending(self._db())
        if behind:
            names = ", ".join(f"{m.version}_{m.name}" for m in behind)
            self.close()
            raise ConfigError(f"teams store {safe_url(url)}: the schema is not up to date "
                              f"(not applied: {names}); run `modelwire db upgrade --config "
                              f"<your modelwire.yaml>` once")

    def _db(self) -> Any:
        conn = getattr(self._local, "db", None)
        if conn is None or conn.closed or self._pid != os.getpid():
            self._pid = os.getpid()
            conn = self._local.db = connect(self.url)
            with self._lock:
                self._open = [c for c in self._open if not c.closed] + [conn]
        return conn

    def _run(self, op: Callable[[Any], T]) -> T:
        """``op(connection)``, once more on a fresh connection when the old one broke
        (the server restarted, an idle connection was cut)."""
        import psycopg

        try:
            return op(self._db())
        except psycopg.OperationalError:
            self._local.db = None
            return op(self._db())

    # ------------------------------------------------------------------ keys
    def create_key(self, key: VirtualKey) -> None:
        import psycopg

        try:
            self._run(lambda db: db.execute(
                "INSERT INTO modelwire_keys (id, key_hash, name, team_id, record) "
                "VALUES (%s, %s, %s, %s, %s)", _key_row(key)))
        except psycopg.errors.UniqueViolation:
            raise ValueError(f"a key named {key.name!r} exists already") from None

    def update_key(self, key: VirtualKey) -> None:
        import psycopg

        try:
            cur = self._run(lambda db: db.execute(
                "UPDATE modelwire_keys SET key_hash = %s, name = %s, team_id = %s, record = %s "
                "WHERE id = %s", (*_key_row(key)[1:], key.id)))
        except psycopg.errors.UniqueViolation:
            raise ValueError(f"a key named {key.name!r} exists already") from None
        if cur.rowcount == 0:
            raise KeyError(key.id)

    def _key(self, where: str, value: str) -> VirtualKey | None:
        row = self._run(lambda db: db.execute(
            f"SELECT record FROM modelwire_keys WHERE {where} = %s", (value,)).fetchone())
        return key_from_record(row[0]) if row else None

    def get_key(self, key_id: str) -> VirtualKey | None:
        return self._key("id", key_id)

    def key_by_hash(self, key_hash: str) -> VirtualKey | None:
        return self._key("key_hash", key_hash)

    def key_by_name(self, name: str) -> VirtualKey | None:
        return self._key("name", name)

    def list_keys(self) -> list[VirtualKey]:
        rows = self._run(lambda db: db.execute(
            "SELECT record FROM modelwire_keys ORDER BY name").fetchall())
        return [key_from_record(r[0]) for r in rows]

    # ------------------------------------------------------------------ teams
    def create_team(self, team: Team) -> None:
        import psycopg
        from psycopg.types.json import Jsonb

        try:
            self._run(lambda db: db.execute(
                "INSERT INTO modelwire_teams (id, name, record) VALUES (%s, %s, %s)",
                (team.id, team.name, Jsonb(team_to_record(team)))))
        except psycopg.errors.UniqueViolation:
            raise ValueError(f"a team named {team.name!r} exists already") from None

    def update_team(self, team: Team) -> None:
        import psycopg
        from psycopg.types.json import Jsonb

        try:
            cur = self._run(lambda db: db.execute(
                "UPDATE modelwire_teams SET name = %s, record = %s WHERE id = %s",
                (team.name, Jsonb(team_to_record(team)), team.id)))
        except psycopg.errors.UniqueViolation:
            raise ValueError(f"a team named {team.name!r} exists already") from None
        if cur.rowcount == 0:
            raise KeyError(team.id)

    def _team(self, where: str, value: str) -> Team | None:
        row = self._run(lambda db: db.execute(
            f"SELECT record FROM modelwire_teams WHERE {where} = %s", (value,)).fetchone())
        return team_from_record(row[0]) if row else None

    def get_team(self, team_id: str) -> Team | None:
        return self._team("id", team_id)

    def team_by_name(self, name: str) -> Team | None:
        return self._team("name", name)

    def list_teams(self) -> list[Team]:
        rows = self._run(lambda db: db.execute(
            "SELECT record FROM modelwire_teams ORDER BY name").fetchall())
        return [team_from_record(r[0]) for r in rows]

    # ------------------------------------------------------------------ spend
    def add_spend(self, rows: Sequence[SpendRow]) -> None:
        """The batch in one transaction, by ``COPY`` (one round trip for the rows)."""
        if not rows:
            return

        def op(db: Any) -> None:
            with db.transaction(), db.cursor() as cur, \
                    cur.copy(f"COPY modelwire_spend ({_SPEND_COLUMNS}) FROM STDIN") as copy:
                for r in rows:
                    copy.write_row((
                        _time(r.time), r.request_id, r.key_id, r.team_id, r.model_asked,
                        r.model_served, r.provider, r.input_tokens, r.output_tokens,
                        r.cache_read_tokens, r.cache_write_tokens, r.reasoning_tokens,
                        r.cost_usd, r.status, r.latency_ms))

        self._run(op)

    def spend(self, by: SpendBy, since: float) -> list[SpendTotal]:
        column = _GROUP[by]
        rows = self._run(lambda db: db.execute(
            f"SELECT COALESCE({column}, ''), COUNT(*), SUM(input_tokens), SUM(output_tokens), "
            f"COALESCE(SUM(cost_usd), 0), COUNT(*) FILTER (WHERE cost_usd IS NULL) "
            f"FROM modelwire_spend WHERE time >= %s GROUP BY 1 ORDER BY 5 DESC, 1",
            (_time(since),)).fetchall())
        names = self._names(by)
        return [SpendTotal(group, int(n), int(i or 0), int(o or 0), float(c), int(u or 0),
                           names.get(group, ""))
                for group, n, i, o, c, u in rows]

    def _names(self, by: SpendBy) -> dict[str, str]:
        if by == "model":
            return {}
        table = "modelwire_keys" if by == "key" else "modelwire_teams"
        return dict(self._run(lambda db: db.execute(f"SELECT id, name FROM {table}").fetchall()))

    def spent(self, scope: Scope, since: float) -> float:
        column = "key_id" if scope.kind == "key" else "team_id"
        row = self._run(lambda db: db.execute(
            f"SELECT COALESCE(SUM(cost_usd), 0) FROM modelwire_spend "
            f"WHERE {column} = %s AND time >= %s", (scope.id, _time(since))).fetchone())
        return float(row[0])

    def spend_series(self, since: float, step: float) -> list[SpendPoint]:
        rows = self._run(lambda db: db.execute(
            "SELECT floor((extract(epoch FROM time) - %s) / %s)::bigint, COUNT(*), "
            "COALESCE(SUM(cost_usd), 0) FROM modelwire_spend WHERE time >= %s GROUP BY 1 ORDER BY 1",
            (since, step, _time(since))).fetchall())
        return [SpendPoint(since + int(i) * step, int(n), float(c)) for i, n, c in rows]

    def close(self) -> None:
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            conn.close()
        self._local.db = None


def _key_row(key: VirtualKey) -> tuple[Any, ...]:
    from psycopg.types.json import Jsonb

    return (key.id, key.key_hash, key.name, key.team_id, Jsonb(key_to_record(key)))
