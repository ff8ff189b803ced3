"""Gateway keys: who may call the gateway.

Keys come from the variable named by ``gateway.keys_env`` (comma-separated).
A client presents one as ``Authorization: Bearer <key>`` or ``x-api-key``;
comparison is constant-time against every configured key. With no keys the
gateway serves only loopback (``modelwire serve`` refuses another host and
says why). A key sent by a client is a gateway key and is never forwarded
upstream (unless ``client_key_passthrough`` is on).

Such a key has no name: where the gateway must say which one a request came with (a
capture line, ``gateway.capture.keys``) it names it by :func:`key_fingerprint`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import GatewayError

__all__ = ["GatewayKeys", "bind_addresses", "is_loopback", "key_fingerprint", "presented_key"]


def presented_key(headers: Mapping[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return headers.get("x-api-key") or None


def key_fingerprint(key: str) -> str:
    """``env-`` and the first 12 hex digits of the key's SHA-256: a name for a
    ``gateway.keys_env`` key that does not give the key away (a long random key cannot be
    found from it; a short guessable one could, as from any hash)."""
    return "env-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def bind_addresses(host: str) -> tuple[str, ...]:
    """The addresses a server bound to ``host`` listens on: what ``getaddrinfo`` gives for
    a passive socket (``""`` is every interface, as the event loop's ``create_server``
    reads it). Empty when the name does not resolve."""
    name = host.strip().strip("[]") or None
    try:
        infos = socket.getaddrinfo(name, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):
        return ()
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` binds is a loopback one: the check runs on the
    resolved addresses, not the string (``""``, ``0.0.0.0``, ``::`` and a name that
    resolves elsewhere all bind more than loopback)."""
    addresses = bind_addresses(host)
    if not addresses:
        return False
    for address in addresses:
        try:
            ip = ipaddress.ip_address(address.partition("%")[0])
        except ValueError:
            return False
        if not ip.is_loopback:
            return False
    return True


@dataclass(frozen=True, slots=True)
class GatewayKeys:
    keys: tuple[bytes, ...]
    env_name: str

    @classmethod
    def from_env(cls, env_name: str, environ: Mapping[str, str] | None = None) -> GatewayKeys:
        env = os.environ if environ is None else environ
        raw = env.get(env_name, "")
        keys = tuple(k.strip().encode() for k in raw.split(",") if k.strip())
        return cls(keys, env_name)

    @property
    def required(self) -> bool:
        return bool(self.keys)

    async def identify(self, headers: Mapping[str, str], *, passthrough: bool = False) -> None:
        """``check`` for the serving path (with teams on, :class:`~.admission.TeamKeys`
        answers who a virtual key is; these keys are all unlimited: None)."""
        self.check(headers, passthrough=passthrough)

    def identity(self, headers: Mapping[str, str], who: object = None, *,
                 passthrough: bool = False) -> str | None:
        """The name of the key a checked request came with: its :func:`key_fingerprint`,
        or None when no keys are configured (whatever a client sent was not checked).
        ``who``: what :meth:`identify` returned (None here; the teams keys name theirs)."""
        if not self.keys:
            return None
        key = headers.get("x-modelwire-key") if passthrough else presented_key(headers)
        return None if key is None else key_fingerprint(key)

    def check(self, headers: Mapping[str, str], *, passthrough: bool = False) -> None:
        """With ``passthrough`` the usual key headers carry the client's *provider* key,
        so the gateway key travels in ``x-modelwire-key``."""
        if not self.keys:
            return
        key = headers.get("x-modelwire-key") if passthrough else presented_key(headers)
        if key is None:
            where = "x-modelwire-key" if passthrough else "Authorization: Bearer <key> or x-api-key"
            raise GatewayError(401, f"missing gateway key: send {where}", "missing_key")
        given = key.encode()
        ok = False
        for k in self.keys:  # no early exit: the time does not depend on which key matched
            ok |= hmac.compare_digest(given, k)
        if not ok:
            raise GatewayError(401, "invalid gateway key", "invalid_key")
