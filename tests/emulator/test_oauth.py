"""OAuth: authorization code with PKCE S256, single-use codes and refresh tokens."""

from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlparse

import httpx

from modelwire.emulator import Emulator

from .conftest import anthropic_headers


def _pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


def _authorize(http, challenge, method="S256"):
    r = http.get("/oauth/authorize", params={
        "response_type": "code", "client_id": "modelwire-test", "state": "xyz",
        "redirect_uri": "http://127.0.0.1:1/callback", "code_challenge": challenge,
        "code_challenge_method": method})
    return r


def _login(http):
    verifier, challenge = _pkce()
    r = _authorize(http, challenge)
    assert r.status_code == 302
    query = parse_qs(urlparse(r.headers["location"]).query)
    assert query["state"] == ["xyz"]
    tokens = http.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": query["code"][0], "code_verifier": verifier,
        "redirect_uri": "http://127.0.0.1:1/callback", "client_id": "modelwire-test"})
    assert tokens.status_code == 200, tokens.text
    return tokens.json(), query["code"][0], verifier


def test_pkce_code_exchange_issues_tokens(http):
    tokens, _, _ = _login(http)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] > 0
    assert tokens["access_token"] and tokens["refresh_token"]


def test_wrong_verifier_and_reused_code_get_invalid_grant(http):
    _, challenge = _pkce()
    code = parse_qs(urlparse(_authorize(http, challenge).headers["location"]).query)["code"][0]
    wrong = http.post("/oauth/token", data={"grant_type": "authorization_code", "code": code,
                                            "code_verifier": "not-the-verifier"})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    _, used_code, used_verifier = _login(http)
    again = http.post("/oauth/token", data={"grant_type": "authorization_code", "code": used_code,
                                            "code_verifier": used_verifier})
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_plain_pkce_is_refused(http):
    r = _authorize(http, "plain-challenge", method="plain")
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"


def test_refresh_tokens_are_single_use_and_counted(emu, http):
    tokens, _, _ = _login(http)
    emu.reset()
    fresh = http.post("/oauth/token", data={"grant_type": "refresh_token",
                                            "refresh_token": tokens["refresh_token"]})
    assert fresh.status_code == 200
    assert fresh.json()["refresh_token"] != tokens["refresh_token"]  # rotated
    reuse = http.post("/oauth/token", data={"grant_type": "refresh_token",
                                            "refresh_token": tokens["refresh_token"]})
    assert reuse.status_code == 400
    assert reuse.json() == {"error": "invalid_grant",
                            "error_description": "refresh token has already been used"}
    counters = emu.requests()["counters"]
    assert counters["oauth"]["refresh_token"] == 1
    assert counters["oauth"]["invalid_grant"] == 1
    assert counters["refresh_tokens"] == {tokens["refresh_token"][:12] + "…": 2}
    assert counters["endpoints"]["oauth"] == 2


def test_issued_access_tokens_work_as_keys_when_keys_are_restricted():
    with Emulator(keys=["only-this-key-123"]) as emu, httpx.Client(base_url=emu.base_url) as http:
        tokens, _, _ = _login(http)
        body = {"model": "claude-sonnet-4-6", "max_tokens": 100,
                "messages": [{"role": "user", "content": "hi"}]}
        headers = {"authorization": f"Bearer {tokens['access_token']}",
                   "anthropic-version": "2023-06-01"}
        assert http.post("/v1/messages", json=body, headers=headers).status_code == 200
        assert http.post("/v1/messages", json=body,
                         headers=anthropic_headers()).status_code == 401


def test_expired_access_tokens_get_401_until_refreshed(emu, http):
    tokens, _, _ = _login(http)
    body = {"model": "emulator-1", "messages": [{"role": "user", "content": "hi"}]}
    bearer = {"authorization": f"Bearer {tokens['access_token']}"}
    assert http.post("/v1/chat/completions", json=body, headers=bearer).status_code == 200
    emu.expire_access_tokens()
    r = http.post("/v1/chat/completions", json=body, headers=bearer)
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    fresh = http.post("/oauth/token", data={"grant_type": "refresh_token",
                                            "refresh_token": tokens["refresh_token"]}).json()
    assert http.post("/v1/chat/completions", json=body,
                     headers={"authorization": f"Bearer {fresh['access_token']}"}).status_code == 200


def test_keys_can_be_replaced_at_runtime():
    with Emulator(keys=["k-first-000001"]) as emu, httpx.Client(base_url=emu.base_url) as http:
        body = {"model": "emulator-1", "messages": [{"role": "user", "content": "hi"}]}
        first = {"authorization": "Bearer k-first-000001"}
        assert http.post("/v1/chat/completions", json=body, headers=first).status_code == 200
        emu.set_keys(["k-second-00002"])  # revoke the first
        assert http.post("/v1/chat/completions", json=body, headers=first).status_code == 401
        assert "running" in repr(emu)
