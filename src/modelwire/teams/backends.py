"""Opening the backends the configuration names (``teams.store``, ``teams.limiter``)."""

from __future__ import annotations

import os
from typing import Any

from ..errors import ConfigError
from .limiter import LocalLimiter
from .store import KeyStore, Limiter

__all__ = ["open_limiter", "open_store", "store_url"]


def store_url(config: Any) -> str:
    """``teams.store``; unset: the credential store's SQLite file (``credential_pool.store``
    when it is one, else ``$XDG_DATA_HOME/modelwire/state.db``)."""
    teams = getattr(config, "teams", None)
    url = getattr(teams, "store", None)
    if url:
        return str(url)
    pool = getattr(getattr(config, "credential_pool", None), "store", None)
    if pool and str(pool).startswith("sqlite:"):
        return str(pool)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return "sqlite:///" + os.path.join(data, "modelwire", "state.db")


def _sqlite_path(url: str) -> str:
    rest = url[len("sqlite:"):]
    rest = rest[3:] if rest.startswith("///") else rest.removeprefix("//")
    return os.path.expanduser(os.path.expandvars(rest))


def open_store(url: str) -> KeyStore:
    """The ``KeyStore`` at ``url`` (``sqlite:///path``, ``postgresql://...``)."""
    if url.startswith("sqlite:"):
        from .sqlite import SQLiteKeyStore

        return SQLiteKeyStore(_sqlite_path(url))
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from .postgres import PostgresKeyStore
        except ImportError as exc:
            raise ConfigError(f"teams.store {url.split('@')[-1]!r}: PostgreSQL needs the "
                              f"'postgres' extra (pip install 'modelwire[postgres]'): {exc}") from None
        store: KeyStore = PostgresKeyStore(url)
        return store
    raise ConfigError(f"teams.store: expected sqlite:///path or postgresql://..., got {url!r}")


def open_limiter(url: str | None, store: KeyStore, *, prefix: str = "modelwire:",
                 workers: int = 1) -> Limiter:
    """The ``Limiter`` at ``url``. None: counters in this process, seeded from ``store``,
    when it is the only one (``workers`` 1); in a SQLite store's file for ``workers`` > 1
    (every worker sees the same counts). ``sqlite``: in the SQLite store's file always."""
    from .sqlite import SQLiteKeyStore

    if url == "sqlite" or (not url and workers > 1 and isinstance(store, SQLiteKeyStore)):
        if not isinstance(store, SQLiteKeyStore):
            raise ConfigError("teams.limiter: sqlite keeps the counters in the store's SQLite "
                              "file, but teams.store is not SQLite: use redis://")
        from .sqlite_limiter import SQLiteLimiter

        return SQLiteLimiter(store.path)
    if not url:
        return LocalLimiter(store)
    if url.startswith(("redis://", "rediss://")):
        try:
            from .redis_limiter import RedisLimiter
        except ImportError as exc:
            raise ConfigError("teams.limiter: Redis needs the redis package "
                              f"(pip install 'redis>=5.0'): {exc}") from None
        limiter: Limiter = RedisLimiter(url, store, prefix=prefix)
        return limiter
    raise ConfigError(f"teams.limiter: expected redis://host:port/db or sqlite, got {url!r}")
