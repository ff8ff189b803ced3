"""Walking JSON Schemas for the per-provider tool-schema sanitizers.

Sanitizers never touch the caller's schema: :func:`rewrite` builds a new tree.
Only *schema positions* are visited (the values under ``properties``, ``items``,
``anyOf`` ...), never the maps that hold them, so a property named ``type`` or
``format`` is never mistaken for a keyword.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..types import JSONValue

__all__ = ["JSON_TYPES", "infer_type", "rewrite"]

Schema = dict[str, Any]
Rule = Callable[[Schema], Schema]

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

# keywords whose value is one schema
_SINGLE = ("items", "additionalProperties", "not", "contains", "propertyNames",
           "if", "then", "else", "unevaluatedItems", "unevaluatedProperties")
# keywords whose value is a list of schemas
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
# keywords whose value maps names to schemas
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def rewrite(schema: JSONValue, rule: Rule) -> Any:
    """A new schema: ``rule`` applied to every schema node, children first.

    ``rule`` receives a fresh dict it may change and return (or replace).
    Non-dict schemas (``true``/``false``) are returned as they are.
    """
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    node: Schema = {}
    for key, value in schema.items():
        if key in _SINGLE and isinstance(value, dict):
            node[key] = rewrite(value, rule)
        elif isinstance(value, list) and (key in _LISTS or key == "items"):  # items: draft-4 tuples
            node[key] = [rewrite(v, rule) for v in value]
        elif key in _MAPS and isinstance(value, dict):
            node[key] = {name: rewrite(v, rule) for name, v in value.items()}
        else:
            node[key] = copy.deepcopy(value)
    return rule(node)


def infer_type(node: Schema) -> str | None:
    """The JSON type a node without ``type`` evidently has (from enum, const, shape)."""
    values = node.get("enum")
    if "const" in node:
        values = [node["const"]]
    if isinstance(values, list):
        for value in values:
            kind = _type_of(value)
            if kind != "null":
                return kind
    if "properties" in node or "additionalProperties" in node or "required" in node:
        return "object"
    if "items" in node or "prefixItems" in node:
        return "array"
    return None


def _type_of(value: JSONValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"
