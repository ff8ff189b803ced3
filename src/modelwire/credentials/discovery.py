"""Credentials from the environment, and the order a pool tries them in.

An environment key is never written to a store. Its entry exists while the
variable is set in the process using the pool; its *state* (cooldown, counts,
leases) is stored under ``env-<fingerprint>``, an HMAC-SHA256 of the secret keyed
with a random salt kept in the store. Processes holding the same key therefore
share its state, the store never learns the key, and a process without the
variable deletes nothing (Hermes #9331: pruning env entries a process did not
see wiped other processes' state).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable, Mapping, Sequence

from .credential import PooledCredential
from .stores import CredentialStore

__all__ = ["discover_env", "env_vars_for", "fingerprint", "normalize_order"]


def env_vars_for(provider: str, mapping: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
    """The key variables of ``provider``: from ``mapping`` if given, else the catalog row."""
    if mapping is not None and provider in mapping:
        return tuple(mapping[provider])
    try:
        from ..providers.catalog import CATALOG
    except ImportError:  # catalog not available in this build: no env discovery
        return ()
    profile = CATALOG.get(provider)
    return tuple(profile.key_env) if profile is not None else ()


def fingerprint(secret: str, salt: bytes) -> str:
    """A keyed, one-way id for a secret: 16 hex chars of HMAC-SHA256(salt, secret)."""
    return hmac.new(salt, secret.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def discover_env(
    provider: str,
    store: CredentialStore,
    env_vars: Iterable[str],
    environ: Mapping[str, str] | None = None,
) -> list[PooledCredential]:
    """The environment credentials of ``provider``, with their shared state from ``store``.

    Registers the state record (no secret) on first sight; returns credentials that
    carry the secret (in memory only). Two variables holding the same key are one
    credential (the first variable names it).
    """
    environ = os.environ if environ is None else environ
    salt: bytes | None = None
    found: dict[str, PooledCredential] = {}
    for index, name in enumerate(env_vars):
        secret = (environ.get(name) or "").strip()
        if not secret:
            continue
        salt = salt or store.salt()
        cred_id = "env-" + fingerprint(secret, salt)
        if cred_id in found:
            continue
        seed = PooledCredential(provider=provider, id=cred_id, label=name, source=f"env:{name}",
                                priority=index)
        stored = store.insert_if_absent(seed)
        found[cred_id] = _with_secret(stored, secret)
    return list(found.values())


def _with_secret(stored: PooledCredential, secret: str) -> PooledCredential:
    from dataclasses import replace

    return replace(stored, secret=secret)


def normalize_order(
    credentials: Iterable[PooledCredential], env_vars: Sequence[str] = ()
) -> list[PooledCredential]:
    """Manual entries first (by their priority), then OAuth logins, then environment
    keys in the catalog's variable order; ties by label then id (stable across processes)."""
    env_rank = {name: i for i, name in enumerate(env_vars)}

    def key(c: PooledCredential) -> tuple[int, int, str, str]:
        if c.source == "manual" or c.source.startswith("manual:"):
            return (0, c.priority, c.label, c.id)
        if c.source.startswith("oauth:"):
            return (1, c.priority, c.label, c.id)
        if c.is_env:
            return (2, env_rank.get(c.env_var or "", len(env_rank)), c.label, c.id)
        return (3, c.priority, c.label, c.id)

    return sorted(credentials, key=key)
