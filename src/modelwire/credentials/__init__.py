"""Credential pools: several keys per provider, leased per request, cooled on failure,
shared between processes (SQLite) and machines (Redis). See :mod:`.pool`.

Owns credentials, pools, strategies, cooldowns, stores, discovery and OAuth. May import
the error tree, resilience (classification), provider data and config; never the Client.
"""

from __future__ import annotations

from .cooldown import Outcome
from .credential import AuthType, PooledCredential, Status, mask
from .pool import Clock, CredentialPool, Lease, SystemClock
from .stores import CredentialStore, default_store_url, open_store
from .strategies import Strategy

__all__ = [
    "AuthType",
    "Clock",
    "CredentialPool",
    "CredentialStore",
    "Lease",
    "Outcome",
    "PooledCredential",
    "Status",
    "Strategy",
    "SystemClock",
    "default_store_url",
    "mask",
    "open_store",
]
