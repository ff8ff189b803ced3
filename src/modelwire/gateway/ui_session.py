"""Who may see the status page: an admin key, sent as a header or proven once at
``/ui/login`` for a session cookie.

A browser cannot send a bearer header on a plain navigation, so ``POST /ui/login`` takes
an admin key from a form and answers with a cookie holding a session token, never the
key: ``<expiry>.<nonce>.<HMAC-SHA256(admin key, "modelwire-ui|expiry|nonce")>``. The
gateway keeps no session table: a token is valid while it has not expired and its MAC
matches one of the admin keys now configured, so every worker and instance with the same
keys accepts it, and removing a key ends the sessions made with it. The cookie is
``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other site's page sends it),
``Path=/ui`` and ``Secure`` when the gateway serves HTTPS.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable, Mapping

__all__ = ["COOKIE", "LIFETIME_S", "cookie_header", "mint", "presented_token", "same_origin", "valid"]

COOKIE = "modelwire_ui"
LIFETIME_S = 12 * 3600
_LABEL = b"modelwire-ui"


def _mac(key: bytes, expiry: int, nonce: str) -> str:
    return hmac.new(key, b"%s|%d|%s" % (_LABEL, expiry, nonce.encode("ascii")), hashlib.sha256).hexdigest()


def mint(key: bytes, now: float, lifetime: int = LIFETIME_S) -> str:
    """A session token for the holder of admin key ``key``."""
    expiry = int(now) + lifetime
    nonce = os.urandom(12).hex()
    return f"{expiry}.{nonce}.{_mac(key, expiry, nonce)}"


def valid(token: str | None, keys: Iterable[bytes], now: float) -> bool:
    """Whether ``token`` is unexpired and made with one of ``keys`` (every key is
    compared: the time does not say which one matched)."""
    if not token or token.count(".") != 2:
        return False
    expiry_text, nonce, mac = token.split(".")
    if not expiry_text.isdigit() or not nonce.isascii() or not nonce.isalnum() or len(expiry_text) > 12:
        return False
    expiry = int(expiry_text)
    ok = False
    for key in keys:
        ok |= hmac.compare_digest(mac.encode("ascii", "replace"), _mac(key, expiry, nonce).encode("ascii"))
    return ok and expiry > now


def presented_token(headers: Mapping[str, str]) -> str | None:
    """The session token in the request's ``Cookie`` header, if any."""
    raw = headers.get("cookie")
    if not raw:
        return None
    for part in raw.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE:
            return value.strip().strip('"') or None
    return None


def cookie_header(token: str, *, secure: bool, max_age: int = LIFETIME_S) -> str:
    """The ``Set-Cookie`` value that holds ``token`` (``""`` with ``max_age=0``: clears it)."""
    flags = f"{COOKIE}={token}; Path=/ui; Max-Age={max_age}; HttpOnly; SameSite=Strict"
    return flags + "; Secure" if secure else flags


def same_origin(headers: Mapping[str, str], scheme: str) -> bool:
    """Whether a form post came from the gateway's own page. A browser says where a
    request comes from in ``Sec-Fetch-Site`` (no page can set it): ``same-origin`` or
    ``none`` (typed by the user) pass; an older one only in ``Origin``, which must name
    this host. A client that sends neither (curl) is not a browser on another site."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return True
    host = headers.get("host", "")
    return bool(host) and origin == f"{scheme}://{host}"
