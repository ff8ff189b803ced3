"""The SQLite ``Limiter``: rate windows and budget reservations in the state file, shared
by every gateway process on the machine (``serve --workers N``, or several ``serve``s on
one file).

Tables (next to the store's, in the same file; ids of keys and teams never collide):

- ``limit_hits``      one row per reservation and scope with a rate limit: when it was
                      admitted and its tokens (the worst case, then the real count)
- ``limit_counts``    per scope: its window's requests and tokens (``start`` -1: every
                      hit row of the scope), and per budget period (``start``) the USD
                      settled (seeded once from the spend record, then kept in step with
                      it in the same transactions) and reserved
- ``limit_holds``     one row per reservation in flight: who holds it (``owner``: a
                      process), until when, its worst-case USD and the budget periods
                      it counts in, and what its spend row needs if it is lost

A sliding minute is the scope's hit rows of the last 60 s: its count minus the rows that
have left the window and are not yet deleted (the settles delete them, so that a
reserve writes as few pages as it can).

``reserve`` is one short ``BEGIN IMMEDIATE`` transaction on the event loop (its cost:
docs/performance). It never blocks the loop on another process's lock: its connection
has no busy timeout, and a busy file is retried after a short ``asyncio.sleep``.

``settle`` and ``release`` queue the request's spend row and return; the queue is
written on the event loop 5 ms later (so that the admissions and settles of a process
never wait for each other's lock), in one transaction: each settle with its spend row
(the hold goes, the budget's count and the window's tokens follow the real usage, the
row is inserted). A reserved request therefore always has either its hold or its spend row in
the file: none is lost when a process dies. Until a settle lands its hold still counts,
so the budget errs on the safe side.

A process that died (SIGKILL, OOM) leaves holds whose owner is gone. Each limiter, when
it opens (uvicorn starts a worker in a dead one's place), once a minute while it settles,
and before it refuses a request for a budget, turns such holds into spend rows with
status 0 ("lost": the answer's usage is unknown) charged their reserved worst case, as a
cut stream is. A hold of a live owner stops counting
after ``hold_ttl`` seconds (a request that takes longer than any should); its settle
still counts its cost.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from .model import SpendRow, Team, VirtualKey
from .owners import is_alive, process_owner
from .sqlite import create_tables, insert_spend, spent_since
from .store import BudgetExhausted, Demand, RateLimited, Reservation

__all__ = ["HOLD_TTL", "LOST", "SQLiteLimiter", "holds"]

log = logging.getLogger("modelwire.teams")

WINDOW_S = 60.0
HOLD_TTL = 900.0  # seconds a live process's hold counts: longer than any one request
LOST = 0  # the spend row status of a request whose process died before its answer
_BUSY_RETRY_S = 0.0005
_BUSY_GIVE_UP_S = 10.0
_WRITER_BUSY_MS = 10_000
_GATHER_S = 0.005
_CHECKPOINT_EVERY = 250  # commits (of 3-4 pages: SQLite's own default is 1,000 pages)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS limit_hits (
    sid TEXT NOT NULL, at REAL NOT NULL, rid TEXT NOT NULL, tokens INTEGER NOT NULL,
    PRIMARY KEY (sid, at, rid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS limit_counts (
    sid TEXT NOT NULL, start REAL NOT NULL, requests INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0, settled REAL NOT NULL DEFAULT 0,
    reserved REAL NOT NULL DEFAULT 0, PRIMARY KEY (sid, start)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS limit_holds (
    rid TEXT PRIMARY KEY, owner TEXT NOT NULL, at REAL NOT NULL, expires REAL NOT NULL,
    usd REAL NOT NULL, key_id TEXT NOT NULL, key_start REAL, team_id TEXT, team_start REAL,
    request_id TEXT NOT NULL, model TEXT NOT NULL);
"""
_WINDOW = -1.0  # limit_counts.start of a scope's window row


def _owners(demand: Demand) -> list[VirtualKey | Team]:
    return [demand.key] if demand.team is None else [demand.key, demand.team]


def _start(owner: VirtualKey | Team, now: float) -> float | None:
    return None if owner.budget is None else owner.budget.window_start(now)


class _Refused(Exception):
    """Inside the transaction: a budget is short (``scope_index``), maybe by dead holds."""

    def __init__(self, index: int, used: float) -> None:
        self.index, self.used = index, used


_KEEP = (_Refused, RateLimited)


@dataclass(frozen=True, slots=True)
class _Settle:
    reservation: Reservation
    cost: float
    tokens: int
    row: SpendRow | None


class SQLiteLimiter:
    def __init__(self, path: str, *, hold_ttl: float = HOLD_TTL,
                 clock: Callable[[], float] = time.time, owner: str | None = None) -> None:
        self.path = path
        self.hold_ttl = hold_ttl
        self.owner = owner or process_owner(os.getpid())
        self._clock = clock
        self._pid = os.getpid()
        self._db: sqlite3.Connection | None = None
        self._queue: deque[_Settle] = deque()
        self._flush: asyncio.TimerHandle | None = None  # the queue's write, scheduled
        self._checkpoint: asyncio.Future[None] | None = None
        self._commits = 0  # since the last checkpoint
        self._maintained = 0.0
        self.lost = 0  # holds of dead processes this limiter turned into spend rows
        self._connection()
        db = _connect(path, busy_ms=_WRITER_BUSY_MS)  # at start-up waiting is fine
        try:
            with _transaction(db):
                self.lost += _recover(db, self._clock(), is_alive)
        finally:
            db.close()

    # ------------------------------------------------------------ connections
    def _connection(self) -> sqlite3.Connection:
        if self._db is None or self._pid != os.getpid():
            self._pid = os.getpid()
            self._db = _connect(self.path, busy_ms=0)
            self._db.execute("PRAGMA wal_autocheckpoint = 0")  # see _committed
        return self._db

    # ------------------------------------------------------------ admission
    async def reserve(self, demand: Demand) -> Reservation:
        rid = secrets.token_hex(8)
        deadline = time.monotonic() + _BUSY_GIVE_UP_S
        swept = False
        while True:
            now = self._clock()
            try:
                self._reserve(demand, rid, now)
                self._committed()
                return Reservation(rid, demand, now)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY \
                        or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(_BUSY_RETRY_S)  # another process writes: take turns
            except _Refused as refused:
                if not swept:  # before refusing: holds that no longer count, and ask again
                    swept = True
                    if self._sweep(now):
                        continue
                owner = _owners(demand)[refused.index]
                assert owner.budget is not None
                raise BudgetExhausted(owner.scope, owner.budget.usd, refused.used,
                                      owner.budget.resets_at(now)) from None

    def _reserve(self, demand: Demand, rid: str, now: float) -> None:
        db = self._connection()
        owners = _owners(demand)
        with _transaction(db):
            starts = [self._check(db, i, owner, demand, now) for i, owner in enumerate(owners)]
            for owner, start in zip(owners, starts, strict=True):
                if owner.rpm is not None or owner.tpm is not None:
                    db.execute("INSERT INTO limit_hits VALUES (?, ?, ?, ?)",
                               (owner.id, now, rid, demand.tokens))
                    db.execute("INSERT INTO limit_counts (sid, start, requests, tokens) VALUES "
                               "(?, ?, 1, ?) ON CONFLICT (sid, start) DO UPDATE SET requests = "
                               "requests + 1, tokens = tokens + excluded.tokens",
                               (owner.id, _WINDOW, demand.tokens))
                if start is not None:
                    db.execute("UPDATE limit_counts SET reserved = reserved + ? WHERE sid = ? "
                               "AND start = ?", (demand.cost_usd, owner.id, start))
            key_start = starts[0]
            team_start = starts[1] if len(starts) > 1 else None
            if key_start is not None or team_start is not None:
                db.execute("INSERT INTO limit_holds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (rid, self.owner, now, now + self.hold_ttl, demand.cost_usd,
                            demand.key.id, key_start,
                            None if demand.team is None else demand.team.id, team_start,
                            demand.request_id, demand.model))

    def _check(self, db: sqlite3.Connection, index: int, owner: VirtualKey | Team,
               demand: Demand, now: float) -> float | None:
        """Raise the owner's refusal, or return its budget period's start (None: none)."""
        sid = owner.id
        if owner.rpm is not None or owner.tpm is not None:
            row = db.execute("SELECT requests, tokens FROM limit_counts WHERE sid = ? AND "
                             "start = ?", (sid, _WINDOW)).fetchone()
            count, tokens = row if row is not None else (0, 0)
            if count:  # less what has left the window and is not deleted yet
                gone, gone_tokens = db.execute(
                    "SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM limit_hits WHERE sid = ? "
                    "AND at <= ?", (sid, now - WINDOW_S)).fetchone()
                count, tokens = count - gone, tokens - gone_tokens
            if owner.rpm is not None and count + 1 > owner.rpm:
                wait = _wait(db, sid, 1, count + 1 - owner.rpm, now)
                raise RateLimited(owner.scope, "rpm", owner.rpm, wait)
            if owner.tpm is not None and tokens + demand.tokens > owner.tpm:
                wait = _wait(db, sid, None, tokens + demand.tokens - owner.tpm, now)
                raise RateLimited(owner.scope, "tpm", owner.tpm, wait)
        if owner.budget is None:
            return None
        start = owner.budget.window_start(now)
        row = db.execute("SELECT settled, reserved FROM limit_counts WHERE sid = ? AND "
                         "start = ?", (sid, start)).fetchone()
        if row is None:  # the period's first request here: what the spend record says
            settled, reserved = spent_since(db, owner.scope, start), 0.0
            db.execute("INSERT INTO limit_counts (sid, start, settled) VALUES (?, ?, ?)",
                       (sid, start, settled))
        else:
            settled, reserved = row
        used = settled + max(reserved, 0.0)
        if used + demand.cost_usd > owner.budget.usd or used >= owner.budget.usd:
            raise _Refused(index, used)
        return float(start)

    def _sweep(self, now: float) -> bool:
        """Holds of dead processes → lost rows, expired holds → gone; whether there were
        any (a busy file: no, the refusal stands)."""
        db = self._connection()
        try:
            with _transaction(db):
                lost = _recover(db, now, is_alive, exclude=self.owner)
                expired = _expire(db, now)
        except sqlite3.OperationalError:
            return False
        self.lost += lost
        return bool(lost or expired)

    # ------------------------------------------------------------ settling
    async def settle(self, reservation: Reservation, cost_usd: float | None,
                     tokens: int) -> None:
        self._enqueue(_Settle(reservation, cost_usd or 0.0, tokens, None))

    async def release(self, reservation: Reservation) -> None:
        self._enqueue(_Settle(reservation, 0.0, 0, None))

    async def finish(self, reservation: Reservation, cost_usd: float | None, tokens: int,
                     row: SpendRow) -> None:
        """Settle (``cost_usd`` None and ``tokens`` 0: release) and write ``row`` in the
        same transaction, off the request path."""
        self._enqueue(_Settle(reservation, cost_usd or 0.0, tokens, row))

    def _enqueue(self, item: _Settle) -> None:
        self._queue.append(item)
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(_GATHER_S, self._write_soon)

    @property
    def settling(self) -> int:
        """Settles queued and not yet in the file."""
        return len(self._queue)

    def _write_soon(self) -> None:
        """On the event loop, like the admissions, so the two never wait for each other's
        lock in this process: the queue in one transaction, or later if the file is busy."""
        self._flush = None
        delay = self._write_all(self._connection())
        if delay is not None and self._queue:
            self._flush = asyncio.get_running_loop().call_later(delay, self._write_soon)

    def _write_all(self, db: sqlite3.Connection) -> float | None:
        """Write the queue; None when done, else the seconds to wait before trying again."""
        while self._queue:
            batch = [self._queue.popleft() for _ in range(min(500, len(self._queue)))]
            try:
                self._write(db, batch)
            except sqlite3.Error as exc:  # kept for the next try: holds count until then
                self._queue.extendleft(reversed(batch))
                if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY:
                    return _BUSY_RETRY_S
                log.warning("teams limiter %s: writing %d settles failed; retrying",
                            self.path, len(batch), exc_info=True)
                return 1.0
        return None

    def _write(self, db: sqlite3.Connection, batch: Sequence[_Settle]) -> None:
        now = self._clock()
        with _transaction(db):
            for item in batch:
                _apply(db, item)
            insert_spend(db, [item.row for item in batch if item.row is not None])
            _trim(db, {o.id for item in batch for o in _owners(item.reservation.demand)
                       if o.rpm is not None or o.tpm is not None}, now)
            if now - self._maintained > WINDOW_S:  # once a minute: what nobody settles
                self._maintained = now
                self.lost += _recover(db, now, is_alive, exclude=self.owner)
                _expire(db, now)  # after: a dead process's holds become rows first
        self._committed()

    def _committed(self) -> None:
        """Every ``_CHECKPOINT_EVERY`` commits, a checkpoint in a thread: the loop's
        connection never runs one on commit (it would copy pages on the loop)."""
        self._commits += 1
        if self._commits >= _CHECKPOINT_EVERY and self._checkpoint is None:
            self._commits = 0
            self._checkpoint = asyncio.get_running_loop().run_in_executor(None, self._wal_checkpoint)
            self._checkpoint.add_done_callback(self._checkpointed)

    def _wal_checkpoint(self) -> None:
        db = _connect(self.path, busy_ms=_WRITER_BUSY_MS)
        try:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            db.close()

    def _checkpointed(self, done: asyncio.Future[None]) -> None:
        self._checkpoint = None
        if not done.cancelled() and done.exception() is not None:
            log.warning("teams limiter %s: checkpoint failed: %s", self.path, done.exception())

    async def drain(self) -> None:
        """Wait until every queued settle is in the file (at most 10 s of a busy file)."""
        deadline = time.monotonic() + _BUSY_GIVE_UP_S
        while self._queue and time.monotonic() < deadline:
            if self._write_all(self._connection()) is not None:
                await asyncio.sleep(_BUSY_RETRY_S)

    async def close(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._queue:  # shutdown may wait for the file: in a thread, with a busy timeout
            db = _connect(self.path, busy_ms=_WRITER_BUSY_MS)
            try:
                await asyncio.to_thread(self._write_all, db)
            finally:
                db.close()
        if self._queue:
            log.error("teams limiter %s: %d settles could not be written at shutdown (their "
                      "holds become lost rows)", self.path, len(self._queue))
        if self._checkpoint is not None:
            await asyncio.wait([self._checkpoint], timeout=10)
        if self._db is not None:
            self._db.close()
            self._db = None


def _apply(db: sqlite3.Connection, item: _Settle) -> None:
    """One settle: the hold goes, its cost counts in the periods it was held in, the
    window's tokens become the real ones."""
    reservation = item.reservation
    demand = reservation.demand
    row = db.execute("SELECT usd, key_id, key_start, team_id, team_start FROM limit_holds "
                     "WHERE rid = ?", (reservation.id,)).fetchone()
    if row is not None:
        db.execute("DELETE FROM limit_holds WHERE rid = ?", (reservation.id,))
        usd, key_id, key_start, team_id, team_start = row
        for sid, start in ((key_id, key_start), (team_id, team_start)):
            if start is not None:
                db.execute("UPDATE limit_counts SET settled = settled + ?, reserved = "
                           "reserved - ? WHERE sid = ? AND start = ?",
                           (item.cost, usd, sid, start))
    elif item.cost > 0:  # its hold expired (it took longer than hold_ttl): the cost counts
        for owner in _owners(demand):
            start = _start(owner, reservation.at)
            if start is not None:
                db.execute("UPDATE limit_counts SET settled = settled + ? WHERE sid = ? AND "
                           "start = ?", (item.cost, owner.id, start))
    for owner in _owners(demand):
        if owner.tpm is not None and item.tokens != demand.tokens:
            changed = db.execute("UPDATE limit_hits SET tokens = ? WHERE sid = ? AND at = ? AND "
                                 "rid = ?", (item.tokens, owner.id, reservation.at,
                                             reservation.id)).rowcount
            if changed:  # still in its window: the window's total follows it
                db.execute("UPDATE limit_counts SET tokens = tokens + ? WHERE sid = ? AND "
                           "start = ?", (item.tokens - demand.tokens, owner.id, _WINDOW))


def _expire(db: sqlite3.Connection, now: float) -> int:
    """Holds past their ``expires`` stop counting (the process may still settle them);
    how many there were. Windows of scopes nobody asks for any more are trimmed too."""
    expired = db.execute("SELECT usd, key_id, key_start, team_id, team_start FROM "
                         "limit_holds WHERE expires <= ?", (now,)).fetchall()
    for usd, key_id, key_start, team_id, team_start in expired:
        for sid, start in ((key_id, key_start), (team_id, team_start)):
            if start is not None:
                db.execute("UPDATE limit_counts SET reserved = reserved - ? WHERE sid = ? "
                           "AND start = ?", (usd, sid, start))
    db.execute("DELETE FROM limit_holds WHERE expires <= ?", (now,))
    _trim(db, None, now)
    return len(expired)


def _trim(db: sqlite3.Connection, sids: set[str] | None, now: float) -> None:
    """Delete the hit rows that have left their window (of ``sids``; None: all) and take
    them off their windows' counts."""
    since = now - WINDOW_S
    if sids is None:
        gone = db.execute("SELECT sid, COUNT(*), SUM(tokens) FROM limit_hits WHERE at <= ? "
                          "GROUP BY sid", (since,)).fetchall()
    else:
        gone = [(sid, *db.execute("SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM limit_hits "
                                  "WHERE sid = ? AND at <= ?", (sid, since)).fetchone())
                for sid in sids]
    for sid, count, tokens in gone:
        if count:
            db.execute("DELETE FROM limit_hits WHERE sid = ? AND at <= ?", (sid, since))
            db.execute("UPDATE limit_counts SET requests = requests - ?, tokens = tokens - ? "
                       "WHERE sid = ? AND start = ?", (count, tokens, sid, _WINDOW))
            db.execute("DELETE FROM limit_counts WHERE sid = ? AND start = ? AND requests <= 0",
                       (sid, _WINDOW))


def _wait(db: sqlite3.Connection, sid: str, each: int | None, over: float, now: float) -> float:
    """Seconds until ``over`` requests (``each`` 1) or tokens (None) leave the window."""
    for at, tokens in db.execute("SELECT at, tokens FROM limit_hits WHERE sid = ? AND at > ? "
                                 "ORDER BY at", (sid, now - WINDOW_S)):
        over -= each if each is not None else tokens
        if over <= 0:
            return float(at) + WINDOW_S - now
    return WINDOW_S  # larger than the whole allowance: no wait makes it fit


def _recover(db: sqlite3.Connection, now: float, alive: Callable[[str], bool],
             exclude: str | None = None) -> int:
    """Holds of dead owners → spend rows (status LOST, the reserved worst case)."""
    owners = [o for (o,) in db.execute("SELECT DISTINCT owner FROM limit_holds")
              if o != exclude]
    lost = 0
    for owner in (o for o in owners if not alive(o)):
        holds = db.execute("SELECT rid, at, usd, key_id, key_start, team_id, team_start, "
                           "request_id, model FROM limit_holds WHERE owner = ?",
                           (owner,)).fetchall()
        rows = []
        for rid, at, usd, key_id, key_start, team_id, team_start, request_id, model in holds:
            for sid, start in ((key_id, key_start), (team_id, team_start)):
                if start is not None:
                    db.execute("UPDATE limit_counts SET settled = settled + ?, reserved = "
                               "reserved - ? WHERE sid = ? AND start = ?", (usd, usd, sid, start))
            rows.append(SpendRow(at, request_id or rid, key_id, team_id, model, "", "",
                                 cost_usd=usd, status=LOST, latency_ms=(now - at) * 1000))
        db.execute("DELETE FROM limit_holds WHERE owner = ?", (owner,))
        insert_spend(db, rows)
        lost += len(rows)
    if lost:
        log.warning("teams limiter: %d requests of processes that died are recorded as "
                    "lost, charged their reserved worst case", lost)
    return lost


# ------------------------------------------------------------ SQLite


def _connect(path: str, *, busy_ms: int) -> sqlite3.Connection:
    old = os.umask(0o077)
    try:
        db = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None,
                             check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout = {busy_ms}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        create_tables(db)
        db.executescript(_SCHEMA)
    except sqlite3.OperationalError as exc:
        if busy_ms == 0 and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY:
            return _connect(path, busy_ms=_WRITER_BUSY_MS)  # opening races another opener
        raise ConfigError(f"teams limiter {path}: cannot open: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"teams limiter {path}: cannot open: {exc}") from None
    finally:
        os.umask(old)
    if busy_ms == 0:
        db.execute("PRAGMA busy_timeout = 0")
    return db


class _transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; ``ROLLBACK`` on an exception other than a
    refusal (a refusal comes before any grant: the trims and seeds it made are kept)."""

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        keep = kind is None or (isinstance(kind, type) and issubclass(kind, _KEEP))
        if not keep:
            self.db.execute("ROLLBACK")
            return
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:  # the connection must not stay inside the transaction
            self.db.execute("ROLLBACK")
            raise


def holds(path: str) -> list[tuple[str, str, float]]:
    """(reservation id, owner, worst-case USD) of every hold in the file."""
    db = _connect(path, busy_ms=_WRITER_BUSY_MS)
    try:
        return list(db.execute("SELECT rid, owner, usd FROM limit_holds"))
    finally:
        db.close()
