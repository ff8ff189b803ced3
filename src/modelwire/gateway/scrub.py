"""Key-like strings out of the texts the gateway passes to its clients.

Upstream error messages quote the key they refused, whole or masked: OpenAI's
``Incorrect API key provided: sk-proj-*****9999``, DeepSeek's ``****abcd``, and
:func:`modelwire.errors.redact` itself leaves ``sk-…9999``. A gateway client never
holds the gateway's upstream keys, so each of these, the tail included, is replaced
whole before an error leaves in a door's shape.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "scrub"]

REDACTED = "[redacted]"

_KEYLIKE = re.compile(
    r"(?:"
    # a key with a known prefix (OpenAI, Anthropic, OpenRouter, Groq, xAI, Gemini, HF...)
    r"\b(?:sk|rk|pk|gsk|xai|hf|nvapi|pplx|csk|tgp)[-_][A-Za-z0-9_\-]{6,}"
    r"|\bmw-[A-Za-z0-9_\-]{20,}"  # a modelwire virtual key
    r"|\bAIza[A-Za-z0-9_\-]{10,}"
    # a masked one: stars or an ellipsis with the characters around them
    r"|[A-Za-z0-9_\-.]*(?:\*{3,}|…)[A-Za-z0-9_\-.]*"
    # a bearer token, and a key given as a parameter
    r"|(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?<=key=)[A-Za-z0-9._\-]{8,}"
    r")",
    re.IGNORECASE,
)


def scrub(text: str) -> str:
    """``text`` with every key-like string (whole or masked) replaced by ``[redacted]``."""
    if not text:
        return text
    return _KEYLIKE.sub(REDACTED, text)
