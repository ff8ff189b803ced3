"""``CredentialPool``: the keys of one provider, leased per request, cooled on failure.

Facts in, decisions here: the Client reports what happened (``report(lease,
"rate_limited", error)``); the pool decides what that does to the credential
(:mod:`.cooldown`), and which credential the next lease gets (:mod:`.strategies`).
State lives in a store (:mod:`.stores`), so processes and machines agree.

::

    pool = CredentialPool.for_provider("openrouter")
    with pool.lease() as lease:                 # released on success, error, cancel
        response = send(request, api_key=lease.secret)
        pool.report(lease, "success")
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Self, cast

from ..errors import NoCredentialsError, PoolExhaustedError
from .cooldown import Mark, Outcome, decide
from .credential import PooledCredential
from .discovery import discover_env, env_vars_for, normalize_order
from .stores import CredentialStore, open_store
from .strategies import Strategy, order_candidates, parse_strategy

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["Clock", "CredentialPool", "Lease", "SystemClock"]

log = logging.getLogger("modelwire.credentials")

DEFAULT_LEASE_TTL = 600.0  # 10 minutes; long streams renew
DEFAULT_MAX_CONCURRENT = 1
TRANSIENT_REFRESH_COOLDOWN = 60.0  # an expired token whose refresh endpoint is down


class Clock(Protocol):
    def time(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Wall clock (epoch seconds) and real sleep."""

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class Lease:
    """One request's hold on a credential. A context manager (sync and async): the lease
    is released on exit whatever happened, including ``KeyboardInterrupt`` and task
    cancellation. ``release()`` is idempotent."""

    __slots__ = ("_pool", "credential", "expires_at", "id", "released")

    def __init__(self, pool: CredentialPool, credential: PooledCredential, lease_id: str,
                 expires_at: float) -> None:
        self._pool = pool
        self.credential = credential
        self.id = lease_id
        self.expires_at = expires_at
        self.released = False

    @property
    def secret(self) -> str:
        return self.credential.secret

    def renew(self, ttl: float | None = None) -> bool:
        """Extend the lease (long streams); ``False`` if it had already expired."""
        ttl = self._pool.lease_ttl if ttl is None else ttl
        now = self._pool.clock.time()
        ok = self._pool.store.renew(self._pool.provider, self.id, ttl=ttl, now=now)
        if ok:
            self.expires_at = now + ttl
        return ok

    def release(self) -> None:
        if not self.released:
            self.released = True
            self._pool.store.release(self._pool.provider, self.id)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Lease(id={self.id[:8]!r}, credential={self.credential!r}, released={self.released})"


class CredentialPool:
    """Credentials of one provider. Thread-safe and process-safe through its store."""

    def __init__(
        self,
        provider: str,
        *,
        store: CredentialStore | None = None,
        clock: Clock | None = None,
        strategy: Strategy | str | None = None,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        env_vars: Sequence[str] | None = None,
        environ: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
        refresher: Callable[[PooledCredential], Any] | None = None,
    ) -> None:
        self.provider = provider
        self.store = store if store is not None else open_store()
        self.clock: Clock = clock or SystemClock()
        self.strategy: Strategy = parse_strategy(strategy)
        self.max_concurrent = max(1, int(max_concurrent))
        self.lease_ttl = float(lease_ttl)
        self.env_vars = tuple(env_vars) if env_vars is not None else env_vars_for(provider)
        self._environ = environ
        self._rng = rng or random.Random()
        self._refresher = refresher
        self._env: dict[str, PooledCredential] = {}
        self._discover()

    # ------------------------------------------------------------------ construction
    @classmethod
    def for_provider(
        cls,
        provider: str,
        *,
        config: Config | Mapping[str, Any] | None = None,
        store: CredentialStore | None = None,
        clock: Clock | None = None,
        **kw: Any,
    ) -> CredentialPool:
        """A pool configured from ``config.credential_pool`` (store URL, per-provider
        strategy, ``max_concurrent``, ``lease_ttl``, ``prefix`` for Redis keys)."""
        section = _pool_section(config)
        if store is None:
            store = open_store(section.get("store"), prefix=section.get("prefix", "modelwire:"))
        strategies: Mapping[str, str] = section.get("strategies") or {}
        kw.setdefault("strategy", strategies.get(provider))
        if "max_concurrent" in section:
            kw.setdefault("max_concurrent", section["max_concurrent"])
        if "lease_ttl" in section:
            kw.setdefault("lease_ttl", section["lease_ttl"])
        return cls(provider, store=store, clock=clock, **kw)

    def _discover(self) -> None:
        found = discover_env(self.provider, self.store, self.env_vars, self._environ)
        self._env = {c.id: c for c in found}

    # ------------------------------------------------------------------ views
    @property
    def health(self) -> str:
        """``"ok"``, or ``"degraded"`` while a Redis store is unreachable (fail-open)."""
        return self.store.health

    def credentials(self) -> list[PooledCredential]:
        """Every credential this process can use, in priority order, secrets attached.

        Environment entries of *other* processes (variables not set here) are not
        listed and never touched."""
        stored = {c.id: c for c in self.store.list(self.provider)}
        missing = [cid for cid in self._env if cid not in stored]
        for cid in missing:  # removed from the store meanwhile: the variable still exists
            stored[cid] = self.store.insert_if_absent(self._env[cid])
        usable: list[PooledCredential] = []
        for cred in stored.values():
            if cred.is_env:
                env = self._env.get(cred.id)
                if env is None:
                    continue
                cred = dataclasses.replace(cred, secret=env.secret)
            elif not cred.secret:
                continue
            usable.append(cred)
        return normalize_order(usable, self.env_vars)

    def next_available_at(self, credentials: Sequence[PooledCredential] | None = None) -> float | None:
        """When the first cooling credential frees up; ``None`` if none ever will (all dead)."""
        now = self.clock.time()
        creds = self.credentials() if credentials is None else credentials
        if any(c.is_available(now) for c in creds):
            return now
        times = [c.cooldown_until for c in creds if c.status == "cooling" and c.cooldown_until]
        return min(times) if times else None

    # ------------------------------------------------------------------ leasing
    def lease(self, *, credential_id: str | None = None) -> Lease:
        """Lease a credential now. Never blocks on the concurrency cap (the least leased
        one is handed out); raises :class:`PoolExhaustedError` when all are cooling or
        dead, :class:`NoCredentialsError` when there are none."""
        for _ in range(3):  # a refresh that kills or cools a credential sends us round again
            creds = self.credentials()
            if not creds:
                raise self._no_credentials()
            now = self.clock.time()
            if credential_id is not None:
                creds = [c for c in creds if c.id == credential_id]
            ids, order = order_candidates(self.strategy, creds, self._rng)
            acquired = self.store.acquire(self.provider, ids, cap=self.max_concurrent,
                                          ttl=self.lease_ttl, now=now, order=order)
            if acquired is None:
                raise self._exhausted(creds)
            cred = next(c for c in creds if c.id == acquired.credential_id)
            cred = dataclasses.replace(cred, request_count=cred.request_count + 1)
            lease = Lease(self, cred, acquired.lease_id, acquired.expires_at)
            if not cred.needs_refresh(now) or self._refresh_lease(lease):
                return lease
            if cred.expires_at is not None and cred.expires_at > now:
                # refresh failed transiently, but the token is still valid for a while
                return lease
            lease.release()
            self._apply(cred, Mark("cooling", now + TRANSIENT_REFRESH_COOLDOWN, "refresh_failed",
                                   "token expired and its refresh failed; retrying soon"), now)
        raise self._exhausted(self.credentials())

    def wait_for_credential(self, deadline: float) -> Lease:
        """Opt-in: lease, waiting (injected clock) for the first cooldown to end, until
        ``deadline`` (epoch seconds on the pool's clock). Re-raises the exhaustion when
        nothing frees up in time, or nothing ever will."""
        while True:
            try:
                return self.lease()
            except PoolExhaustedError as exc:
                self.clock.sleep(self._wait_or_raise(exc, deadline))

    async def wait_for_credential_async(self, deadline: float) -> Lease:
        """:meth:`wait_for_credential` for event loops (sleeps with ``asyncio.sleep``)."""
        while True:
            try:
                return self.lease()
            except PoolExhaustedError as exc:
                await asyncio.sleep(self._wait_or_raise(exc, deadline))

    def _wait_or_raise(self, exc: PoolExhaustedError, deadline: float) -> float:
        """Seconds until the first credential frees, or ``exc`` re-raised when that is
        never, or after ``deadline``."""
        wake = exc.next_available_at
        now = self.clock.time()
        if wake is None or wake > deadline or now >= deadline:
            raise exc
        return max(0.0, wake - now) + 0.001

    # ------------------------------------------------------------------ outcomes
    def report(self, lease: Lease, outcome: Outcome, error: BaseException | Mapping[str, Any] | None = None) -> PooledCredential:
        """Record what a request with ``lease`` earned. ``error`` (a ProviderError, or a
        dict with ``headers``/``body``/``status``/``code``) supplies reset hints.

        ``auth_failed`` on an OAuth credential refreshes it first (under the store's
        cross-process lock); on success ``lease.credential`` carries the new token and
        nothing cools. Returns the credential's new state."""
        cred = lease.credential
        now = self.clock.time()
        if outcome == "auth_failed" and cred.auth_type == "oauth" and cred.refresh_token:
            if self._refresh_lease(lease, force=True):
                return lease.credential
            current = self.store.get(self.provider, cred.id)
            if current is not None and current.status == "dead":
                return current
        if decide(outcome, auth_type=cred.auth_type, now=now, sole=False, error=error) is None:
            return cred  # success, overload, server error: the credential's state is untouched
        sole = sum(1 for c in self.credentials() if c.status != "dead") <= 1
        mark = decide(outcome, auth_type=cred.auth_type, now=now, sole=sole, error=error)
        assert mark is not None
        return self._apply(cred, mark, now)

    def _apply(self, cred: PooledCredential, mark: Mark, now: float) -> PooledCredential:
        updated = self.store.mark(self.provider, cred.id, mark, now) or cred
        if mark.status == "dead":
            log.warning("credential %s (%s, %s) is dead: %s", cred.id, cred.label or cred.source,
                        cred.masked, mark.reason or mark.code)
        elif mark.status == "cooling":
            log.info("credential %s (%s, %s) cooling for %.0f s (%s)", cred.id,
                     cred.label or cred.source, cred.masked,
                     (updated.cooldown_until or now) - now, mark.code)
        return dataclasses.replace(updated, secret=cred.secret) if cred.is_env else updated

    # ------------------------------------------------------------------ OAuth
    def _refresh_lease(self, lease: Lease, *, force: bool = False) -> bool:
        from .oauth import refresh_credential

        fresh = refresh_credential(
            self.store, lease.credential, now=self.clock.time, refresher=self._refresher,
            force=force,
        )
        if fresh is None or fresh.status == "dead":
            return False
        lease.credential = fresh
        return True

    # ------------------------------------------------------------------ management
    def add(self, secret: str, *, label: str = "", priority: int = 0, base_url: str | None = None,
            cred_id: str | None = None, **fields: Any) -> PooledCredential:
        """Add a manual credential (stored in the state store, file mode 0600)."""
        import uuid

        secret = secret.strip()
        if not secret:
            raise ValueError("empty secret")
        cred = PooledCredential(provider=self.provider, id=cred_id or uuid.uuid4().hex[:8],
                                label=label, priority=priority, source=fields.pop("source", "manual"),
                                secret=secret, base_url=base_url, status_at=self.clock.time(),
                                **fields)
        self.store.put(cred)
        return cred

    def find(self, ref: str) -> PooledCredential:
        """A credential by id, or by label (unique), among those of this provider."""
        from ..errors import CredentialError

        creds = self.store.list(self.provider)
        by_id = [c for c in creds if c.id == ref]
        matches = by_id or [c for c in creds if c.label == ref]
        if not matches:
            raise CredentialError(f"no {self.provider} credential with id or label {ref!r}")
        if len(matches) > 1:
            raise CredentialError(f"label {ref!r} names {len(matches)} {self.provider} "
                                  "credentials; use the id")
        return matches[0]

    def remove(self, ref: str) -> PooledCredential:
        cred = self.find(ref)
        self.store.delete(self.provider, cred.id)
        return cred

    def reset(self, ref: str) -> PooledCredential:
        """Clear a credential's cooldown and last error (a dead one comes back too)."""
        cred = self.find(ref)
        return self.store.mark(self.provider, cred.id, Mark("ok"), self.clock.time()) or cred

    # ------------------------------------------------------------------ errors
    def _no_credentials(self) -> NoCredentialsError:
        hint = (f"set {' or '.join(self.env_vars)} or " if self.env_vars else "")
        return NoCredentialsError(
            f"no credential for {self.provider}: {hint}run "
            f"`modelwire creds add --provider {self.provider}`"
        )

    def _exhausted(self, creds: Sequence[PooledCredential]) -> PoolExhaustedError:
        now = self.clock.time()
        when = self.next_available_at(creds)
        if when is None:
            return PoolExhaustedError(
                f"every {self.provider} credential is dead (revoked or login expired): "
                f"run `modelwire auth login {self.provider}` or `modelwire creds add`",
                next_available_at=None,
            )
        return PoolExhaustedError(
            f"all {len(creds)} {self.provider} credential(s) are cooling; the first frees "
            f"in {max(0.0, when - now):.0f} s",
            next_available_at=when,
        )


def _pool_section(config: Config | Mapping[str, Any] | None) -> dict[str, Any]:
    """``credential_pool`` of a :class:`~modelwire.config.Config` or of a plain mapping,
    the unset keys left out."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        section = cast("Mapping[str, Any] | None", config.get("credential_pool"))
        return {k: v for k, v in (section or {}).items() if v is not None}
    # CredentialPoolConfig: its mappings are read-only proxies, so its fields are read
    # directly (asdict() would try to deep-copy them)
    pool: object = config.credential_pool
    if isinstance(pool, Mapping):
        return {k: v for k, v in cast("Mapping[str, Any]", pool).items() if v is not None}
    if not dataclasses.is_dataclass(pool):
        return {}
    return {f.name: getattr(pool, f.name) for f in dataclasses.fields(pool)
            if getattr(pool, f.name) is not None}
