"""Where credential state lives: one interface, three stores.

- :class:`~.memory.MemoryStore` — in-process (unit tests, or a throwaway pool);
- :class:`~.sqlite.SQLiteStore` — the default, one file per machine, shared by its
  processes (``sqlite:///~/.local/share/modelwire/state.db``);
- :class:`~.redis.RedisStore` — several machines (``redis://host:6379/0``).

Every operation is atomic in every store. ``now`` is passed in (the pool's
injected clock), so cooldowns and lease expiry follow the same clock as the policy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from ..cooldown import Mark
from ..credential import PooledCredential
from ._ops import Acquired, Health, Order

__all__ = [
    "Acquired",
    "CredentialStore",
    "Health",
    "Order",
    "default_store_url",
    "open_store",
]



@runtime_checkable
class CredentialStore(Protocol):
    """The operations a pool needs. All atomic; none raises for a missing id."""

    health: Health
    url: str

    def salt(self) -> bytes:
        """A random per-store salt for env-secret fingerprints (created on first use)."""
        ...

    def list(self, provider: str | None = None) -> list[PooledCredential]: ...

    def get(self, provider: str, cred_id: str) -> PooledCredential | None: ...

    def put(self, cred: PooledCredential) -> None:
        """Insert or replace the whole record (env credentials are stored without secret)."""
        ...

    def insert_if_absent(self, cred: PooledCredential) -> PooledCredential:
        """Store ``cred`` unless its id exists; return what the store holds."""
        ...

    def delete(self, provider: str, cred_id: str) -> bool: ...

    def patch(self, provider: str, cred_id: str, fields: Mapping[str, Any]) -> PooledCredential | None:
        """Change some fields of a record atomically; ``None`` if it does not exist."""
        ...

    def mark(self, provider: str, cred_id: str, mark: Mark, now: float) -> PooledCredential | None:
        """Apply a status mark (cooldown = max(existing, new); dead stays dead)."""
        ...

    def acquire(
        self, provider: str, candidates: Sequence[str], *, cap: int, ttl: float, now: float,
        order: Order,
    ) -> Acquired | None:
        """Choose an available credential among ``candidates``, lease it, count the request."""

    def renew(self, provider: str, lease_id: str, *, ttl: float, now: float) -> bool: ...

    def release(self, provider: str, lease_id: str) -> None: ...

    def lease_counts(self, provider: str, now: float) -> dict[str, int]: ...

    def lock(self, name: str, *, ttl: float = 30.0, timeout: float = 30.0) -> AbstractContextManager[None]:
        """A cross-process mutual exclusion (OAuth refresh); raises TimeoutError."""
        ...

    def close(self) -> None: ...


def default_store_url() -> str:
    """``sqlite:///$XDG_DATA_HOME/modelwire/state.db`` (``~/.local/share`` when unset)."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return "sqlite:///" + os.path.join(data, "modelwire", "state.db")


_OPEN: dict[str, CredentialStore] = {}


def open_store(url: str | None = None, *, prefix: str = "modelwire:", shared: bool = True) -> CredentialStore:
    """Open a store by URL: ``memory://``, ``sqlite:///path`` (``~`` and ``$VARS`` expanded),
    ``redis://host:port/db``. ``None`` → :func:`default_store_url`.

    With ``shared`` (default) one store object per URL is reused in this process.
    """
    from ...errors import ConfigError

    url = url or default_store_url()
    key = f"{url}|{prefix}"
    if shared and key in _OPEN:
        return _OPEN[key]
    store: CredentialStore
    if url.startswith("memory:"):
        from .memory import MemoryStore

        store = MemoryStore()
    elif url.startswith("sqlite:"):
        from .sqlite import SQLiteStore

        store = SQLiteStore(sqlite_path(url))
    elif url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisStore

        store = RedisStore(url, prefix=prefix)
    else:
        raise ConfigError(
            f"credential_pool.store: unknown store URL {url!r} "
            "(expected memory://, sqlite:///path or redis://host:port/db)"
        )
    if shared:
        _OPEN[key] = store
    return store


def sqlite_path(url: str) -> str:
    """``sqlite:///~/x.db`` → ``/home/me/x.db``; ``sqlite:////abs`` → ``/abs``; vars expanded."""
    rest = url[len("sqlite:"):]
    if rest.startswith("///"):
        rest = rest[3:]
    elif rest.startswith("//"):
        rest = rest[2:]
    return os.path.expanduser(os.path.expandvars(rest))
