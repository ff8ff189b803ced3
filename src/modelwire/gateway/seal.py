"""Sealed reasoning: carry another issuer's reasoning through a client that cannot.

An Anthropic client can only send back thinking blocks with a ``signature``; a
Responses client only reasoning items with ``encrypted_content``. When the
upstream's reasoning is something else (DeepSeek's ``reasoning_content``, an
OpenRouter item, another endpoint's thinking), the gateway puts the native
block and its issuer in a *sealed envelope* — authenticated encryption
(AES-256-GCM, key derived with HKDF-SHA256 from the gateway secret) — and uses
the envelope as the signature / encrypted content. When the client echoes it,
the gateway opens the seal and restores the native form for the upstream. A
tampered or foreign envelope does not open, and its block is dropped, never
forwarded.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from typing import Any, TypeGuard

__all__ = ["PREFIX", "Sealer", "may_hold_envelope"]

PREFIX = "mwseal1."
_AAD = b"modelwire-seal-v1"
PREFIX_BYTES = PREFIX.encode()


def _spelled(c: str) -> bytes:
    """A regex for one character as JSON may write it: itself, or a backslash-u escape."""
    digits = b"".join(b"[%s%s]" % (d.encode(), d.upper().encode()) if d.isalpha() else d.encode()
                      for d in f"{ord(c):04x}")
    return b"(?:%s|\\\\u%s)" % (re.escape(c.encode()), digits)  # four here: one escaped backslash in the regex


_SPELLED = re.compile(b"".join(_spelled(c) for c in PREFIX))


def may_hold_envelope(raw: bytes) -> bool:
    """Whether a JSON body could hold a sealed envelope (a string that starts with
    :data:`PREFIX`), however JSON spells it. For a body the door could not decode only:
    a decoded request is asked :func:`~modelwire.gateway.doors.holds_envelope`, and a byte
    search is slow on JSON text (see the performance page).

    ``find``, not ``in``: ``bytes in bytes`` first tries the needle as an integer and
    formats a TypeError it then drops."""
    if raw.find(PREFIX_BYTES) >= 0:
        return True
    return raw.find(b"\\u") >= 0 and _SPELLED.search(raw) is not None


@dataclass(frozen=True, slots=True)
class _Opened:
    issuer: str
    block: dict[str, Any]


class Sealer:
    """Seal and open reasoning envelopes under one secret."""

    def __init__(self, secret: str | bytes | None = None) -> None:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        if secret is None:
            raw = os.urandom(32)  # per process: seals do not survive a restart
            self.ephemeral = True
        else:
            raw = secret.encode() if isinstance(secret, str) else secret
            self.ephemeral = False
        if len(raw) < 16:
            from ..errors import ConfigError

            raise ConfigError("the gateway seal secret must be at least 16 characters")
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_AAD).derive(raw)
        self._aead = AESGCM(key)
        # envelopes that did not open (tampered, or sealed under another instance's
        # secret): a count for /health, so a misconfigured deployment shows itself
        self.unopened = 0

    def seal(self, issuer: str, block: dict[str, Any]) -> str:
        import orjson

        nonce = os.urandom(12)
        plain = orjson.dumps({"i": issuer, "b": block})
        sealed = self._aead.encrypt(nonce, plain, _AAD)
        return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode().rstrip("=")

    @staticmethod
    def is_sealed(value: object) -> TypeGuard[str]:
        return isinstance(value, str) and value.startswith(PREFIX)

    def open(self, value: str) -> _Opened | None:
        """The issuer and native block, or ``None`` when tampered, foreign or malformed."""
        import orjson
        from cryptography.exceptions import InvalidTag

        if not self.is_sealed(value):
            return None
        text = value[len(PREFIX):]
        try:
            data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            plain = self._aead.decrypt(data[:12], data[12:], _AAD)
            obj = orjson.loads(plain)
        except (ValueError, InvalidTag, orjson.JSONDecodeError):
            self.unopened += 1
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get("i"), str) or not isinstance(obj.get("b"), dict):
            self.unopened += 1
            return None
        return _Opened(obj["i"], obj["b"])
