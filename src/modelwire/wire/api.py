"""The three wire protocols modelwire speaks, named once.

``ApiMode`` is a plain string on the wire and in ``modelwire.yaml``; :data:`API_MODES`
is the same closed set as a tuple, for validation and messages.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

__all__ = ["API_MODES", "ApiMode", "protocol_name"]

ApiMode: TypeAlias = Literal["chat_completions", "anthropic_messages", "responses"]
API_MODES: tuple[ApiMode, ...] = get_args(ApiMode)

_PROTOCOL_NAMES: dict[str, str] = {"chat_completions": "Chat Completions",
                                   "anthropic_messages": "Anthropic Messages",
                                   "responses": "the Responses API"}


def protocol_name(api: str) -> str:
    """``chat_completions`` -> ``Chat Completions``, for messages a person reads."""
    return _PROTOCOL_NAMES.get(api, api)
