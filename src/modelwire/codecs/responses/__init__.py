"""The OpenAI Responses API codec (``POST /responses``), sans-IO.

Public surface, as every codec: :func:`encode_request`, :func:`decode_request`,
:func:`encode_response`, :func:`decode_response`, :func:`decode_error`,
:class:`StreamDecoder`, :class:`StreamEncoder`. The work lives in private modules:
``_responses_request`` (internal request -> body: input items, tools, settings),
``_responses_decode`` (a front door's body -> internal request),
``_responses_response`` (output items, usage, finish reasons, errors),
``_responses_stream`` (SSE -> events) and ``_responses_encoder`` (events -> SSE).

Reasoning blocks decoded here carry the issuer ``"openai"`` unless the caller
passes the profile's own (``"azure"``, ``"deepseek"``, ``"openrouter"``...):
``encrypted_content`` is sealed to whoever minted it.
"""

from __future__ import annotations

from .encode import StreamEncoder, encode_response
from .errors import decode_error
from .request import decode_request, encode_request
from .response import decode_response
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
]

# the Responses API has no stop sequences: the Client applies them to the answer (modelwire.messages.stops)
STOP_SEQUENCES = False
