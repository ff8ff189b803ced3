"""xAI (Grok) over the Responses API: tool schemas without ``pattern``/``format``.

xAI's Responses endpoint rejects tool schemas carrying ``pattern`` or ``format``
and enums whose values contain ``/`` (hermes-agent#27197). The fix is made on a
copy: stripping in place once poisoned the shared tool list for every later
non-xAI call (hermes-agent#27907).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._schema import rewrite
from .profile import ProviderProfile

__all__ = ["XAIProfile", "sanitize_xai_schema"]


def sanitize_xai_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without the keywords xAI rejects."""
    return rewrite(schema, _xai_node)


def _xai_node(node: dict[str, Any]) -> dict[str, Any]:
    node.pop("pattern", None)
    node.pop("format", None)
    values = node.get("enum")
    if isinstance(values, list) and any(isinstance(v, str) and "/" in v for v in values):
        # the values survive as a hint in the description, the constraint does not
        listed = ", ".join(str(v) for v in values)
        hint = f"One of: {listed}."
        node["description"] = f"{node['description']} {hint}" if node.get("description") else hint
        node.pop("enum")
    return node


@dataclass(frozen=True, slots=True)
class XAIProfile(ProviderProfile):
    """xAI: https://api.x.ai/v1, Responses API."""

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return sanitize_xai_schema(schema)
