"""The OpenAI Chat Completions codec, both directions, sans-IO.

* ``encode_request(request, target)``: the internal request -> the body the
  target's profile accepts (``max_tokens`` field name, ``stream_options``,
  reasoning echo per issuer, thinking knob, tool ids, tool choice, vision rules).
* ``decode_request(body, headers=None, *, issuer=None)``: what a gateway front
  door receives -> the internal request (unknown fields kept in ``extra``).
* ``encode_response(completion, request=None, *, created=None)`` /
  ``decode_response(body, *, issuer=None)``: non-stream bodies.
* ``decode_error(status, headers, body)``: every provider's error shape -> the
  most specific :class:`~modelwire.errors.ProviderError`.
* :class:`StreamDecoder` / :class:`StreamEncoder`: SSE both ways.

Reasoning that arrives as text (``reasoning_content``, ``reasoning``, Mistral
thinking parts, inline ``<think>`` tags) becomes ``reasoning_content`` plus one
``{"type": "reasoning_content", "text": ...}`` block tagged with the issuer;
OpenRouter-style ``reasoning_details`` items are kept verbatim (stream pieces
joined by ``index``), also tagged with the issuer.
"""

from __future__ import annotations

from ._common import usage_from_wire
from .encode import StreamEncoder, encode_response
from .errors import decode_error
from .request import decode_request, encode_request, openai_effort
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
    "openai_effort",
    "usage_from_wire",
]

# the endpoint stops at the request's stop sequences itself
STOP_SEQUENCES = True
