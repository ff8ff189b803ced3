"""The Redis ``Limiter``: rate windows and budget reservations shared by every gateway
instance. The counters live only in Redis, so instances cannot drift apart; each
admission is one Lua script (atomic on the server: the key's and the team's checks and
bookkeeping, all or nothing), each settle or release another.

Layout under ``{prefix}teams:`` (``sid`` is ``key:<id>`` or ``team:<id>``):

- ``rpm:{sid}``            zset  reservation id → admitted at (a sliding minute)
- ``tpm:{sid}``            zset  reservation id → admitted at
- ``tpmn:{sid}``           hash  reservation id → tokens; ``=sum`` their total
- ``budget:{sid}:{start}`` hash  ``settled`` and ``reserved`` USD of the period that
                                 began at ``start``, ``h:<id>`` each hold's amount
- ``held:{sid}:{start}``   zset  reservation id → when its hold expires
- ``done:{id}``            a reservation settled (a second settle does nothing)

``reserve`` waits for its script (one round trip, before the upstream call); ``settle``
and ``release`` send theirs and return, so the answer does not wait on Redis (until
``MAX_SETTLING`` are in flight; ``close`` waits for them). Until a settle lands, its
hold still counts: the budget errs on the safe side.

Windows expire 61 s after their last entry; a budget hash a day after its period ends
(a total budget after 30 days unused). A missing budget hash is seeded once from the
store's spend record (``KeyStore.spent``). Holds expire after ``hold_ttl`` seconds, so
the reservations of an instance that died stop counting against the budget.

Redis going away: as the credential store does (``credentials/stores/redis.py``), the
limiter logs one warning, reports ``health == "degraded"`` and admits through an
in-process ``LocalLimiter`` (each instance then enforces limits on its own), tries
Redis again every ``reconnect_interval`` seconds, and on its return replays the
settles it journaled: what local grants spent, and a release for each admission that
timed out (its script may still have run once Redis woke). It needs one Redis primary (or Sentinel), not Redis Cluster:
an admission touches the key's and the team's counters in one script.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from .limiter import LocalLimiter
from .model import Budget, Team, VirtualKey
from .store import BudgetExhausted, Demand, KeyStore, RateLimited, Reservation

__all__ = ["RedisLimiter"]

log = logging.getLogger("modelwire.teams")

TIMEOUT = 1.0  # seconds, connect and each command (a slow answer is not an outage: an
# outage means per-instance limits, so it is declared late; then 5 s go by without waits)
POOL_SIZE = 32  # connections per process
RECONNECT_INTERVAL = 5.0
MAX_SETTLING = 32  # settles in flight per process before a settle waits for its own
HOLD_TTL = 900.0  # seconds a reservation holds budget: longer than any one request
_TOTAL_TTL = 30 * 86400

_TRIM = """
local WINDOW = 60
local function trim_tokens(z, h, now)
  while true do
    local gone = redis.call('ZRANGEBYSCORE', z, '-inf', now - WINDOW, 'LIMIT', 0, 500)
    if #gone == 0 then return end
    local sum = 0
    for _, a in ipairs(redis.call('HMGET', h, unpack(gone))) do sum = sum + (tonumber(a) or 0) end
    redis.call('HINCRBY', h, '=sum', -sum)
    redis.call('HDEL', h, unpack(gone))
    redis.call('ZREM', z, unpack(gone))
  end
end
local function expire_holds(held, bud, now)
  local any = false
  while true do
    local gone = redis.call('ZRANGEBYSCORE', held, '-inf', now, 'LIMIT', 0, 500)
    if #gone == 0 then break end
    any = true
    local fields, sum = {}, 0
    for i, id in ipairs(gone) do fields[i] = 'h:' .. id end
    for _, a in ipairs(redis.call('HMGET', bud, unpack(fields))) do sum = sum + (tonumber(a) or 0) end
    redis.call('HINCRBYFLOAT', bud, 'reserved', -sum)
    redis.call('HDEL', bud, unpack(fields))
    redis.call('ZREM', held, unpack(gone))
  end
  if any and redis.call('ZCARD', held) == 0 then redis.call('HSET', bud, 'reserved', 0) end
  return any
end
"""

# KEYS, per scope: rpm, tpm, tpmn, budget, held.  ARGV: now, id, tokens, cost, hold_ttl,
# n, then per scope: rpm, tpm, budget, seed, budget_ttl ('' = none).
# Returns {0} granted, {1, i, limit, wait} rate limited, {2, i, used} budget spent,
# {3, i} budget hash missing and no seed given (the caller reads the store, calls again).
_RESERVE = _TRIM + """
local now, rid = tonumber(ARGV[1]), ARGV[2]
local tokens, cost, hold_ttl, n = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
for i = 1, n do
  local k, a = (i - 1) * 5, 6 + (i - 1) * 5
  local rpm, tpm, budget, seed = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  if rpm ~= '' then
    rpm = tonumber(rpm)
    redis.call('ZREMRANGEBYSCORE', KEYS[k + 1], '-inf', now - WINDOW)
    local over = redis.call('ZCARD', KEYS[k + 1]) + 1 - rpm
    if over > 0 then
      local wait = WINDOW
      local at = redis.call('ZRANGE', KEYS[k + 1], over - 1, over - 1, 'WITHSCORES')
      if rpm > 0 and at[2] then wait = tonumber(at[2]) + WINDOW - now end
      return {1, i, 'rpm', tostring(wait)}
    end
  end
  if tpm ~= '' then
    tpm = tonumber(tpm)
    trim_tokens(KEYS[k + 2], KEYS[k + 3], now)
    local need = tonumber(redis.call('HGET', KEYS[k + 3], '=sum') or '0') + tokens - tpm
    if need > 0 then
      local wait = WINDOW
      local entries = redis.call('ZRANGE', KEYS[k + 2], 0, -1, 'WITHSCORES')
      for j = 1, #entries, 2 do
        need = need - (tonumber(redis.call('HGET', KEYS[k + 3], entries[j])) or 0)
        if need <= 0 then wait = tonumber(entries[j + 1]) + WINDOW - now; break end
      end
      return {1, i, 'tpm', tostring(wait)}
    end
  end
  if budget ~= '' then
    budget = tonumber(budget)
    local count = redis.call('HMGET', KEYS[k + 4], 'settled', 'reserved')
    if not count[1] then
      if seed == '' then return {3, i} end
      redis.call('HSET', KEYS[k + 4], 'settled', seed, 'reserved', 0)
      count = {seed, '0'}
    end
    if expire_holds(KEYS[k + 5], KEYS[k + 4], now) then
      count[2] = redis.call('HGET', KEYS[k + 4], 'reserved')
    end
    local used = tonumber(count[1]) + tonumber(count[2] or '0')
    if used + cost > budget or used >= budget then return {2, i, tostring(used)} end
  end
end
for i = 1, n do
  local k, a = (i - 1) * 5, 6 + (i - 1) * 5
  if ARGV[a + 1] ~= '' then
    redis.call('ZADD', KEYS[k + 1], now, rid)
    redis.call('EXPIRE', KEYS[k + 1], WINDOW + 1)
  end
  if ARGV[a + 2] ~= '' then
    redis.call('ZADD', KEYS[k + 2], now, rid)
    redis.call('HSET', KEYS[k + 3], rid, tokens)
    redis.call('HINCRBY', KEYS[k + 3], '=sum', tokens)
    redis.call('EXPIRE', KEYS[k + 2], WINDOW + 1)
    redis.call('EXPIRE', KEYS[k + 3], WINDOW + 1)
  end
  if ARGV[a + 3] ~= '' then
    redis.call('HINCRBYFLOAT', KEYS[k + 4], 'reserved', cost)
    redis.call('HSET', KEYS[k + 4], 'h:' .. rid, cost)
    redis.call('ZADD', KEYS[k + 5], now + hold_ttl, rid)
    redis.call('EXPIRE', KEYS[k + 4], ARGV[a + 5])
    redis.call('EXPIRE', KEYS[k + 5], ARGV[a + 5])
  end
end
return {0}
"""

# KEYS: the reservation's done marker, then per scope: tpm, tpmn, budget of the
# reservation's period, its held, budget of the current period.  ARGV: id, tokens, cost,
# n, marker ttl, then per scope: has tpm, has budget.  A second settle finds the marker
# and does nothing. A hold already expired is gone (nothing to give back); the cost is
# added to the current period's count when that exists (else it is seeded later).
_SETTLE = """
local rid, tokens, cost, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if not redis.call('SET', KEYS[1], 1, 'NX', 'EX', ARGV[5]) then return 0 end
for i = 1, n do
  local k, a = 1 + (i - 1) * 5, 5 + (i - 1) * 2
  if ARGV[a + 1] == '1' and redis.call('ZSCORE', KEYS[k + 1], rid) then
    local old = tonumber(redis.call('HGET', KEYS[k + 2], rid) or '0')
    redis.call('HSET', KEYS[k + 2], rid, tokens)
    redis.call('HINCRBY', KEYS[k + 2], '=sum', tokens - old)
  end
  if ARGV[a + 2] == '1' then
    local amount = redis.call('HGET', KEYS[k + 3], 'h:' .. rid)
    if amount then
      redis.call('HINCRBYFLOAT', KEYS[k + 3], 'reserved', -tonumber(amount))
      redis.call('HDEL', KEYS[k + 3], 'h:' .. rid)
      redis.call('ZREM', KEYS[k + 4], rid)
      if redis.call('ZCARD', KEYS[k + 4]) == 0 then redis.call('HSET', KEYS[k + 3], 'reserved', 0) end
    end
    if cost > 0 and redis.call('EXISTS', KEYS[k + 5]) == 1 then
      redis.call('HINCRBYFLOAT', KEYS[k + 5], 'settled', cost)
    end
  end
end
return 1
"""


def _owners(demand: Demand) -> list[VirtualKey | Team]:
    return [demand.key] if demand.team is None else [demand.key, demand.team]


def _sid(owner: VirtualKey | Team) -> str:
    return f"{owner.scope.kind}:{owner.scope.id}"


def _opt(value: float | None) -> str:
    return "" if value is None else repr(value)


class RedisLimiter:
    def __init__(self, url: str, store: KeyStore | None = None, *, prefix: str = "modelwire:",
                 client: Any = None, timeout: float = TIMEOUT, hold_ttl: float = HOLD_TTL,
                 reconnect_interval: float = RECONNECT_INTERVAL,
                 clock: Callable[[], float] = time.time) -> None:
        import redis.asyncio
        import redis.exceptions

        self.url = url
        self.prefix = prefix + "teams:"
        self.hold_ttl = hold_ttl
        self.health = "ok"
        self.reconnect_interval = reconnect_interval
        self._store = store
        self._clock = clock
        # transport-level failures only; a script error (ResponseError) is a bug and raises
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                        redis.exceptions.InvalidResponse, OSError, asyncio.TimeoutError)
        self._pool: Any = None
        if client is None:
            pool = redis.asyncio.ConnectionPool.from_url(
                url, max_connections=POOL_SIZE, socket_timeout=timeout,
                socket_connect_timeout=timeout, retry_on_timeout=False, decode_responses=True,
                health_check_interval=0)
            client = redis.asyncio.Redis(connection_pool=pool)
            self._pool = pool
        self._redis = client
        # a burst of requests takes turns (first come, first served) for the pool's
        # connections, rather than opening one each; redis-py's BlockingConnectionPool
        # let a waiter starve past its timeout under steady load, which read as an outage
        self._turns = asyncio.Semaphore(POOL_SIZE)
        self._reserve_script = self._redis.register_script(_RESERVE)
        self._settle_script = self._redis.register_script(_SETTLE)
        self._local = LocalLimiter(store, clock=clock)  # while Redis does not answer
        self._local_ids: dict[str, Reservation] = {}  # ours → the local limiter's grant
        self._journal: list[tuple[Reservation, float, int]] = []  # settles made while down
        self._down_since: float | None = None
        self._settling: set[asyncio.Task[None]] = set()  # settles sent, not yet answered
        self._periods: dict[str, tuple[float, float]] = {}  # period → [start, until)

    # ------------------------------------------------------------ admission
    async def reserve(self, demand: Demand) -> Reservation:
        if not await self._up():
            return await self._reserve_locally(demand)
        rid, now = secrets.token_hex(8), self._clock()
        try:
            return await self._reserve(demand, rid, now)
        except self._errors as exc:
            self._went_down(exc)
            # a script that timed out may still run when Redis wakes: give back its hold
            self._journal.append((Reservation(rid, demand, now), 0.0, 0))
            return await self._reserve_locally(demand)

    async def _reserve(self, demand: Demand, rid: str, now: float) -> Reservation:
        owners = _owners(demand)
        seeds: dict[int, float] = {}
        while True:  # at most once more per scope with a budget: its seed
            keys: list[str] = []
            args: list[Any] = [repr(now), rid, demand.tokens, repr(demand.cost_usd),
                               repr(self.hold_ttl), len(owners)]
            for i, owner in enumerate(owners, 1):
                sid = _sid(owner)
                start, ttl = self._period(owner.budget, now)
                keys += [self._k("rpm", sid), self._k("tpm", sid), self._k("tpmn", sid),
                         self._budget_key(sid, start), self._held_key(sid, start)]
                args += [_opt(owner.rpm), _opt(owner.tpm),
                         _opt(None if owner.budget is None else owner.budget.usd),
                         _opt(seeds.get(i)), ttl]
            async with self._turns:
                result = await self._reserve_script(keys=keys, args=args)
            code = int(result[0])
            if code == 0:
                return Reservation(rid, demand, now)
            owner = owners[int(result[1]) - 1]
            if code == 1:
                limit = str(result[2])
                allowed = owner.rpm if limit == "rpm" else owner.tpm
                raise RateLimited(owner.scope, limit, int(allowed or 0), float(result[3]))
            assert owner.budget is not None
            if code == 2:
                raise BudgetExhausted(owner.scope, owner.budget.usd, float(result[2]),
                                      owner.budget.resets_at(now))
            seeds[int(result[1])] = await self._spent(owner, now)

    async def _spent(self, owner: VirtualKey | Team, now: float) -> float:
        """The period's spend so far from the store (in a thread: the store is sync)."""
        if self._store is None:
            return 0.0
        assert owner.budget is not None
        return await asyncio.to_thread(self._store.spent, owner.scope, owner.budget.window_start(now))

    async def settle(self, reservation: Reservation, cost_usd: float | None, tokens: int) -> None:
        await self._finish(reservation, cost_usd or 0.0, tokens)

    async def release(self, reservation: Reservation) -> None:
        await self._finish(reservation, 0.0, 0)

    async def _finish(self, reservation: Reservation, cost: float, tokens: int) -> None:
        local = self._local_ids.pop(reservation.id, None)
        if local is not None:  # granted while Redis was away
            await self._local.settle(local, cost, tokens)
            if cost <= 0:
                return
            tokens = 0  # its spend still counts in Redis's budget (no hold or window there)
        if len(self._settling) >= MAX_SETTLING:  # Redis is slow: wait for it here
            await self._settle_or_journal(reservation, cost, tokens)
            return
        task = asyncio.get_running_loop().create_task(
            self._settle_or_journal(reservation, cost, tokens))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def _settle_or_journal(self, reservation: Reservation, cost: float, tokens: int) -> None:
        if not await self._up():
            self._journal.append((reservation, cost, tokens))
            return
        try:
            await self._settle(reservation, cost, tokens)
        except self._errors as exc:
            self._went_down(exc)
            self._journal.append((reservation, cost, tokens))

    @property
    def settling(self) -> int:
        """Settles sent to Redis and not answered yet."""
        return len(self._settling)

    async def drain(self) -> None:
        """Wait for the settles in flight (``settle`` returns before Redis has them)."""
        while self._settling:
            await asyncio.gather(*list(self._settling))

    async def _settle(self, reservation: Reservation, cost: float, tokens: int) -> None:
        owners = _owners(reservation.demand)
        now = self._clock()
        keys = [self._k("done", reservation.id)]
        args: list[Any] = [reservation.id, tokens, repr(cost), len(owners),
                           int(self.hold_ttl) * 2]
        for owner in owners:
            sid = _sid(owner)
            held = self._period(owner.budget, reservation.at)[0]
            current = self._period(owner.budget, now)[0]
            keys += [self._k("tpm", sid), self._k("tpmn", sid), self._budget_key(sid, held),
                     self._held_key(sid, held), self._budget_key(sid, current)]
            args += ["1" if owner.tpm is not None else "0",
                     "1" if owner.budget is not None else "0"]
        async with self._turns:
            await self._settle_script(keys=keys, args=args)

    async def close(self) -> None:
        await self.drain()
        if self._journal:
            log.warning("teams limiter %s: %d settles made while it did not answer are not "
                        "in its counts (the spend record has them)", self._safe_url(),
                        len(self._journal))
        await self._local.close()
        await self._redis.aclose()
        if self._pool is not None:  # a pool handed to Redis() stays open with it
            await self._pool.disconnect()

    # ------------------------------------------------------------ Redis going away
    async def _reserve_locally(self, demand: Demand) -> Reservation:
        """A grant of the in-process limiter, under an id unique across instances (its
        settle reaches Redis's budget once Redis answers)."""
        local = await self._local.reserve(demand)
        reservation = Reservation(secrets.token_hex(8), demand, local.at)
        self._local_ids[reservation.id] = local
        return reservation

    async def _up(self) -> bool:
        """Whether to use Redis now: yes unless it failed less than
        ``reconnect_interval`` ago; after that, replay the journal first."""
        down = self._down_since
        if down is None:
            return True
        if time.monotonic() - down < self.reconnect_interval:
            return False
        journal, self._journal = self._journal, []
        try:
            for reservation, cost, tokens in journal:
                await self._settle(reservation, cost, tokens)
        except self._errors:
            self._journal = journal + self._journal
            self._down_since = time.monotonic()
            return False
        self._down_since = None
        self.health = "ok"
        log.warning("teams limiter %s reachable again; replayed %d settles made while it "
                    "was not", self._safe_url(), len(journal))
        return True

    def _went_down(self, exc: BaseException) -> None:
        if self._down_since is None:
            log.warning("teams limiter %s unreachable (%s); each instance enforces limits "
                        "on its own until it answers (status: degraded)", self._safe_url(),
                        type(exc).__name__)
        self._down_since = time.monotonic()
        self.health = "degraded"

    # ------------------------------------------------------------ names
    def _k(self, kind: str, sid: str) -> str:
        return f"{self.prefix}{kind}:{sid}"

    def _budget_key(self, sid: str, start: float) -> str:
        return f"{self.prefix}budget:{sid}:{start:.0f}"

    def _held_key(self, sid: str, start: float) -> str:
        return f"{self.prefix}held:{sid}:{start:.0f}"

    def _period(self, budget: Budget | None, now: float) -> tuple[float, str]:
        """The start of ``budget``'s period at ``now`` and its count's TTL (seconds, as
        the script takes it); calendar dates computed once per period, not per request."""
        if budget is None:
            return 0.0, ""
        cached = self._periods.get(budget.period)
        if cached is None or not cached[0] <= now < cached[1]:
            start = budget.window_start(now)
            until = budget.resets_at(now)
            cached = (start, float("inf") if until is None else until)
            self._periods[budget.period] = cached
        start, until = cached
        return start, str(_TOTAL_TTL if until == float("inf") else int(until - now) + 86400)

    def _safe_url(self) -> str:
        # redis://:password@host → never log the password
        scheme, _, rest = self.url.partition("://")
        return scheme + "://" + rest.rsplit("@", 1)[-1]
