"""An OAuth 2 authorization server for testing login and refresh flows.

``GET /oauth/authorize`` approves at once: it redirects (302) to ``redirect_uri``
with ``code`` and ``state`` (or answers JSON when no redirect_uri is given).
``POST /oauth/token`` (form-encoded) serves ``authorization_code`` with PKCE S256
(``code_verifier`` must hash to the ``code_challenge``; codes are single-use) and
``refresh_token`` grants. Refresh tokens are single-use and rotate: a reused one gets
``invalid_grant``, as providers with rotating refresh tokens answer. Access tokens it
issues are accepted as API keys by the model endpoints, also when ``--keys`` is set, until
they expire (``expires_in``); an expired one gets 401 even without ``--keys``, so clients'
refresh-on-401 paths can be tested.
Counters: ``oauth`` (per grant and outcome) and ``refresh_tokens`` (uses per token
prefix) in ``GET /__emulator/requests``.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from .state import EmulatorState

__all__ = ["ACCESS_PREFIX", "OAuthServer", "s256"]

ACCESS_PREFIX = "emu-at-"  # access tokens it issues: checked for validity and expiry


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class OAuthServer:
    state: EmulatorState
    access_ttl: int = 3600
    _codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    _refresh: dict[str, bool] = field(default_factory=dict)  # token -> already used
    _access: dict[str, float] = field(default_factory=dict)  # token -> expiry (epoch seconds)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def is_access_token(self, token: str) -> bool:
        """Whether ``token`` is an access token this server issued that has not expired."""
        with self._lock:
            return self._access.get(token, 0.0) > time.time()

    def expire_access_tokens(self) -> None:
        """Expire every issued access token now (refresh tokens stay valid)."""
        with self._lock:
            self._access = dict.fromkeys(self._access, 0.0)

    def authorize(self, params: dict[str, str]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """(status, headers, json body) for GET /oauth/authorize."""
        if params.get("response_type", "code") != "code":
            return 400, {}, {"error": "unsupported_response_type"}
        challenge = params.get("code_challenge")
        if not challenge or params.get("code_challenge_method", "plain") != "S256":
            return 400, {}, {"error": "invalid_request",
                             "error_description": "PKCE with code_challenge_method=S256 is required"}
        code = "code_" + secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = {"challenge": challenge, "redirect_uri": params.get("redirect_uri"),
                                 "client_id": params.get("client_id"), "scope": params.get("scope")}
        self.state.count("oauth", "authorize")
        query = {"code": code, **({"state": params["state"]} if "state" in params else {})}
        redirect = params.get("redirect_uri")
        if redirect:
            sep = "&" if "?" in redirect else "?"
            return 302, {"location": f"{redirect}{sep}{urlencode(query)}"}, query
        return 200, {}, query

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        grant = form.get("grant_type")
        if grant == "authorization_code":
            return self._code_grant(form)
        if grant == "refresh_token":
            return self._refresh_grant(form)
        self.state.count("oauth", "unsupported_grant_type")
        return 400, {"error": "unsupported_grant_type"}

    def _code_grant(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            record = self._codes.pop(form.get("code", ""), None)  # single use
        if record is None:
            return self._fail("invalid_grant", "authorization code is invalid or already used")
        verifier = form.get("code_verifier", "")
        if not verifier or s256(verifier) != record["challenge"]:
            return self._fail("invalid_grant", "code_verifier does not match code_challenge")
        if record["redirect_uri"] and form.get("redirect_uri") not in (None, record["redirect_uri"]):
            return self._fail("invalid_grant", "redirect_uri does not match")
        self.state.count("oauth", "authorization_code")
        return 200, self._issue(record.get("scope"))

    def _refresh_grant(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        token = form.get("refresh_token", "")
        with self._lock:
            used = self._refresh.get(token)
            if used is False:
                self._refresh[token] = True
        self.state.count("refresh_tokens", token[:12] + "…")
        if used is None:
            return self._fail("invalid_grant", "refresh token is invalid")
        if used:
            # single-use refresh tokens: a second use means two refreshers raced or a
            # token leaked; providers answer invalid_grant
            return self._fail("invalid_grant", "refresh token has already been used")
        self.state.count("oauth", "refresh_token")
        return 200, self._issue(None)

    def _fail(self, error: str, description: str) -> tuple[int, dict[str, Any]]:
        self.state.count("oauth", error)
        return 400, {"error": error, "error_description": description}

    def _issue(self, scope: str | None) -> dict[str, Any]:
        access = ACCESS_PREFIX + secrets.token_urlsafe(24)
        refresh = "emu-rt-" + secrets.token_urlsafe(24)
        with self._lock:
            self._access[access] = time.time() + self.access_ttl
            self._refresh[refresh] = False
        body: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                "expires_in": self.access_ttl, "refresh_token": refresh}
        if scope:
            body["scope"] = scope
        return body
