"""Wire codecs, one module per protocol, all sans-IO.

Each of ``chat_completions``, ``anthropic_messages`` and ``responses`` exposes
``encode_request``, ``decode_request``, ``encode_response``,
``decode_response``, ``decode_error``, ``StreamDecoder`` and
``StreamEncoder``. :func:`codec_for` picks one by api mode.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["FOR_PROTOCOL", "EncodedRequest", "Target", "codec_for"]

from ._target import FOR_PROTOCOL, EncodedRequest, Target

_LOADED: dict[str, ModuleType] = {}


def codec_for(api_mode: str) -> ModuleType:
    """The codec module for ``chat_completions`` | ``anthropic_messages`` | ``responses``."""
    codec = _LOADED.get(api_mode)
    if codec is not None:  # the gateway asks per request; import_module is ~5 us a call
        return codec
    if api_mode not in ("chat_completions", "anthropic_messages", "responses"):
        from ..errors import ConfigError

        raise ConfigError(
            f"unknown api_mode {api_mode!r}: expected chat_completions, anthropic_messages or responses"
        )
    codec = _LOADED[api_mode] = importlib.import_module(f"modelwire.codecs.{api_mode}")
    return codec
