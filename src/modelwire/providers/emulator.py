"""The emulator rows: one offline provider that can play several real ones.

The emulator enforces a real provider's rules when addressed under
``/p/<profile>`` (``emu.openai_base_url("deepseek")`` ->
``http://127.0.0.1:PORT/p/deepseek/v1``, the emulator section of docs/contributing.md). A Client pointed
there must then behave as it would toward that provider (echo DeepSeek's
reasoning, never send Mistral a reasoning_content...), so :func:`emulator_profile`
gives the emulator row the capability fields of the catalog row it plays,
keeping the emulator's own name, protocol, auth and issuer (the emulator signs
its reasoning blocks with its own key). No ``/p/`` segment: the ``lenient``
server default, which takes every field real APIs accept.
"""

from __future__ import annotations

import dataclasses
import re

from .profile import ProviderProfile

__all__ = ["emulator_profile"]

_PATH = re.compile(r"/p/([A-Za-z0-9_-]+)(?:/v1)?/?$")

# emulator profile -> the catalog row whose Chat Completions behaviour it enforces
_PLAYS = {"deepseek": "deepseek", "kimi": "moonshot", "mimo": "xiaomi", "mistral": "mistral",
          "groq": "groq", "cerebras": "cerebras", "openai": "openai"}
# emulator profiles whose Anthropic endpoint takes unsigned thinking rebuilt from text
# (DeepSeek's and Kimi's Anthropic-compatible endpoints do; hermes-behaviours 2.4)
_UNSIGNED_THINKING = frozenset({"deepseek", "kimi"})
# what stays the emulator's own whatever it plays
_OWN = ("name", "base_url", "api_mode", "auth_style", "key_env", "default_headers", "docs_url",
        "issuer", "accepts_issuers", "anthropic_version", "local", "extra")


def emulator_profile(row: ProviderProfile, base_url: str) -> ProviderProfile:
    """``row`` (an ``emulator*`` row) adjusted to the provider its URL makes it play."""
    match = _PATH.search(base_url)
    if match is None:
        return row
    played = match.group(1).lower()
    if row.api_mode == "anthropic_messages":
        if played in _UNSIGNED_THINKING:
            return dataclasses.replace(row, unsigned_thinking_echo=True)
        return row
    if row.api_mode != "chat_completions" or played not in _PLAYS:
        return row
    from .catalog import CATALOG

    source = CATALOG[_PLAYS[played]]
    own = {name: getattr(row, name) for name in _OWN}
    # the played row's class too: its hooks (schema sanitizer, body patch) apply
    return dataclasses.replace(source, **own)
