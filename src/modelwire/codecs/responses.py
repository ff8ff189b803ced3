"""The OpenAI Responses API codec (``POST /responses``), sans-IO.

Public surface, as every codec: :func:`encode_request`, :func:`decode_request`,
:func:`encode_response`, :func:`decode_response`, :func:`decode_error`,
:class:`StreamDecoder`, :class:`StreamEncoder`. The work lives in three private
modules: ``_responses_request`` (input items, tools, settings),
``_responses_response`` (output items, usage, finish reasons, errors) and
``_responses_stream`` (SSE events both ways).

Reasoning blocks decoded here carry the issuer ``"openai"`` unless the caller
passes the profile's own (``"azure"``, ``"deepseek"``, ``"openrouter"``...):
``encrypted_content`` is sealed to whoever minted it.
"""

from __future__ import annotations

from ._responses_request import decode_request, encode_request
from ._responses_response import decode_error, decode_response, encode_response
from ._responses_stream import StreamDecoder, StreamEncoder

__all__ = [
    "StreamDecoder",
    "StreamEncoder",
    "decode_error",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
]
