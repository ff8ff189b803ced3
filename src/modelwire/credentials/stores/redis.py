"""Redis store: credential state shared by several machines.

Every change is one Lua script (atomic on the server). Layout under ``prefix``:

- ``{prefix}cred:{provider}``      hash  id → JSON record (request_count lives apart)
- ``{prefix}count:{provider}``     hash  id → request count (HINCRBY, exact)
- ``{prefix}leases:{provider}``    zset  lease id → expiry (a lease is a TTL entry:
                                         expired ones are dropped by every acquire)
- ``{prefix}owner:{provider}``     hash  lease id → credential id
- ``{prefix}rotation:{provider}``  round-robin counter; ``{prefix}salt``; ``{prefix}lock:{name}``

Fail-open: every command has a 50 ms socket timeout. When Redis does not answer,
the store logs one warning, reports ``health == "degraded"`` and serves from an
in-process :class:`~.memory.MemoryStore` seeded with the last records it read, so
requests keep flowing (each machine then cools and leases on its own). It tries
Redis again every :data:`RECONNECT_INTERVAL` seconds (peers' bug: an unreachable
Redis blocked every request forever, litellm PR#35273).

Reconcile: what the store did locally while degraded is journaled (:mod:`.journal`)
and merged into Redis in one transaction when it answers again, then logged. While
degraded each process cools, counts and caps leases on its own: a cap is per process
until the merge. A generation key (``{prefix}generation``), checked on reconnect and
every :data:`RECONNECT_INTERVAL` seconds, tells a store that came back empty (a restart
without persistence) from a new one: the records this process holds, with their salt,
are written back and the event logged, never a silent "no credentials".
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from ..cooldown import Mark
from ..credential import PooledCredential
from ._ops import Acquired, Health, Order, new_lease_id
from .journal import Journal
from .memory import MemoryStore

__all__ = ["RedisStore"]

log = logging.getLogger("modelwire.credentials")
T = TypeVar("T")

TIMEOUT = 0.05  # seconds, connect and each command
RECONNECT_INTERVAL = 5.0

_ACQUIRE = """
local now, ttl, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local order, lease_id = ARGV[4], ARGV[5]
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, l in ipairs(expired) do redis.call('HDEL', KEYS[3], l) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local counts = {}
for _, l in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local c = redis.call('HGET', KEYS[3], l)
  if c then counts[c] = (counts[c] or 0) + 1 end
end
local avail = {}
for i = 6, #ARGV do
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  if raw then
    local r = cjson.decode(raw)
    local untilv = tonumber(r.cooldown_until)
    if r.status == 'ok' or (r.status == 'cooling' and (untilv == nil or untilv <= now)) then
      table.insert(avail, ARGV[i])
    end
  end
end
if #avail == 0 then return false end
if order == 'rotate' then
  local n = tonumber(redis.call('GET', KEYS[4]) or '0')
  redis.call('INCR', KEYS[4])
  local k, rotated = n % #avail, {}
  for i = 1, #avail do rotated[i] = avail[((i - 1 + k) % #avail) + 1] end
  avail = rotated
elseif order == 'least_used' then
  local pos, used = {}, {}
  for i, id in ipairs(avail) do
    pos[id] = i
    used[id] = tonumber(redis.call('HGET', KEYS[5], id) or '0')
  end
  table.sort(avail, function(a, b)
    if used[a] ~= used[b] then return used[a] < used[b] end
    return pos[a] < pos[b]
  end)
end
local chosen = nil
for _, id in ipairs(avail) do
  if (counts[id] or 0) < cap then chosen = id; break end
end
if not chosen then
  chosen = avail[1]
  for _, id in ipairs(avail) do
    if (counts[id] or 0) < (counts[chosen] or 0) then chosen = id end
  end
end
redis.call('HINCRBY', KEYS[5], chosen, 1)
redis.call('ZADD', KEYS[2], now + ttl, lease_id)
redis.call('HSET', KEYS[3], lease_id, chosen)
return chosen
"""

_MARK = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local r = cjson.decode(raw)
local status, now = ARGV[2], tonumber(ARGV[6])
local function opt(v) if v == '' then return cjson.null end return v end
if status == 'ok' then
  r.status, r.cooldown_until, r.status_at = 'ok', cjson.null, now
  r.last_error_code, r.last_error_reason = cjson.null, cjson.null
elseif r.status ~= 'dead' then
  r.status_at, r.last_error_code, r.last_error_reason = now, opt(ARGV[4]), opt(ARGV[5])
  if status == 'dead' then
    r.status, r.cooldown_until = 'dead', cjson.null
  else
    local untilv = tonumber(ARGV[3]) or now
    local existing = tonumber(r.cooldown_until)
    if r.status == 'cooling' and existing ~= nil and existing > untilv then untilv = existing end
    r.status, r.cooldown_until = 'cooling', untilv
  end
end
raw = cjson.encode(r)
redis.call('HSET', KEYS[1], ARGV[1], raw)
return raw
"""

_PATCH = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local r = cjson.decode(raw)
for k, v in pairs(cjson.decode(ARGV[2])) do r[k] = v end
raw = cjson.encode(r)
redis.call('HSET', KEYS[1], ARGV[1], raw)
return raw
"""

_RENEW = """
local exp = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not exp or tonumber(exp) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
return 1
"""

_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisStore:
    def __init__(self, url: str, *, prefix: str = "modelwire:", client: Any = None,
                 timeout: float = TIMEOUT, reconnect_interval: float = RECONNECT_INTERVAL) -> None:
        import redis
        import redis.exceptions

        self.url = url
        self.prefix = prefix
        self.health: Health = "ok"
        self.reconnect_interval = reconnect_interval
        self.journal = Journal()  # local changes while degraded, merged on return
        self._generation: str | None = None  # the store's generation this process knows
        self._checked_at: float | None = None  # when the generation was last checked
        # transport-level failures only; a script error (ResponseError) is a bug and raises
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                        redis.exceptions.InvalidResponse, OSError)
        self._redis = client or redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, retry_on_timeout=False,
            decode_responses=True, health_check_interval=0,
        )
        self._fallback = MemoryStore()
        self._down_since: float | None = None
        self._scripts = {name: self._redis.register_script(src) for name, src in
                         (("acquire", _ACQUIRE), ("mark", _MARK), ("patch", _PATCH),
                          ("renew", _RENEW), ("unlock", _UNLOCK))}

    # ------------------------------------------------------------------ fail-open
    def _call(self, op: Callable[[], T], fallback: Callable[[MemoryStore], T]) -> T:
        now = time.monotonic()
        down = self._down_since
        if down is not None and now - down < self.reconnect_interval:
            return fallback(self._fallback)
        try:
            if down is not None:
                self._recover()
            elif self._checked_at is None or now - self._checked_at >= self.reconnect_interval:
                self._checked_at = now
                self._check_generation()
            result = op()
        except self._errors as exc:
            if self._down_since is None:
                log.warning("credential store %s unreachable (%s); using in-process state "
                            "until it answers (status: degraded)", self._safe_url(), type(exc).__name__)
            self._down_since = time.monotonic()
            self.health = "degraded"
            return fallback(self._fallback)
        return result

    # ------------------------------------------------------------------ reconcile
    def _recover(self) -> None:
        """Redis answers again: check its generation, merge the journal, say so."""
        self._check_generation()
        merged = self.journal.summary() if self.journal else "nothing to merge"
        self._replay(self.journal)
        self.journal = Journal()
        self._down_since = None
        self._checked_at = time.monotonic()
        self.health = "ok"
        log.warning("credential store %s reachable again; merged local changes: %s", self._safe_url(), merged)

    def _check_generation(self) -> None:
        """A store emptied behind this process's back (restart without persistence, a
        flush) is written back from the local copy; a new store gets its generation."""
        key = self._k("generation")
        current = cast("str | None", self._redis.get(key))  # decode_responses: str
        if current is not None:
            if self._generation is not None and current != self._generation:
                # emptied, and a process with nothing to restore marked it as new, or a
                # peer re-seeded it first: either way, add what only this process knows
                self._reseed("has a new generation (emptied since this process last saw it)")
            self._generation = current
            return
        known = self._fallback.list()
        if self._generation is None and not known:
            self._redis.set(key, new_lease_id(), nx=True)  # a new store (or our first look)
            self._generation = cast("str | None", self._redis.get(key))
            return
        self._redis.set(key, new_lease_id(), nx=True)  # a peer may have re-seeded first
        self._generation = cast("str | None", self._redis.get(key))
        self._reseed("came back empty")

    def _reseed(self, why: str) -> None:
        known = self._fallback.list()
        pipe = self._redis.pipeline(transaction=True)
        if self._fallback._salt is not None:  # the same salt: env credentials keep their ids
            pipe.set(self._k("salt"), self._fallback._salt.hex(), nx=True)
        for cred in known:
            pipe.hsetnx(self._k("cred", cred.provider), cred.id, self._encode(cred))
            pipe.hsetnx(self._k("count", cred.provider), cred.id, cred.request_count)
        pipe.execute()
        log.warning("credential store %s %s: wrote back the %d credentials this process holds",
                    self._safe_url(), why, len(known))

    def _replay(self, journal: Journal) -> None:
        """The journal into Redis, in one transaction (merge rules: :mod:`.journal`)."""
        if not journal:
            return
        pipe = self._redis.pipeline(transaction=True)
        for provider, cred_id in journal.deleted:
            pipe.hdel(self._k("cred", provider), cred_id)
            pipe.hdel(self._k("count", provider), cred_id)
        for cred in journal.written.values():
            pipe.hset(self._k("cred", cred.provider), cred.id, self._encode(cred))
        for cred in journal.inserted.values():
            pipe.hsetnx(self._k("cred", cred.provider), cred.id, self._encode(cred))
        for (provider, cred_id), fields in journal.patches.items():
            self._scripts["patch"](keys=[self._k("cred", provider)], args=[cred_id, json.dumps(fields)],
                                   client=pipe)
        for (provider, cred_id), (mark, now) in journal.marks.items():
            args = (mark.status, "" if mark.until is None else repr(mark.until), mark.code or "",
                    mark.reason or "", repr(now))
            self._scripts["mark"](keys=[self._k("cred", provider)], args=[cred_id, *args], client=pipe)
        for (provider, cred_id), n in journal.counts.items():
            pipe.hincrby(self._k("count", provider), cred_id, n)
        for lease_id, (provider, cred_id, expires_at) in journal.leases.items():
            pipe.zadd(self._k("leases", provider), {lease_id: expires_at})
            pipe.hset(self._k("owner", provider), lease_id, cred_id)
        for lease_id, provider in journal.released.items():
            pipe.zrem(self._k("leases", provider), lease_id)
            pipe.hdel(self._k("owner", provider), lease_id)
        pipe.execute()

    def _safe_url(self) -> str:
        # redis://:password@host → never log the password
        rest = self.url.split("://", 1)[-1]
        return self.url.split("://", 1)[0] + "://" + rest.rsplit("@", 1)[-1]

    def _k(self, kind: str, provider: str = "") -> str:
        return f"{self.prefix}{kind}:{provider}" if provider else f"{self.prefix}{kind}"

    # ------------------------------------------------------------------ records
    def salt(self) -> bytes:
        def op() -> bytes:
            self._redis.set(self._k("salt"), os.urandom(32).hex(), nx=True)
            value = bytes.fromhex(cast(str, self._redis.get(self._k("salt"))))
            self._fallback._salt = value  # the degraded mode must fingerprint identically
            return value

        return self._call(op, lambda m: m.salt())

    def _decode(self, provider: str, raw: str, count: Any) -> PooledCredential:
        record = json.loads(raw)
        record["request_count"] = int(count or 0)
        return PooledCredential.from_record(record)

    def list(self, provider: str | None = None) -> list[PooledCredential]:
        def op() -> list[PooledCredential]:
            providers = [provider] if provider else sorted(
                key[len(self._k("cred")) + 1:] for key in self._redis.scan_iter(self._k("cred") + ":*"))
            creds = []
            for p in providers:
                pipe = self._redis.pipeline(transaction=True)  # one round trip, one snapshot
                pipe.hgetall(self._k("count", p))
                pipe.hgetall(self._k("cred", p))
                counts, records = pipe.execute()
                for cid, raw in sorted(records.items()):
                    creds.append(self._decode(p, raw, counts.get(cid)))
            for cred in creds:  # remember the last known state for degraded mode
                self._fallback.put(cred)
            return creds

        return self._call(op, lambda m: m.list(provider))

    def get(self, provider: str, cred_id: str) -> PooledCredential | None:
        def op() -> PooledCredential | None:
            raw = cast("str | None", self._redis.hget(self._k("cred", provider), cred_id))
            if raw is None:
                return None
            return self._decode(provider, raw, self._redis.hget(self._k("count", provider), cred_id))

        return self._call(op, lambda m: m.get(provider, cred_id))

    def _encode(self, cred: PooledCredential) -> str:
        record = cred.to_record(with_secret=True)
        record.pop("request_count")
        return json.dumps(record)

    def put(self, cred: PooledCredential) -> None:
        def op() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(self._k("cred", cred.provider), cred.id, self._encode(cred))
            pipe.hset(self._k("count", cred.provider), cred.id, cred.request_count)
            pipe.execute()
            self._fallback.put(cred)

        def local(m: MemoryStore) -> None:
            self.journal.put(cred)
            m.put(cred)

        self._call(op, local)

    def insert_if_absent(self, cred: PooledCredential) -> PooledCredential:
        def op() -> PooledCredential:
            self._redis.hsetnx(self._k("cred", cred.provider), cred.id, self._encode(cred))
            stored = self.get(cred.provider, cred.id)
            assert stored is not None
            self._fallback.put(stored)
            return stored

        def local(m: MemoryStore) -> PooledCredential:
            self.journal.insert(cred)
            return m.insert_if_absent(cred)

        return self._call(op, local)

    def delete(self, provider: str, cred_id: str) -> bool:
        def op() -> bool:
            self._fallback.delete(provider, cred_id)
            self._redis.hdel(self._k("count", provider), cred_id)
            return bool(self._redis.hdel(self._k("cred", provider), cred_id))

        def local(m: MemoryStore) -> bool:
            self.journal.delete(provider, cred_id)
            return m.delete(provider, cred_id)

        return self._call(op, local)

    def _scripted(self, name: str, provider: str, cred_id: str, *args: Any) -> PooledCredential | None:
        raw = self._scripts[name](keys=[self._k("cred", provider)], args=[cred_id, *args])
        if not raw:
            return None
        cred = self._decode(provider, raw, self._redis.hget(self._k("count", provider), cred_id))
        self._fallback.put(cred)
        return cred

    def patch(self, provider: str, cred_id: str, fields: Mapping[str, Any]) -> PooledCredential | None:
        body = {k: v for k, v in fields.items() if k != "request_count"}
        def local(m: MemoryStore) -> PooledCredential | None:
            self.journal.patch(provider, cred_id, fields)
            return m.patch(provider, cred_id, fields)

        return self._call(lambda: self._scripted("patch", provider, cred_id, json.dumps(body)), local)

    def mark(self, provider: str, cred_id: str, mark: Mark, now: float) -> PooledCredential | None:
        args = (mark.status, "" if mark.until is None else repr(mark.until), mark.code or "",
                mark.reason or "", repr(now))
        def local(m: MemoryStore) -> PooledCredential | None:
            self.journal.mark(provider, cred_id, mark, now)
            return m.mark(provider, cred_id, mark, now)

        return self._call(lambda: self._scripted("mark", provider, cred_id, *args), local)

    # ------------------------------------------------------------------ leases
    def acquire(
        self, provider: str, candidates: Sequence[str], *, cap: int, ttl: float, now: float,
        order: Order,
    ) -> Acquired | None:
        def op() -> Acquired | None:
            lease_id = new_lease_id()
            keys = [self._k("cred", provider), self._k("leases", provider),
                    self._k("owner", provider), self._k("rotation", provider),
                    self._k("count", provider)]
            chosen = self._scripts["acquire"](
                keys=keys, args=[repr(now), repr(ttl), cap, order, lease_id, *candidates])
            return Acquired(chosen, lease_id, now + ttl) if chosen else None

        def local(m: MemoryStore) -> Acquired | None:
            got = m.acquire(provider, candidates, cap=cap, ttl=ttl, now=now, order=order)
            if got is not None:
                self.journal.acquired(provider, got.credential_id, got.lease_id, got.expires_at)
            return got

        return self._call(op, local)

    def renew(self, provider: str, lease_id: str, *, ttl: float, now: float) -> bool:
        def local(m: MemoryStore) -> bool:
            renewed = m.renew(provider, lease_id, ttl=ttl, now=now)
            if renewed:
                self.journal.renewed(lease_id, now + ttl)
            return renewed

        return self._call(
            lambda: bool(self._scripts["renew"](keys=[self._k("leases", provider)],
                                                args=[lease_id, repr(now), repr(ttl)])), local)

    def release(self, provider: str, lease_id: str) -> None:
        def op() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.zrem(self._k("leases", provider), lease_id)
            pipe.hdel(self._k("owner", provider), lease_id)
            pipe.execute()
            self._fallback.release(provider, lease_id)

        def local(m: MemoryStore) -> None:
            self.journal.release(provider, lease_id)
            m.release(provider, lease_id)

        self._call(op, local)

    def lease_counts(self, provider: str, now: float) -> dict[str, int]:
        def op() -> dict[str, int]:
            live = cast("list[str]", self._redis.zrangebyscore(self._k("leases", provider), f"({now!r}", "+inf"))
            owners = cast("list[str | None]", self._redis.hmget(self._k("owner", provider), live)) if live else []
            counts: dict[str, int] = {}
            for cid in owners:
                if cid:
                    counts[cid] = counts.get(cid, 0) + 1
            return counts

        return self._call(op, lambda m: m.lease_counts(provider, now))

    # ------------------------------------------------------------------ lock
    @contextmanager
    def lock(self, name: str, *, ttl: float = 30.0, timeout: float = 30.0) -> Iterator[None]:
        """``SET NX PX`` with a random owner; released by a compare-and-delete script.
        Degraded: an in-process lock (other machines cannot be reached anyway)."""
        key, owner = self._k("lock", name), new_lease_id()
        if not self._call(lambda: self._take(key, owner, ttl, timeout), lambda m: False):
            with self._fallback.lock(name, ttl=ttl, timeout=timeout):
                yield None
            return
        try:
            yield None
        finally:
            self._call(lambda: self._scripts["unlock"](keys=[key], args=[owner]), lambda m: 0)

    def _take(self, key: str, owner: str, ttl: float, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        delay = 0.005
        while not self._redis.set(key, owner, nx=True, px=int(ttl * 1000)):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"lock {key!r} not acquired in {timeout} s")
            time.sleep(delay)  # another process holds it: nothing local to wait on
            delay = min(delay * 2, 0.1)
        return True

    def close(self) -> None:
        self._redis.close()
