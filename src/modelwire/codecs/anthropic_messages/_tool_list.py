"""An agent's tools, converted once as a whole: :func:`encode_tools` through the caller's
:class:`~modelwire.codecs.cache.EncodeCache` (speed only; the bytes sent are the same,
which a property test checks).

An agent sends the same tools every turn. The whole list's JSON (one ``orjson.dumps``)
is the key, with everything else the conversion reads: the profile, whether arguments
stream eagerly, the front door a native tool came through. The value is the converted
``tools`` array as one ``orjson.Fragment``, with its ``cache_control`` marks (the
breakpoint limit counts them). A list not found is converted through the per-schema
cache, so a list that changed by one tool converts only that tool's schema.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...wire import ProviderProfile
from ..cache import Converted, EncodeCache
from ._tools import encode_tools

__all__ = ["kept_tools"]

log = logging.getLogger("modelwire.codecs.anthropic")


def kept_tools(
    tools: list[Any], profile: ProviderProfile, *, eager: bool, request: Mapping[str, object], cache: EncodeCache
) -> Converted | None:
    """``encode_tools(tools, ...)`` from ``cache`` or converted into it; its facts: how
    many tools carry ``cache_control``. None where the cache does not apply."""
    metadata = request.get("metadata")
    source = metadata.get("source_api") if isinstance(metadata, dict) else None
    if source is not None and not isinstance(source, str):
        return None  # native_tool reads it: it is part of the key

    def convert(specs: list[dict[str, Any]], notes: list[tuple[Any, ...]]) -> tuple[Any, int]:
        out = encode_tools(specs, profile, eager=eager, request=request, cache=cache, warnings=notes)
        return out, sum(1 for t in out if "cache_control" in t)

    return cache.whole(("anthropic_messages.tools", profile, eager, source), tools, convert, log)
