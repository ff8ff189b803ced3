"""Anthropic Messages codec (``api_mode="anthropic_messages"``), sans-IO, both directions.

Public surface (:class:`~modelwire.codecs.base.Codec`, plus what this protocol adds):

* :func:`encode_request` (Request + Target -> EncodedRequest), :func:`decode_request`
  (a front door's body + headers -> Request);
* :func:`decode_response`, :func:`encode_response`, :func:`decode_error`;
* :class:`StreamDecoder`, :class:`StreamEncoder`;
* :func:`apply_cache_layout` (from :mod:`modelwire.messages`): the optional "system and
  last 3 messages" cache layout; the encoder puts a message-level mark on the turn's
  last block and keeps at most 4 marks in all (:func:`limit_cache_breakpoints`);
* :func:`auth_token`: the caller key from ``x-api-key`` or ``Authorization: Bearer``.

The files, as every codec's: ``request`` (body, headers, betas; the front door's
direction in ``_decode_request``), ``response`` (usage, stop reasons, bodies ->
Completion), ``stream`` (SSE -> events), ``encode`` (bodies and SSE for a gateway's
answers), ``errors``; helpers ``_models`` (model families as data), ``_tools`` (schemas,
ids, tool_choice) and ``_convert`` (messages).
"""

from __future__ import annotations

from ...messages import apply_cache_layout
from ._decode_request import auth_token
from ._models import family_for, normalize_model_id
from .encode import StreamEncoder, encode_response
from .errors import decode_error
from .request import (
    MAX_BREAKPOINTS,
    decode_request,
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
