"""The bottom floor: the facts every part that touches the wire stands on.

Owns :data:`ApiMode` (the three protocols, defined once), :class:`Target` (one upstream:
profile, model, credential), :class:`EncodedRequest`, :class:`ProviderProfile` (what an
endpoint speaks and accepts, as data), :class:`EmbeddingSpec`, and the retry hints a
server sends (:mod:`modelwire.wire.retry_hints`). Codecs, providers, transport and
resilience import this floor and never each other. It imports nothing of modelwire but
``errors``, ``types`` and ``events``.
"""

from __future__ import annotations

from .api import API_MODES, ApiMode, protocol_name
from .embedding import EmbeddingEncoding, EmbeddingSpec, InputType
from .profile import AuthStyle, ProviderProfile, ReasoningEcho, ReasoningRequest, ToolIdFormat
from .target import EncodedRequest, Target, auth_headers

__all__ = [
    "API_MODES",
    "ApiMode",
    "AuthStyle",
    "EmbeddingEncoding",
    "EmbeddingSpec",
    "EncodedRequest",
    "InputType",
    "ProviderProfile",
    "ReasoningEcho",
    "ReasoningRequest",
    "Target",
    "ToolIdFormat",
    "auth_headers",
    "protocol_name",
]
