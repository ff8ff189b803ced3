"""OAuth: PKCE login, and refresh of expiring tokens with single-use refresh tokens.

Offered only where the provider's terms allow third-party apps.

- **OpenRouter** (``openrouter``): its PKCE flow is built for third-party apps and
  yields a *user-controlled API key* (revocable in the user's OpenRouter settings),
  stored as a manual-like credential with source ``oauth:openrouter``.
- **Anthropic** consumer logins (Claude Free/Pro/Max) are deliberately *not*
  offered: Anthropic's terms (February 2026) reserve those OAuth tokens for Claude
  Code and Claude.ai and forbid routing requests through them in other tools.
  Anthropic is served with API keys (``ANTHROPIC_API_KEY`` or ``creds add``).
- The same rule decides every other provider: no flow unless its terms allow it.

The machinery is generic (RFC 6749 authorization code + RFC 7636 PKCE S256 with a
``state``, loopback redirect on 127.0.0.1 or a pasted code) and is exercised in the
tests against a local token endpoint with single-use refresh tokens, and through
the ``emulator`` flow against the emulator's ``/oauth/authorize`` and ``/oauth/token``.

Refresh (``refresh_credential``): 2 minutes before expiry, and on 401. Refresh
tokens are single-use, so the refresh runs under the store's cross-process lock;
inside it the store is re-read first — if another process already refreshed, its
new pair is used and no token is spent. ``invalid_grant`` → re-sync once (a newer
refresh token in the store is tried), then the credential is marked ``dead`` with
a message telling the user to log in again.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import http.server
import logging
import secrets
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..errors import CredentialError, redact
from .cooldown import Mark
from .credential import TERMINAL_REASONS, PooledCredential

if TYPE_CHECKING:
    from .stores import CredentialStore

__all__ = [
    "FLOWS",
    "LoopbackReceiver",
    "OAuthError",
    "OAuthFlow",
    "TokenSet",
    "authorization_url",
    "exchange_code",
    "login",
    "pkce_pair",
    "refresh_credential",
    "refresh_tokens",
]

log = logging.getLogger("modelwire.credentials")

REFRESH_SKEW = 120.0  # seconds before expiry a token is refreshed
FlowKind: TypeAlias = Literal["authorization_code", "openrouter_key"]


class OAuthError(CredentialError):
    """An OAuth endpoint refused (``error`` is the RFC 6749 code, e.g. ``invalid_grant``)."""

    def __init__(self, message: str, *, error: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.status = status


@dataclass(frozen=True, slots=True)
class OAuthFlow:
    provider: str
    kind: FlowKind
    authorize_url: str
    token_url: str
    client_id: str = ""
    scopes: tuple[str, ...] = ()
    docs_url: str = ""


@dataclass(frozen=True, slots=True)
class TokenSet:
    access_token: str = dataclasses.field(repr=False)
    refresh_token: str | None = dataclasses.field(default=None, repr=False)
    expires_in: float | None = None
    token_type: str = "Bearer"


# Flows whose provider terms allow third-party apps. Anthropic is absent on purpose
# (see the module docstring). "emulator" is the offline provider used by tests and demos.
FLOWS: dict[str, OAuthFlow] = {
    "openrouter": OAuthFlow(
        provider="openrouter", kind="openrouter_key",
        authorize_url="https://openrouter.ai/auth",
        token_url="https://openrouter.ai/api/v1/auth/keys",
        docs_url="https://openrouter.ai/docs/guides/overview/auth/oauth",
    ),
}


def emulator_flow(base_url: str, client_id: str = "modelwire") -> OAuthFlow:
    """The emulator's standard OAuth server (``/oauth/authorize``, ``/oauth/token``)."""
    base = base_url.rstrip("/")
    return OAuthFlow(provider="emulator", kind="authorization_code",
                     authorize_url=base + "/oauth/authorize", token_url=base + "/oauth/token",
                     client_id=client_id)


# ----------------------------------------------------------------------------- PKCE
def pkce_pair() -> tuple[str, str]:
    """``(verifier, challenge)``: 43-char base64url verifier, S256 challenge (RFC 7636)."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorization_url(flow: OAuthFlow, *, redirect_uri: str, challenge: str, state: str) -> str:
    if flow.kind == "openrouter_key":
        # OpenRouter takes no state parameter: the state rides in the callback URL itself
        sep = "&" if "?" in redirect_uri else "?"
        params = {"callback_url": f"{redirect_uri}{sep}state={state}",
                  "code_challenge": challenge, "code_challenge_method": "S256"}
    else:
        params = {"response_type": "code", "client_id": flow.client_id,
                  "redirect_uri": redirect_uri, "code_challenge": challenge,
                  "code_challenge_method": "S256", "state": state}
        if flow.scopes:
            params["scope"] = " ".join(flow.scopes)
    return flow.authorize_url + "?" + urllib.parse.urlencode(params)


# ----------------------------------------------------------------------------- HTTP
def _post(url: str, *, form: dict[str, str] | None = None, json: dict[str, Any] | None = None,
          timeout: float = 20.0) -> dict[str, Any]:
    import httpx

    try:
        response = httpx.post(url, data=form, json=json, timeout=timeout,
                              headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        raise OAuthError(f"token endpoint unreachable: {type(exc).__name__}") from exc
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code >= 400 or not isinstance(body, dict):
        error = str(body.get("error", "")) if isinstance(body, dict) else ""
        if isinstance(body, dict) and isinstance(body.get("error"), dict):  # {"error": {...}}
            error = str(body["error"].get("code") or body["error"].get("type") or "")
        desc = body.get("error_description", "") if isinstance(body, dict) else ""
        raise OAuthError(redact(f"token endpoint answered {response.status_code}: {error} {desc}"),
                         error=error, status=response.status_code)
    return body


def _token_set(body: dict[str, Any]) -> TokenSet:
    if not body.get("access_token"):
        raise OAuthError("token endpoint answered without access_token")
    expires_in = body.get("expires_in")
    return TokenSet(access_token=str(body["access_token"]),
                    refresh_token=body.get("refresh_token"),
                    expires_in=float(expires_in) if expires_in is not None else None,
                    token_type=str(body.get("token_type") or "Bearer"))


def exchange_code(flow: OAuthFlow, *, code: str, verifier: str, redirect_uri: str) -> TokenSet:
    """Authorization code → tokens (or, for OpenRouter, → a user-controlled API key)."""
    if flow.kind == "openrouter_key":
        body = _post(flow.token_url, json={"code": code, "code_verifier": verifier,
                                           "code_challenge_method": "S256"})
        if not body.get("key"):
            raise OAuthError("OpenRouter answered without a key")
        return TokenSet(access_token=str(body["key"]))
    return _token_set(_post(flow.token_url, form={
        "grant_type": "authorization_code", "code": code, "code_verifier": verifier,
        "redirect_uri": redirect_uri, "client_id": flow.client_id}))


def refresh_tokens(token_url: str, refresh_token: str, client_id: str = "") -> TokenSet:
    """Spend a (single-use) refresh token for a new pair (RFC 6749 §6)."""
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    if client_id:
        form["client_id"] = client_id
    return _token_set(_post(token_url, form=form))


# ----------------------------------------------------------------------------- loopback
class LoopbackReceiver:
    """A one-shot HTTP server on 127.0.0.1 (free port) that catches the redirect."""

    def __init__(self, path: str = "/callback") -> None:
        self.path = path
        self.result: dict[str, str] | None = None
        self.done = threading.Event()  # set when the redirect arrived
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                if url.path != receiver.path:
                    self.send_error(404)
                    return
                query = dict(urllib.parse.parse_qsl(url.query))
                receiver.result = query
                self.send_response(200)
                self.send_header("content-type", "text/plain; charset=utf-8")
                self.end_headers()
                self.wfile.write(b"modelwire: login received, you can close this tab.\n")
                receiver.done.set()

            def log_message(self, *args: Any) -> None:  # the query holds the code: never log
                pass

        self._server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.path}"

    def wait(self, timeout: float) -> dict[str, str] | None:
        self.done.wait(timeout)
        return self.result

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def login(
    flow: OAuthFlow,
    *,
    open_url: Callable[[str], Any],
    paste: Callable[[], str] | None = None,
    timeout: float = 300.0,
    now: float,
) -> PooledCredential:
    """Run an authorization-code + PKCE login; return the credential to store.

    ``open_url`` shows the authorization URL (browser, or print it). With ``paste``,
    the code (or the whole redirect URL) is read from the user instead of the
    loopback server (remote/headless machines)."""
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    receiver = None if paste else LoopbackReceiver()
    redirect_uri = receiver.redirect_uri if receiver else "http://127.0.0.1/callback"
    try:
        open_url(authorization_url(flow, redirect_uri=redirect_uri, challenge=challenge, state=state))
        if receiver is not None:
            query = receiver.wait(timeout) or {}
        else:
            query = _parse_pasted(paste())  # type: ignore[misc]
    finally:
        if receiver is not None:
            receiver.close()
    if query.get("error"):
        raise OAuthError(f"login refused: {query['error']}", error=query["error"])
    if not query.get("code"):
        raise OAuthError("login timed out or no code received")
    if query.get("state", state) != state:
        raise OAuthError("login answer carried the wrong state (possible CSRF); try again")
    tokens = exchange_code(flow, code=query["code"], verifier=verifier, redirect_uri=redirect_uri)
    return _credential(flow, tokens, now)


def _parse_pasted(text: str) -> dict[str, str]:
    text = text.strip()
    if "code=" in text:
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(text).query or text))
    return {"code": text}


def _credential(flow: OAuthFlow, tokens: TokenSet, now: float) -> PooledCredential:
    oauth = flow.kind == "authorization_code"
    return PooledCredential(
        provider=flow.provider, id="oauth-" + secrets.token_hex(4), label=f"{flow.provider} login",
        auth_type="oauth" if oauth else "api_key", source=f"oauth:{flow.provider}",
        secret=tokens.access_token, refresh_token=tokens.refresh_token,
        expires_at=(now + tokens.expires_in) if tokens.expires_in else None, status_at=now,
        extra={"token_url": flow.token_url, "client_id": flow.client_id} if oauth else {},
    )


# ----------------------------------------------------------------------------- refresh
def refresh_credential(
    store: CredentialStore,
    cred: PooledCredential,
    *,
    now: Callable[[], float],
    refresher: Callable[[PooledCredential], TokenSet] | None = None,
    force: bool = False,
    lock_timeout: float = 30.0,
) -> PooledCredential | None:
    """Refresh ``cred``'s token under the store's cross-process lock.

    ``cred`` is what the caller holds (maybe stale). Returns the fresh credential,
    the one another process already refreshed, or the dead one after
    ``invalid_grant``; ``None`` when the refresh failed transiently."""
    refresher = refresher or _endpoint_refresher
    with store.lock(f"oauth-refresh:{cred.provider}:{cred.id}", ttl=60.0, timeout=lock_timeout):
        current = store.get(cred.provider, cred.id)
        if current is None or current.status == "dead":
            return current
        # Someone else refreshed while we waited (or before we looked): use their pair.
        if current.secret != cred.secret and not current.needs_refresh(now(), REFRESH_SKEW):
            return current
        if not force and not current.needs_refresh(now(), REFRESH_SKEW):
            return current
        return _spend(store, current, refresher, now)


def _spend(store: CredentialStore, current: PooledCredential,
           refresher: Callable[[PooledCredential], TokenSet], now: Callable[[], float]
           ) -> PooledCredential | None:
    attempt = current
    for resync in (True, False):
        try:
            tokens = refresher(attempt)
        except OAuthError as exc:
            if exc.error.lower() not in TERMINAL_REASONS:
                log.warning("refresh of %s credential %s failed: %s", current.provider,
                            current.id, exc)
                return None
            again = store.get(current.provider, current.id) if resync else None
            if again is not None and again.refresh_token and again.refresh_token != attempt.refresh_token:
                attempt = again  # re-sync: a newer refresh token landed in the store
                continue
            reason = (f"refresh token rejected ({exc.error}): run `modelwire auth login "
                      f"{current.provider}` to log in again")
            log.warning("%s credential %s is dead: %s", current.provider, current.id, reason)
            return store.mark(current.provider, current.id, Mark("dead", None, exc.error, reason),
                              now())
        t = now()
        return store.patch(current.provider, current.id, {
            "secret": tokens.access_token,
            "refresh_token": tokens.refresh_token or attempt.refresh_token,
            "expires_at": (t + tokens.expires_in) if tokens.expires_in else None,
            "status": "ok", "cooldown_until": None, "status_at": t,
            "last_error_code": None, "last_error_reason": None,
        })
    return None


def _endpoint_refresher(cred: PooledCredential) -> TokenSet:
    token_url = cred.extra.get("token_url")
    if not token_url or not cred.refresh_token:
        raise OAuthError(f"{cred.provider} credential {cred.id} cannot be refreshed "
                         "(no token endpoint or refresh token)", error="")
    return refresh_tokens(str(token_url), cred.refresh_token, str(cred.extra.get("client_id") or ""))
