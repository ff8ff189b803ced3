"""The OpenAI Responses API codec (``POST /responses``), sans-IO.

Public surface, as every codec (:class:`~modelwire.codecs.base.Codec`):
:func:`encode_request`, :func:`decode_request`, :func:`encode_response`,
:func:`decode_response`, :func:`decode_error`, :class:`StreamDecoder`,
:class:`StreamEncoder`. The files, as every codec's: ``request`` (internal request ->
body: input items, tools, settings; the front door's direction in ``_decode_request``),
``response`` (output items, usage, finish reasons -> Completion), ``stream`` (SSE ->
events), ``encode`` (``response`` objects and SSE for a gateway's answers), ``errors``;
helpers ``_namespaces``, ``_shell``, ``_hosted``.

Reasoning blocks decoded here carry the issuer ``"openai"`` unless the caller
passes the profile's own (``"azure"``, ``"deepseek"``, ``"openrouter"``...):
``encrypted_content`` is sealed to whoever minted it.
"""

from __future__ import annotations

from .encode import StreamEncoder, encode_response
from .errors import decode_error
from .request import decode_request, encode_request
from .response import decode_response, usage_in
from .stream import StreamDecoder

__all__ = [
    "STOP_SEQUENCES",
    "StreamDecoder",
    "StreamEncoder",
    "decode_error",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "usage_in",
]

# the Responses API has no stop sequences: the Client applies them to the answer (modelwire.messages.stops)
STOP_SEQUENCES = False
