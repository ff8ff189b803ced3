"""Another protocol's hosted-tool blocks as Responses output items.

An Anthropic upstream running its web search server tool (the gateway's
``unsupported_tools: map``) answers ``server_tool_use`` and ``web_search_tool_result``
blocks, which reach the Responses door as passthrough blocks. A Responses client knows
``web_search_call`` items, not those: the search becomes one, with its query; the result
block, whose findings the model's text and its citations already carry, has no Responses
item and is left out. Responses' own items pass as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["output_item"]

# Anthropic blocks a Responses output has no item for (the model's text carries their content)
_RESULT_SUFFIX = "_tool_result"
_ANTHROPIC_ONLY = frozenset({"server_tool_use", "mcp_tool_use", "container_upload"})


def output_item(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Responses output item for a passthrough block, or None when there is none."""
    kind = block.get("type")
    if not isinstance(kind, str):
        return None
    if kind == "server_tool_use" and block.get("name") == "web_search":
        query = block.get("input", {}).get("query") if isinstance(block.get("input"), Mapping) else None
        action: dict[str, Any] = {"type": "search"}
        if isinstance(query, str):
            action["query"] = query
        item: dict[str, Any] = {"type": "web_search_call", "status": "completed", "action": action}
        if isinstance(block.get("id"), str):
            item["id"] = "ws_" + block["id"].removeprefix("srvtoolu_")
        return item
    if kind in _ANTHROPIC_ONLY or kind.endswith(_RESULT_SUFFIX):
        return None
    return dict(block)
