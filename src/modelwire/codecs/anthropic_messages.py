"""Anthropic Messages codec (``api_mode="anthropic_messages"``), sans-IO, both directions.

Public surface (see docs/contracts.md):

* :func:`encode_request` (Request + Target -> EncodedRequest), :func:`decode_request`
  (a front door's body + headers -> Request);
* :func:`decode_response`, :func:`encode_response`, :func:`decode_error`;
* :class:`StreamDecoder`, :class:`StreamEncoder`;
* :func:`apply_cache_layout`: the optional "system and last 3 messages" cache layout;
* :func:`auth_token`: the caller key from ``x-api-key`` or ``Authorization: Bearer``.

The implementation lives in private modules: ``_anthropic_models`` (model families as
data), ``_anthropic_tools`` (schemas, ids, tool_choice), ``_anthropic_convert``
(messages), ``_anthropic_request`` (body, headers, betas), ``_anthropic_decode_request``,
``_anthropic_response`` (usage, stop reasons, errors, bodies) and ``_anthropic_stream``.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from ._anthropic_decode_request import auth_token, decode_request
from ._anthropic_models import family_for, normalize_model_id
from ._anthropic_request import MAX_BREAKPOINTS, encode_request, limit_cache_breakpoints
from ._anthropic_response import decode_error, decode_response, encode_response, usage_from
from ._anthropic_stream import StreamDecoder, StreamEncoder

__all__ = [
    "MAX_BREAKPOINTS",
    "StreamDecoder",
    "StreamEncoder",
    "apply_cache_layout",
    "auth_token",
    "decode_error",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "family_for",
    "limit_cache_breakpoints",
    "normalize_model_id",
    "usage_from",
]


def _mark(msg: dict[str, Any], marker: dict[str, Any]) -> dict[str, Any]:
    msg = copy.deepcopy(msg)
    content = msg.get("content")
    if msg.get("role") == "tool":  # on the tool_result block itself, not inside it
        msg["cache_control"] = dict(marker)
    elif isinstance(content, str) and content:
        msg["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
    elif isinstance(content, list) and content:
        content[-1]["cache_control"] = dict(marker)
    else:  # no parts (a tool-call-only turn): the encoder puts it on the turn's last block
        msg["cache_control"] = dict(marker)
    return msg


def apply_cache_layout(
    messages: list[dict[str, Any]], *, ttl: Literal["5m", "1h"] | None = None
) -> list[dict[str, Any]]:
    """Prompt caching without placing breakpoints yourself: mark the first system
    message and the last 3 other messages (4 breakpoints, Anthropic's maximum).

    Returns new message dicts; the caller's list is untouched. ``ttl="1h"`` asks for the
    one-hour cache (default five minutes)::

        request["messages"] = apply_cache_layout(request["messages"], ttl="1h")
    """
    marker: dict[str, Any] = {"type": "ephemeral"}
    if ttl == "1h":
        marker["ttl"] = "1h"
    elif ttl not in (None, "5m"):
        raise ValueError("ttl must be '5m' or '1h'")
    out = list(messages)
    used = 0
    if out and out[0].get("role") in ("system", "developer"):
        out[0] = _mark(out[0], marker)
        used = 1
    others = [i for i, m in enumerate(out) if m.get("role") not in ("system", "developer")]
    for i in others[-(MAX_BREAKPOINTS - used):]:
        out[i] = _mark(out[i], marker)
    return out
