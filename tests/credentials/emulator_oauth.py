"""Helpers for OAuth tests against the emulator's OAuth server."""

from __future__ import annotations

import dataclasses

import httpx

from modelwire.credentials import PooledCredential
from modelwire.credentials.oauth import emulator_flow, login


def oauth_count(emulator, key: str) -> int:
    """An OAuth counter of the emulator (``refresh_token``, ``invalid_grant``, ...)."""
    return emulator.requests()["counters"]["oauth"].get(key, 0)


def browser(url: str) -> None:
    """The user's browser: follows the authorize redirect to the loopback receiver."""
    httpx.get(url, follow_redirects=True, timeout=5)


def logged_in(emulator, *, now: float, expires_at: float | None = None,
              provider: str = "emu") -> PooledCredential:
    """A real login against the emulator (PKCE + loopback), as ``provider``."""
    cred = login(emulator_flow(emulator.base_url), open_url=browser, timeout=5, now=now)
    changes = {"provider": provider, "id": "login1"}
    if expires_at is not None:
        changes["expires_at"] = expires_at
    return dataclasses.replace(cred, **changes)
