"""An agent's tools, converted once as a whole: :func:`encode_tools` through the caller's
:class:`~modelwire.codecs.cache.EncodeCache` (speed only; the bytes sent are the same,
which a property test checks).

An agent sends the same tools every turn. The whole list's JSON (one ``orjson.dumps``)
is the key, with everything else the conversion reads (the profile, whether arguments
stream eagerly, the front door a native tool came through); the value is the converted
``tools`` array as one ``orjson.Fragment`` and the facts the encoder asks of it: its
``cache_control`` marks and the duplicate-name warnings, logged again on every use. A
list that is not found is converted from its bytes parsed back, through the per-schema
cache, so a list that changed by one tool converts only that tool's schema.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson

from ..cache import EncodeCache, Fragment, compact, json_key
from ._tools import encode_tools

__all__ = ["KeptTools", "kept_tools"]

log = logging.getLogger("modelwire.codecs.anthropic")


@dataclass(frozen=True, slots=True)
class KeptTools:
    """A converted ``tools`` array: its JSON, as bytes and as a Fragment for the body."""

    fragment: Any  # orjson.Fragment of ``raw``
    raw: bytes
    marks: int  # tools carrying cache_control
    warnings: tuple[tuple[Any, ...], ...]  # log.warning arguments, one tuple each

    def as_dicts(self) -> list[dict[str, Any]]:
        """The tools as new dicts (to change them)."""
        return orjson.loads(self.raw)  # type: ignore[no-any-return]


def kept_tools(
    tools: list[Any], profile: Any, *, eager: bool, request: Any, cache: EncodeCache
) -> KeptTools | None:
    """``encode_tools(tools, ...)`` from ``cache`` or converted into it; None where the
    cache does not apply (content that is not plain JSON): convert as without one."""
    metadata = request.get("metadata") if isinstance(request, dict) else None
    source = metadata.get("source_api") if isinstance(metadata, dict) else None
    if source is not None and not isinstance(source, str):
        return None  # native_tool reads it: it must be part of the key
    raw = json_key(tools)
    if raw is None:
        return None
    tag = cache.tag(("anthropic_messages.tools", profile, eager, source))
    found: KeptTools | None = cache.find(tag, raw)
    if found is None:
        warnings: list[tuple[Any, ...]] = []
        # converted from the bytes parsed back, as a later request finds them
        converted = encode_tools(orjson.loads(raw), profile, eager=eager, request=request, cache=cache,
                                 warnings=warnings)
        out = compact(orjson.dumps(converted))
        found = KeptTools(Fragment(out), out, sum(1 for t in converted if "cache_control" in t), tuple(warnings))
        cache.keep(tag, raw, found, len(out))
        return found
    for args in found.warnings:
        log.warning(*args)
    return found
