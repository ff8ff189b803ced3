"""Wire codecs, one subpackage per protocol, all sans-IO.

Owns the three codecs (``chat_completions``, ``anthropic_messages``, ``responses``),
each satisfying :class:`~modelwire.codecs.base.Codec` with the same files: ``request``,
``response``, ``stream`` (decoder), ``encode`` (the gateway's answers and streams),
``errors``; and what they share: SSE framing (:mod:`~modelwire.codecs.sse`), stream
failure kinds, tool pieces. :data:`CODECS` maps each api mode to its codec. May import
the bottom floor (``wire``, ``types``, ``events``, ``errors``), ``messages``,
``accumulate``, ``completion`` and ``blockorder``; never providers, transport or above.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..errors import ConfigError
from ..wire import API_MODES, ApiMode, EncodedRequest, Target
from . import anthropic_messages, chat_completions, responses
from .base import Codec
from .tools import FOR_PROTOCOL

__all__ = ["CODECS", "FOR_PROTOCOL", "Codec", "EncodedRequest", "Target", "codec_for"]

_BY_MODE: dict[ApiMode, Codec] = {  # a type checker checks each module against Codec here
    "chat_completions": chat_completions,
    "anthropic_messages": anthropic_messages,
    "responses": responses,
}
CODECS: Mapping[ApiMode, Codec] = MappingProxyType(_BY_MODE)


def codec_for(api_mode: str) -> Codec:
    """The codec for ``chat_completions`` | ``anthropic_messages`` | ``responses``;
    :class:`~modelwire.errors.ConfigError` for any other mode."""
    for mode, codec in CODECS.items():
        if mode == api_mode:
            return codec
    raise ConfigError(f"unknown api_mode {api_mode!r}: expected one of {', '.join(API_MODES)}")
