"""Moonshot / Kimi: "Moonshot flavored JSON Schema" for tools, and thinking xor effort.

Moonshot validates tool parameters against a stricter subset of JSON Schema and
rejects the *whole request* with 400 ``tools.function.parameters is not a valid
moonshot flavored json schema`` when one node breaks a rule. The rules below are
the rejection modes reported against the real API (MoonshotAI/kimi-cli#1595,
hermes-agent#14805/#18271/#72254, opencode#40127, pi#5822), each fixed on a copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..types import JSONValue
from ._schema import infer_type, rewrite
from .profile import ProviderProfile

if TYPE_CHECKING:
    from ..wire import Target

__all__ = ["KimiAnthropicProfile", "MoonshotProfile", "sanitize_moonshot_schema"]

_UNIONS = ("anyOf", "oneOf")


def sanitize_moonshot_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` that Moonshot's validator accepts."""
    # Two passes because rewrite() visits children first: the parent's type must
    # reach untyped union branches before those branches get a type inferred.
    return rewrite(rewrite(schema, _push_type_into_unions), _moonshot_node)


def _push_type_into_unions(node: dict[str, Any]) -> dict[str, Any]:
    for union in _UNIONS:
        branches = node.get(union)
        # anyOf made only of empty objects constrains nothing but 400s (#72254);
        # decided here, before the second pass gives untyped `{}` branches a type
        if isinstance(branches, list) and branches and all(map(_is_empty_object, branches)):
            node.pop(union)
            node.setdefault("type", "object")
    kind = node.get("type")
    if isinstance(kind, str) and kind != "null":
        for union in _UNIONS:
            for branch in node.get(union) or ():
                if isinstance(branch, dict) and "type" not in branch:
                    branch["type"] = kind
    return node


def _moonshot_node(node: dict[str, Any]) -> dict[str, Any]:
    # "nullable" is not JSON Schema; Moonshot rejects it (hermes-agent#18271).
    node.pop("nullable", None)
    node = _collapse_null_unions(node)
    _single_type(node)
    union = next((k for k in _UNIONS if k in node), None)
    if union:
        # "when using anyOf, type should be defined in anyOf items instead of the
        # parent schema" (kimi-cli#1595): move the parent's type into the branches.
        parent_type = node.pop("type", None)
        for branch in node[union]:
            if isinstance(branch, dict) and "type" not in branch:
                branch["type"] = parent_type or infer_type(branch) or "string"
        return node
    if "allOf" in node:
        return node
    if "type" not in node:
        # "<At path 'properties.x'>: type is not defined" (opencode#40127): every
        # schema node needs an explicit type; an untyped leaf is sent as a string.
        node["type"] = infer_type(node) or "string"
    _clean_enum(node)
    return node


def _collapse_null_unions(node: dict[str, Any]) -> dict[str, Any]:
    for union in _UNIONS:
        branches = node.get(union)
        if not isinstance(branches, list):
            continue
        # anyOf [X, {type: null}] means "optional X": Moonshot rejects null branches.
        kept = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
        if len(kept) == 1 and isinstance(kept[0], dict):
            node.pop(union)
            merged = {k: v for k, v in node.items() if k != "type"}
            merged.update(kept[0])
            return _moonshot_node(merged)  # the merged node gets the scalar rules too
        node[union] = kept
    return node


def _is_empty_object(branch: JSONValue) -> bool:
    if not isinstance(branch, dict):
        return False
    rest = {k: v for k, v in branch.items() if k not in ("type", "properties", "required")}
    return (
        not rest
        and branch.get("type", "object") == "object"
        and not branch.get("properties")
        and not branch.get("required")
    )


def _single_type(node: dict[str, Any]) -> None:
    # a type list ["string", "null"] is the other spelling of "nullable"; keep the real type.
    kinds = node.get("type")
    if isinstance(kinds, list):
        real = [k for k in kinds if k != "null"]
        node["type"] = real[0] if real else "string"


def _clean_enum(node: dict[str, Any]) -> None:
    # null and "" inside a scalar enum are rejected (hermes-agent#18271).
    values = node.get("enum")
    if isinstance(values, list) and node.get("type") not in ("object", "array"):
        cleaned = [v for v in values if v is not None and v != ""]
        if cleaned:
            node["enum"] = cleaned
        else:
            node.pop("enum")


@dataclass(frozen=True, slots=True)
class MoonshotProfile(ProviderProfile):
    """Moonshot / Kimi (api.moonshot.ai, api.moonshot.cn)."""

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return sanitize_moonshot_schema(schema)

    def patch_body(self, body: dict[str, Any], target: Target) -> dict[str, Any]:
        # Kimi answers 400 "cannot specify both" when a body carries both the
        # thinking flag and reasoning_effort (hermes-behaviours 2.4): keep the flag.
        if "thinking" in body and "reasoning_effort" in body:
            body = {k: v for k, v in body.items() if k != "reasoning_effort"}
        return body


@dataclass(frozen=True, slots=True)
class KimiAnthropicProfile(ProviderProfile):
    """Kimi's Anthropic-compatible endpoint (api.moonshot.ai/anthropic)."""

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return sanitize_moonshot_schema(schema)  # the same validator behind both doors

    def patch_body(self, body: dict[str, Any], target: Target) -> dict[str, Any]:
        # Kimi drives reasoning server-side: Anthropic's thinking and output_config.effort
        # are never sent there (hermes-behaviours 2.4, #13848, #13826)
        thinking = body.get("thinking")
        body = {k: v for k, v in body.items() if k != "thinking"}
        if thinking and body.get("temperature") == 1:
            del body["temperature"]  # forced to 1 only because of the thinking just dropped
        config = body.get("output_config")
        if isinstance(config, dict) and "effort" in config:
            rest = {k: v for k, v in config.items() if k != "effort"}
            if rest:
                body["output_config"] = rest
            else:
                del body["output_config"]
        return body
