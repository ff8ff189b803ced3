"""Signatures and sealed reasoning the emulator hands out and later verifies.

* Anthropic thinking ``signature`` (and ``redacted_thinking`` ``data``): an
  HMAC-SHA256 over the block's place in its assistant turn (:func:`thinking_place`:
  its ordinal among the turn's thinking blocks and how many tool_use blocks come
  before it) and its text, so a changed text, a reordered block, thinking regrouped
  away from the tool call it preceded, or a foreign signature fails the check, as on
  the real API ("Invalid `signature` in `thinking` block").
* Responses reasoning ``encrypted_content``: a Fernet token (AES-CBC + HMAC, so
  authenticated) sealing the reasoning text, the item id and the kind of item that
  must follow it. Tampering makes it undecryptable -> ``invalid_encrypted_content``.

Both derive from one signing key, so several emulator processes given the same key
(``--signing-key-env``) verify each other's blocks; without one, a random key per
process is used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["Signer", "thinking_place"]


def thinking_place(ordinal: int, tools_before: int) -> int:
    """The number a thinking block's signature covers: interleaved thinking signs where it
    stands among the turn's tool calls, so moving it past one breaks the signature."""
    return ordinal + 1000 * tools_before

_SIG_MAGIC = b"MWE1"  # recognisable prefix inside the base64, versioned
_REDACTED_MAGIC = b"MWR1"


@dataclass(frozen=True, slots=True)
class Signer:
    key: bytes

    @classmethod
    def from_key(cls, key: str | bytes | None) -> Signer:
        if key is None or key == "" or key == b"":
            return cls(os.urandom(32))
        raw = key.encode() if isinstance(key, str) else key
        return cls(hashlib.sha256(b"modelwire-emulator\0" + raw).digest())

    # ----------------------------------------------------------- Anthropic thinking
    def _mac(self, label: bytes, ordinal: int, text: str) -> bytes:
        msg = label + b"\0" + str(ordinal).encode() + b"\0" + text.encode()
        return hmac.new(self.key, msg, hashlib.sha256).digest()

    def sign_thinking(self, text: str, ordinal: int) -> str:
        mac = self._mac(b"thinking", ordinal, text)
        return base64.b64encode(_SIG_MAGIC + bytes([ordinal % 256]) + mac).decode()

    def verify_thinking(self, text: str, signature: str, ordinal: int) -> bool:
        try:
            raw = base64.b64decode(signature.encode(), validate=True)
        except (ValueError, UnicodeEncodeError):
            return False
        if len(raw) != 37 or raw[:4] != _SIG_MAGIC:
            return False
        return hmac.compare_digest(raw[5:], self._mac(b"thinking", ordinal, text))

    def redact_thinking(self, text: str, ordinal: int) -> str:
        """Opaque ``redacted_thinking.data``: the text sealed with its MAC."""
        mac = self._mac(b"redacted", ordinal, text)
        return base64.b64encode(_REDACTED_MAGIC + mac + text.encode()).decode()

    def verify_redacted(self, data: str, ordinal: int) -> bool:
        try:
            raw = base64.b64decode(data.encode(), validate=True)
        except (ValueError, UnicodeEncodeError):
            return False
        if raw[:4] != _REDACTED_MAGIC or len(raw) < 36:
            return False
        try:
            text = raw[36:].decode()
        except UnicodeDecodeError:
            return False
        return hmac.compare_digest(raw[4:36], self._mac(b"redacted", ordinal, text))

    # ------------------------------------------------------ Responses encrypted_content
    def _fernet(self) -> Any:
        from cryptography.fernet import Fernet  # heavy: imported on first use

        return Fernet(base64.urlsafe_b64encode(hashlib.sha256(self.key + b"responses").digest()))

    def seal_reasoning(self, item_id: str, text: str, follows: str) -> str:
        payload = json.dumps({"id": item_id, "text": text, "follows": follows}).encode()
        return self._fernet().encrypt(payload).decode()

    def open_reasoning(self, token: str) -> dict[str, Any] | None:
        """The sealed payload, or None when the token was not minted with this key."""
        from cryptography.fernet import InvalidToken

        try:
            return json.loads(self._fernet().decrypt(token.encode()))
        except (InvalidToken, ValueError, TypeError):
            return None
