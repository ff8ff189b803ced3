"""OAuth: PKCE login (loopback and pasted code), refresh ahead of expiry and on 401,
single-use refresh tokens under a cross-process lock, invalid_grant → dead.

The OAuth server is the emulator's (``/oauth/authorize``, ``/oauth/token``, single-use
rotating refresh tokens, counters in ``/__emulator/requests``)."""

from __future__ import annotations

import base64
import hashlib
import multiprocessing
import urllib.parse

import httpx
import pytest
from credentials.emulator_oauth import browser, logged_in, oauth_count

from modelwire.credentials import CredentialPool, PooledCredential
from modelwire.credentials.oauth import (
    FLOWS,
    OAuthError,
    TokenSet,
    authorization_url,
    emulator_flow,
    login,
    pkce_pair,
    refresh_tokens,
)
from modelwire.credentials.stores import open_store
from modelwire.errors import PoolExhaustedError


def test_pkce_pair_is_s256():
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = hashlib.sha256(verifier.encode()).digest()
    assert challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert pkce_pair()[0] != verifier


def test_anthropic_consumer_oauth_is_not_offered():
    assert "anthropic" not in FLOWS
    assert FLOWS["openrouter"].kind == "openrouter_key"


def test_openrouter_authorize_url_carries_challenge_and_state_in_callback():
    url = authorization_url(FLOWS["openrouter"], redirect_uri="http://127.0.0.1:5555/callback",
                            challenge="CH", state="ST")
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert url.startswith("https://openrouter.ai/auth?")
    assert q == {"callback_url": "http://127.0.0.1:5555/callback?state=ST",
                 "code_challenge": "CH", "code_challenge_method": "S256"}


def test_login_with_loopback_redirect(emu, clock):
    before = oauth_count(emu, "authorization_code")
    cred = login(emulator_flow(emu.base_url), open_url=browser, timeout=5, now=clock.t)
    assert cred.auth_type == "oauth" and cred.source == "oauth:emulator"
    assert cred.secret.startswith("emu-at-") and cred.refresh_token.startswith("emu-rt-")
    assert cred.expires_at == clock.t + 3600
    assert oauth_count(emu, "authorization_code") == before + 1
    assert cred.secret not in repr(cred) and cred.refresh_token not in repr(cred)


def test_login_with_pasted_redirect_url(emu, clock):
    seen: list[str] = []

    def show(url: str) -> None:
        seen.append(url)

    def paste() -> str:
        return httpx.get(seen[0], follow_redirects=False, timeout=5).headers["location"]

    cred = login(emulator_flow(emu.base_url), open_url=show, paste=paste, now=clock.t)
    assert cred.secret.startswith("emu-at-")


def test_login_rejects_a_wrong_state(emu, clock):
    def paste() -> str:
        return "http://127.0.0.1/callback?code=abc&state=forged"

    with pytest.raises(OAuthError, match="state"):
        login(emulator_flow(emu.base_url), open_url=lambda url: None, paste=paste, now=clock.t)


def test_token_is_refreshed_two_minutes_before_expiry(emu, clock, sqlite_store):
    old = logged_in(emu, now=clock.t, expires_at=clock.t + 100)  # inside the 120 s window
    sqlite_store.put(old)
    before = oauth_count(emu, "refresh_token")
    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={})
    with pool.lease() as lease:
        assert lease.secret != old.secret
        assert lease.credential.expires_at == clock.t + 3600
    assert oauth_count(emu, "refresh_token") == before + 1
    with pool.lease() as lease:  # fresh now: no second refresh
        pass
    assert oauth_count(emu, "refresh_token") == before + 1


def test_401_refreshes_and_the_same_lease_continues(emu, clock, sqlite_store):
    old = logged_in(emu, now=clock.t)
    sqlite_store.put(old)
    before = oauth_count(emu, "refresh_token")
    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={})
    with pool.lease() as lease:
        state = pool.report(lease, "auth_failed")
        assert state.status == "ok"
        assert lease.secret != old.secret and lease.secret.startswith("emu-at-")
    assert oauth_count(emu, "refresh_token") == before + 1


def test_invalid_grant_marks_dead_with_a_login_hint(emu, clock, sqlite_store):
    old = logged_in(emu, now=clock.t)
    # someone else spent the single-use refresh token (a leak, or a tool without our lock)
    refresh_tokens(emu.base_url + "/oauth/token", old.refresh_token, "modelwire")
    sqlite_store.put(old)
    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={})
    with pool.lease() as lease:
        state = pool.report(lease, "auth_failed")
    assert state.status == "dead"
    assert "modelwire auth login emu" in state.last_error_reason
    assert state.last_error_code == "invalid_grant"
    with pytest.raises(Exception, match="dead"):
        pool.lease()


def test_invalid_grant_resyncs_once_from_the_store(clock, sqlite_store):
    cred = PooledCredential(provider="emu", id="x", auth_type="oauth", source="oauth:emulator",
                            secret="at-old-000000000000", refresh_token="rt-old",
                            expires_at=clock.t + 3600)
    sqlite_store.put(cred)
    spent: list[str] = []

    def refresher(c: PooledCredential) -> TokenSet:
        spent.append(c.refresh_token)
        if c.refresh_token == "rt-old":
            # another tool (outside our lock) rotated the pair meanwhile
            sqlite_store.patch("emu", "x", {"refresh_token": "rt-newer"})
            raise OAuthError("reused", error="invalid_grant")
        return TokenSet(access_token="at-new-000000000000", refresh_token="rt-next", expires_in=60)

    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={},
                          refresher=refresher)
    with pool.lease() as lease:
        state = pool.report(lease, "auth_failed")
    assert spent == ["rt-old", "rt-newer"]
    assert state.status == "ok" and lease.secret == "at-new-000000000000"


def test_transient_refresh_failure_cools_instead_of_killing(clock, sqlite_store):
    cred = PooledCredential(provider="emu", id="x", auth_type="oauth", source="oauth:emulator",
                            secret="at-old-000000000000", refresh_token="rt-old",
                            expires_at=clock.t + 3600)
    sqlite_store.put(cred)

    def refresher(c: PooledCredential) -> TokenSet:
        raise OAuthError("token endpoint unreachable: ConnectError")

    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={},
                          refresher=refresher)
    with pool.lease() as lease:
        state = pool.report(lease, "auth_failed")
    assert state.status == "cooling"


# ---------------------------------------------------------------- the refresh race
def _racer(url: str, barrier, results) -> None:  # runs in a forked process
    store = open_store(url, shared=False)
    pool = CredentialPool("emu", store=store, env_vars=(), environ={}, max_concurrent=8)
    with pool.lease() as lease:
        before = lease.secret
        barrier.wait()  # all 8 hold the old token, then all get a 401 at once
        state = pool.report(lease, "auth_failed")
        results.put((before, lease.secret, state.status))


@pytest.mark.timeout(60)
def test_eight_processes_hit_401_at_once_and_refresh_exactly_once(emu, tmp_path):
    url = f"sqlite:///{tmp_path}/state.db"
    seed = open_store(url, shared=False)
    old = logged_in(emu, now=0.0, expires_at=9_999_999_999.0)
    seed.put(old)
    refreshed, rejected = oauth_count(emu, "refresh_token"), oauth_count(emu, "invalid_grant")
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(url, barrier, results)) for _ in range(8)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=10)
    assert oauth_count(emu, "refresh_token") == refreshed + 1  # exactly one refresh
    assert oauth_count(emu, "invalid_grant") == rejected  # no process replayed a token
    new = seed.get("emu", old.id)
    assert new.status == "ok" and new.secret != old.secret
    assert all(before == old.secret for before, _, _ in outcomes)
    assert all(after == new.secret for _, after, _ in outcomes)
    assert all(status == "ok" for _, _, status in outcomes)


def test_refresh_race_on_redis(emu, redis_url):
    from modelwire.credentials.stores.redis import RedisStore

    store = RedisStore(redis_url, prefix="race:", timeout=2.0)
    old = logged_in(emu, now=0.0, expires_at=9_999_999_999.0)
    store.put(old)
    refreshed = oauth_count(emu, "refresh_token")
    pools = [CredentialPool("emu", store=RedisStore(redis_url, prefix="race:", timeout=2.0),
                            env_vars=(), environ={}, max_concurrent=8) for _ in range(4)]
    leases = [p.lease() for p in pools]
    for pool, lease in zip(pools, leases):
        assert pool.report(lease, "auth_failed").status == "ok"
        lease.release()
    assert oauth_count(emu, "refresh_token") == refreshed + 1
    assert len({lease.secret for lease in leases}) == 1
    assert store.get("emu", old.id).secret == leases[0].secret


def _expiring(clock, expires_at: float) -> PooledCredential:
    return PooledCredential(provider="emu", id="x", auth_type="oauth", source="oauth:emulator",
                            secret="at-old-000000000000", refresh_token="rt-old",
                            expires_at=expires_at)


def _down(c: PooledCredential) -> TokenSet:
    raise OAuthError("token endpoint unreachable: ConnectError")


def test_refresh_endpoint_down_still_valid_token_is_used(clock, sqlite_store):
    sqlite_store.put(_expiring(clock, clock.t + 60))  # refresh due, token still valid
    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={},
                          refresher=_down)
    with pool.lease() as lease:
        assert lease.secret == "at-old-000000000000"


def test_refresh_endpoint_down_expired_token_cools_briefly(clock, sqlite_store):
    sqlite_store.put(_expiring(clock, clock.t - 1))
    pool = CredentialPool("emu", store=sqlite_store, clock=clock, env_vars=(), environ={},
                          refresher=_down)
    with pytest.raises(PoolExhaustedError) as info:
        pool.lease()
    assert info.value.next_available_at == clock.t + 60
    assert sqlite_store.get("emu", "x").last_error_code == "refresh_failed"
