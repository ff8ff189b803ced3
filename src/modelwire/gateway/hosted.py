"""Hosted tools a client asks for that the upstream cannot run (Responses' ``web_search``...).

A hosted tool is one the provider runs itself (``web_search``, ``file_search``,
``code_interpreter``, ``image_generation``, ``tool_search``, ``computer_use_preview``,
remote ``mcp``...). Codex CLI sends ``web_search`` in its default request; a Chat
Completions or Anthropic upstream has no such tool, and refusing the request would make
the default configuration unusable. ``gateway.unsupported_tools`` decides:

* ``drop`` (the default): the tool is left out of the upstream request, the answer says
  so in ``x-modelwire-dropped-tools`` and the log has a warning;
* ``refuse``: the request is a 400 naming the tool (the codecs' own refusal);
* ``map``: the upstream's own equivalent where one exists (Anthropic's paid web search
  server tool for ``web_search``), opt-in because it costs money the user did not ask to
  spend; a tool without an equivalent is dropped as under ``drop``.

Function tools (namespace members included, already flattened by the Responses door)
are never touched; an upstream that speaks the door's protocol gets the hosted tools as
they came.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..codecs import FOR_PROTOCOL
from ..types import JSONValue

__all__ = ["HOSTED_EQUIVALENTS", "ToolFit", "fit_tools"]

log = logging.getLogger("modelwire.gateway")

# Responses hosted tool type -> upstream protocol -> that protocol's own tool
# (Anthropic: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool)
HOSTED_EQUIVALENTS: Mapping[str, Mapping[str, dict[str, Any]]] = {
    "web_search": {"anthropic_messages": {"type": "web_search_20250305", "name": "web_search"}},
    "web_search_preview": {"anthropic_messages": {"type": "web_search_20250305", "name": "web_search"}},
}


@dataclass(frozen=True, slots=True)
class ToolFit:
    """The tools to send and what happened to the others."""

    tools: list[Any]
    dropped: tuple[str, ...] = ()
    mapped: tuple[str, ...] = ()  # tool types replaced by the upstream's equivalent


def _is_function(tool: JSONValue) -> bool:
    return not isinstance(tool, dict) or tool.get("type", "function") == "function"


def fit_tools(tools: Sequence[Any], door: str, upstream: str, mode: str) -> ToolFit:
    """The request's tools for an upstream speaking ``upstream``, under ``mode``."""
    if upstream == door or mode == "refuse" or all(_is_function(t) for t in tools):
        return ToolFit(list(tools))
    kept: list[Any] = []
    dropped: list[str] = []
    mapped: list[str] = []
    for tool in tools:
        if _is_function(tool):
            kept.append(tool)
            continue
        kind = str(tool.get("type"))
        equivalent = HOSTED_EQUIVALENTS.get(kind, {}).get(upstream) if mode == "map" else None
        if equivalent is not None and not any(t.get("name") == equivalent["name"] for t in kept
                                              if isinstance(t, dict)):
            kept.append({**equivalent, FOR_PROTOCOL: upstream})
            mapped.append(kind)
        elif equivalent is None:
            dropped.append(kind)
    if dropped:
        log.warning("tools the upstream cannot run left out of the request: %s "
                    "(gateway.unsupported_tools: refuse makes this a 400, map uses the upstream's "
                    "own equivalent where one exists)", ", ".join(dropped))
    return ToolFit(kept, tuple(dropped), tuple(mapped))
