"""Anthropic Messages codec (``api_mode="anthropic_messages"``), sans-IO, both directions.

Public surface (see docs/contracts.md):

* :func:`encode_request` (Request + Target -> EncodedRequest), :func:`decode_request`
  (a front door's body + headers -> Request);
* :func:`decode_response`, :func:`encode_response`, :func:`decode_error`;
* :class:`StreamDecoder`, :class:`StreamEncoder`;
* :func:`apply_cache_layout` (from :mod:`modelwire.messages`): the optional "system and
  last 3 messages" cache layout; the encoder puts a message-level mark on the turn's
  last block and keeps at most 4 marks in all (:func:`limit_cache_breakpoints`);
* :func:`auth_token`: the caller key from ``x-api-key`` or ``Authorization: Bearer``.

The implementation lives in private modules: ``_anthropic_models`` (model families as
data), ``_anthropic_tools`` (schemas, ids, tool_choice), ``_anthropic_convert``
(messages), ``_anthropic_request`` (body, headers, betas), ``_anthropic_decode_request``,
``_anthropic_response`` (usage, stop reasons, errors, bodies) and ``_anthropic_stream``.
"""

from __future__ import annotations

from ...messages import apply_cache_layout
from ._decode_request import auth_token, decode_request
from ._models import family_for, normalize_model_id
from .encode import StreamEncoder, encode_response
from .errors import decode_error
from .request import (
    MAX_BREAKPOINTS,
    encode_request,
    limit_cache_breakpoints,
    supports_mid_system,
)
from .response import decode_response, usage_from
from .stream import StreamDecoder

__all__ = [
    "MAX_BREAKPOINTS",
    "STOP_SEQUENCES",
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
    "supports_mid_system",
    "usage_from",
]

# the endpoint stops at the request's stop sequences itself
STOP_SEQUENCES = True
