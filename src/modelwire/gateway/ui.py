"""The status page: ``GET /ui`` (HTML), ``GET /ui/data`` (the same as JSON),
``GET|POST /ui/login`` and ``POST /ui/logout``.

Guarded by the admin keys (``gateway.admin_keys_env``, as ``/admin/*``): an admin key as
``Authorization: Bearer`` or ``x-api-key``, or the session cookie ``/ui/login`` sets
(:mod:`.ui_session`). With no admin keys set every path answers 404 saying what to set;
without a valid key ``/ui`` answers 401 with the sign-in form and no data. Nothing here
changes state but the session cookie, and only by POST. Every page is sent with a strict
Content-Security-Policy: no source but the gateway, the inline style and script allowed
by a nonce made for that response.
"""

from __future__ import annotations

import base64
import os
import time
import urllib.parse
from typing import Any

import orjson

from .errors import GatewayError
from .serving import Reply
from .ui_data import snapshot
from .ui_render import login_page, message_page, status_page
from .ui_session import cookie_header, mint, presented_token, same_origin, valid

__all__ = ["StatusPage"]

_MAX_FORM = 4096


def _headers(nonce: str | None = None) -> dict[str, str]:
    csp = "default-src 'none'; img-src 'self' data:; connect-src 'self'; form-action 'self'; " \
          "frame-ancestors 'none'; base-uri 'none'"
    if nonce is not None:
        csp += f"; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'"
    return {"content-security-policy": csp, "cache-control": "no-store", "x-content-type-options": "nosniff",
            "x-frame-options": "DENY", "referrer-policy": "same-origin"}


def _nonce() -> str:
    return base64.b64encode(os.urandom(16)).decode("ascii")


class StatusPage:
    """The handlers of ``/ui*`` (``handler(request) -> Reply``) over one gateway."""

    def __init__(self, gateway: Any) -> None:
        self.gw = gateway

    # ------------------------------------------------------------ who
    def _off(self) -> bool:
        return not self.gw.admin_keys.required

    def _signed_in(self, request: Any) -> tuple[bool, bool]:
        """(allowed, by the cookie): an admin key in the headers, or a valid session."""
        keys = self.gw.admin_keys
        if "authorization" in request.headers or "x-api-key" in request.headers:
            try:
                keys.check(request.headers)
            except GatewayError:
                return False, False
            return True, False
        return valid(presented_token(request.headers), keys.keys, time.time()), True

    def _html(self, status: int, render: Any, *args: Any, headers: dict[str, str] | None = None) -> Reply:
        nonce = _nonce()
        return Reply(status, render(*args, nonce=nonce).encode(), {**_headers(nonce), **(headers or {})},
                     content_type="text/html; charset=utf-8")

    def _off_reply(self, json: bool) -> Reply:
        env = self.gw.admin_keys.env_name
        text = f"the status page is off: set {env} (gateway.admin_keys_env) to one or more admin keys"
        if json:
            return _json_error(404, text, "ui_off")
        return self._html(404, _message, "modelwire status: off", text)

    # ------------------------------------------------------------ endpoints
    async def page(self, request: Any) -> Reply:
        if self._off():
            return self._off_reply(json=False)
        allowed, by_cookie = self._signed_in(request)
        if not allowed:
            return self._html(401, _login, None)
        data = await snapshot(self.gw)
        return self._html(200, _status, data, by_cookie)

    async def data(self, request: Any) -> Reply:
        if self._off():
            return self._off_reply(json=True)
        allowed, _ = self._signed_in(request)
        if not allowed:
            return _json_error(401, "missing or invalid admin key: send Authorization: Bearer <admin key>, "
                               "or sign in at /ui/login", "invalid_admin_key")
        return Reply(200, orjson.dumps(await snapshot(self.gw)), _headers())

    async def login_form(self, request: Any) -> Reply:
        if self._off():
            return self._off_reply(json=False)
        return self._html(200, _login, None)

    async def login(self, request: Any) -> Reply:
        if self._off():
            return self._off_reply(json=False)
        scheme = str((request.scope or {}).get("scheme", "http"))
        if not same_origin(request.headers, scheme):
            return self._html(403, _message, "modelwire status: refused",
                              "a sign-in must come from this gateway's own page")
        key = await _form_key(request)
        keys = self.gw.admin_keys
        try:
            keys.check({"authorization": f"Bearer {key}"} if key else {})
        except GatewayError:
            return self._html(401, _login, "invalid admin key")
        token = mint(key.encode(), time.time())
        return Reply(303, b"", {**_headers(), "location": "/ui",
                                "set-cookie": cookie_header(token, secure=scheme == "https")},
                     content_type="text/plain")

    async def logout(self, request: Any) -> Reply:
        scheme = str((request.scope or {}).get("scheme", "http"))
        return Reply(303, b"", {**_headers(), "location": "/ui/login",
                                "set-cookie": cookie_header("", secure=scheme == "https", max_age=0)},
                     content_type="text/plain")


def _status(data: dict[str, Any], by_cookie: bool, *, nonce: str) -> str:
    return status_page(data, nonce, signed_in=by_cookie)


def _login(error: str | None, *, nonce: str) -> str:
    return login_page(nonce, error)


def _message(title: str, text: str, *, nonce: str) -> str:
    return message_page(nonce, title, text)


def _json_error(status: int, message: str, code: str) -> Reply:
    kind = {401: "authentication_error", 404: "not_found_error"}.get(status, "invalid_request_error")
    return Reply(status, orjson.dumps({"error": {"message": message, "type": kind, "code": code}}), _headers())


async def _form_key(request: Any) -> str:
    """The ``key`` field of a urlencoded form body (``""``: none, or a body too large)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > _MAX_FORM:
            return ""
        chunks.append(chunk)
    fields = urllib.parse.parse_qs(b"".join(chunks).decode("utf-8", "replace"))
    return (fields.get("key") or [""])[0].strip()
