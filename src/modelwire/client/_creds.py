"""Where the Client's key comes from, behind one small interface.

* :class:`FixedKey`: ``api_key=`` given to the Client (bypasses any pool), or
  no key at all (local servers, the emulator).
* :class:`EnvKey`: the profile's key variables, read directly, in priority order.
* :class:`PoolKey`: a lease per request from :class:`modelwire.credentials.CredentialPool`,
  with outcomes reported back (success, cool/rotate, refresh on 401 for OAuth) and
  the lease released in every case.

Each ``acquire()`` returns a :class:`HeldCredential` (the secret, a printable label, and
what the ladder needs to know: pooled? OAuth? another one free?).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from ..errors import PoolExhaustedError

if TYPE_CHECKING:
    from ..config import Config
    from ..credentials import CredentialPool
    from ..providers.profile import ProviderProfile
    from ..resilience.classify import Failure

__all__ = ["CredentialHealth", "CredentialSource", "CredentialState", "EnvKey", "FixedKey", "HeldCredential", "PoolKey", "source_for"]


@dataclass(frozen=True, slots=True)
class HeldCredential:
    """A credential held for one request (:meth:`Upstream.lease
    <modelwire.client.Upstream.lease>`): the secret (never in the repr), a printable
    ``label`` (masked), whether it came from a pool and is an OAuth token, and the pool's
    lease when pooled. Give it back with :meth:`~modelwire.client.Upstream.release`."""

    secret: str | None = field(repr=False)
    label: str | None = None  # printable (masked), for Attempt records
    pooled: bool = False
    oauth: bool = False
    lease: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class CredentialState:
    """One credential of a pool as a status page shows it: its ``label`` (the name the
    user gave it, or the variable it came from), ``masked`` (``sk-…abcd``: never the
    secret), ``state`` (``ok``, ``cooling``, ``dead``), ``cooling_for`` (seconds left of
    its cooldown; 0 when not cooling), ``reason`` (the last error's code, as the pool
    recorded it: ``rate_limit_exceeded``, ``429``...) and ``detail`` (its message, keys
    redacted), both ``None`` for a credential in use."""

    label: str
    masked: str
    state: str
    cooling_for: float = 0.0
    reason: str | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class CredentialHealth:
    """The state of an upstream's credential pool, in counts (never secrets).

    ``store``: ``ok``, or what the credential store reports (a Redis store that does not
    answer: the pool runs on local state). ``count``: credentials in the pool.
    ``usable``: one of them can be leased now. ``available_in``: seconds until the first
    cooling one frees up (``None`` when none is usable and every one is dead, or when
    one is usable now). ``states``: credentials by state (``ok``, ``cooling``, ``dead``).
    ``pool``: names the pool (provider and store), the same for models sharing one.
    ``credentials``: each one's :class:`CredentialState`, in the pool's order."""

    store: str
    count: int
    usable: bool
    available_in: float | None = None
    states: tuple[tuple[str, int], ...] = ()
    pool: str = ""
    credentials: tuple[CredentialState, ...] = ()


class CredentialSource(Protocol):
    def acquire(self) -> HeldCredential: ...
    def succeeded(self, held: HeldCredential) -> None: ...
    def failed(self, held: HeldCredential, failure: Failure, action: str) -> None: ...
    def release(self, held: HeldCredential) -> None: ...
    def other_available(self, held: HeldCredential) -> bool: ...
    def ready_in(self) -> float | None: ...
    def refresh(self, held: HeldCredential, error: BaseException | None = None) -> bool: ...
    def renew_every(self, held: HeldCredential) -> float | None: ...
    def renew(self, held: HeldCredential) -> None: ...
    def health(self) -> CredentialHealth | None: ...


class FixedKey:
    """One secret (or none) for every request."""

    def __init__(self, secret: str | None, label: str | None = None) -> None:
        self._held = HeldCredential(secret, label)

    def acquire(self) -> HeldCredential:
        return self._held

    def succeeded(self, held: HeldCredential) -> None:
        pass

    def failed(self, held: HeldCredential, failure: Failure, action: str) -> None:
        pass

    def release(self, held: HeldCredential) -> None:
        pass

    def other_available(self, held: HeldCredential) -> bool:
        return False

    def ready_in(self) -> float | None:
        return None  # one key: nobody knows better than the server's hint

    def refresh(self, held: HeldCredential, error: BaseException | None = None) -> bool:
        return False

    def renew_every(self, held: HeldCredential) -> float | None:
        return None  # nothing leased, nothing to renew

    def renew(self, held: HeldCredential) -> None:
        pass

    def health(self) -> CredentialHealth | None:
        return None  # no pool: nothing cools


class EnvKey(FixedKey):
    """The first set variable among the profile's key variables, read at each request
    (a key exported after the Client was made is picked up)."""

    def __init__(self, provider: str, names: tuple[str, ...], optional: bool = False) -> None:
        super().__init__(None)
        self._provider = provider
        self._names = names
        self._optional = optional
        self._name = ""  # the variable self._held's secret came from

    def acquire(self) -> HeldCredential:
        for name in self._names:
            value = os.environ.get(name)
            if value:
                held = self._held
                if value != held.secret or name != self._name:  # the record of the last key, unless it changed
                    held = self._held = HeldCredential(value, f"env:{name}")
                    self._name = name
                return held
        if self._optional or not self._names:
            return HeldCredential(None)
        from ..errors import NoCredentialsError

        raise NoCredentialsError(
            f"no API key for {self._provider}: set {' or '.join(self._names)}, or give the "
            "model its own key (api_key=, or modelwire.Model(..., api_key_env=) in fallback=)"
        )


# the ladder's failure kinds → the pool's outcome vocabulary (credentials.cooldown.Outcome)
_OUTCOMES = {"rate_limit": "rate_limited", "billing": "billing", "auth": "auth_failed"}


class PoolKey:
    """A lease per request from a credential pool; outcomes reported, lease always released.

    The pool is opened on first use (it discovers keys from the environment and
    opens its store), so constructing a Client stays cheap.
    """

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._pool: Any = None

    @property
    def pool(self) -> Any:
        if self._pool is None:
            self._pool = self._factory()
        return self._pool

    def acquire(self) -> HeldCredential:
        try:
            lease = self.pool.lease()
        except PoolExhaustedError as exc:
            # every key is cooling: say how long until the first frees, on the pool's
            # own clock, so the ladder can wait for it (or fall back if that is long)
            wake = exc.next_available_at
            if wake is not None:
                exc.retry_after = max(0.0, wake - self.pool.clock.time())  # type: ignore[attr-defined]
            raise
        cred = lease.credential
        label = cred.label or cred.source or cred.id
        return HeldCredential(lease.secret, str(label), True, cred.auth_type == "oauth", lease)

    def succeeded(self, held: HeldCredential) -> None:
        if held.lease is not None:
            self.pool.report(held.lease, "success")

    def failed(self, held: HeldCredential, failure: Failure, action: str) -> None:
        # the pool owns the cooldown rules: it hears about every credential fault
        # (rate limit, quota, auth on this key) whatever the ladder does next. A
        # refresh reports the 401 itself (the pool refreshes under its lock).
        outcome = _OUTCOMES.get(failure.kind)
        if outcome is None or not failure.credential_fault or action == "refresh":
            return
        if held.lease is not None:
            self.pool.report(held.lease, outcome, failure.error)

    def release(self, held: HeldCredential) -> None:
        if held.lease is not None:
            held.lease.release()

    def ready_in(self) -> float | None:
        """Seconds until a key of the pool is usable (0: one is now; None: all dead)."""
        pool = self.pool
        creds = pool.credentials()
        now = pool.clock.time()
        if any(c.is_available(now) for c in creds):
            return 0.0  # (next_available_at reads the clock again: its "now" is later)
        wake = pool.next_available_at(creds)
        return None if wake is None else max(0.0, wake - now)

    def other_available(self, held: HeldCredential) -> bool:
        pool = self.pool
        current = getattr(getattr(held.lease, "credential", None), "id", None)
        now = pool.clock.time()
        return any(c.id != current and c.is_available(now) for c in pool.credentials())

    def renew_every(self, held: HeldCredential) -> float | None:
        """Seconds between lease renewals during a long stream (half the lease TTL), so
        a stream longer than the TTL keeps its lease; a crashed process's still expires."""
        return float(self.pool.lease_ttl) / 2 if held.lease is not None else None

    def renew(self, held: HeldCredential) -> None:
        if held.lease is not None:
            held.lease.renew()

    def health(self) -> CredentialHealth | None:
        pool = self._pool
        if pool is None:  # not opened yet: nothing to report, and nothing opened to say so
            return None
        listed = pool.credentials()
        now = pool.clock.time()
        usable = any(c.is_available(now) for c in listed)
        free_at = None if usable or not listed else pool.next_available_at(listed)
        states: dict[str, int] = {}
        each: list[CredentialState] = []
        for cred in listed:
            state = cred.effective_status(now)
            states[state] = states.get(state, 0) + 1
            each.append(CredentialState(
                str(cred.label or cred.source or cred.id), cred.masked, state,
                cred.cooldown_remaining(now) if state == "cooling" else 0.0,
                cred.last_error_code if state != "ok" else None,
                cred.last_error_reason if state != "ok" else None))
        return CredentialHealth(pool.health, len(listed), usable,
                                None if free_at is None else max(0.0, free_at - now),
                                tuple(sorted(states.items())), f"{pool.provider}@{pool.store.url}",
                                tuple(each))

    def refresh(self, held: HeldCredential, error: BaseException | None = None) -> bool:
        """Report the 401: the pool refreshes an OAuth credential (single-use refresh
        tokens, cross-process lock). True when a new token came back."""
        lease = held.lease
        if lease is None:
            return False
        before = lease.secret
        cred = self.pool.report(lease, "auth_failed", error)
        return lease.secret != before and getattr(cred, "status", "ok") != "dead"


# pools a caller manages (a gateway shares its pools with every client): provider -> pool,
# or a callable answering for a provider (None: no pool of its own for that one)
Pools: TypeAlias = "Mapping[str, CredentialPool] | Callable[[str], CredentialPool | None]"
# the loaded config, or a callable loading it when a pool first needs it
ConfigSource: TypeAlias = "Config | Callable[[], Config | None] | None"


def source_for(
    profile: ProviderProfile,
    *,
    api_key: str | None,
    api_key_env: tuple[str, ...],
    config: ConfigSource,
    pools: Pools | None = None,
) -> CredentialSource:
    """The credential source for one resolved model (see the module docstring).

    ``pools``: pools the caller manages (a gateway shares its pools with every
    client): a mapping provider → pool, or a callable returning a pool or None.
    """
    if api_key is not None:
        return FixedKey(api_key, "api_key")
    given = _given_pool(pools, profile.name)
    if given is not None:
        return PoolKey(lambda: given)
    if profile.emulated:
        # the emulator accepts any non-empty key unless it was started with --keys
        secret = next((os.environ[n] for n in api_key_env if os.environ.get(n)), None)
        return FixedKey(secret or "modelwire-emulator", "emulator")
    names = tuple(api_key_env) or tuple(profile.key_env)
    optional = profile.local or profile.auth_style == "none"
    custom_env = bool(api_key_env) and tuple(api_key_env) != tuple(profile.key_env)
    if custom_env or optional or not names or profile.name == "custom":
        # a config entry's own variable, a local server or a custom endpoint: read
        # the variable directly, no pool
        return EnvKey(profile.name, names, optional=optional or not names)
    return PoolKey(lambda: _open_pool(profile.name, names, config))


def _given_pool(pools: Pools | None, provider: str) -> CredentialPool | None:
    if pools is None:
        return None
    if callable(pools):
        return pools(provider)
    return pools.get(provider)


def _open_pool(provider: str, names: tuple[str, ...], config: ConfigSource) -> CredentialPool:
    from ..credentials import CredentialPool

    # config: the loaded Config (pool store URL, strategies), or a callable loading it
    loaded = config() if callable(config) else config
    return CredentialPool.for_provider(provider, config=loaded, env_vars=names)
