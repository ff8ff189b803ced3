"""xAI (Grok) over the Responses API: tool schemas without ``pattern``/``format``,
``reasoning.effort`` only where a model takes it.

xAI's Responses endpoint rejects tool schemas carrying ``pattern`` or ``format``
and enums whose values contain ``/`` (hermes-agent#27197). The fix is made on a
copy: stripping in place once poisoned the shared tool list for every later
non-xAI call (hermes-agent#27907). Only the grok-3-mini family takes
``reasoning.effort``; grok-4, grok-4-fast, grok-3, grok-code-fast and
grok-4.20 answer 400 to it (they reason on their own), and ``service_tier`` is
not an xAI field (hermes-behaviours 2.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._schema import rewrite
from .profile import ProviderProfile

if TYPE_CHECKING:
    from ..wire import Target

__all__ = ["XAIProfile", "sanitize_xai_schema", "takes_effort"]


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

    def patch_body(self, body: dict[str, Any], target: Target) -> dict[str, Any]:
        body = {k: v for k, v in body.items() if k != "service_tier"}
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict) and "effort" in reasoning and not takes_effort(target.model):
            # the encrypted reasoning stays requested (include); only the knob goes
            del body["reasoning"]
        return body


def takes_effort(model: str) -> bool:
    """Whether an xAI model accepts ``reasoning.effort`` (the grok-3-mini family)."""
    return "grok-3-mini" in model.lower()
