"""Google Gemini (OpenAI-compatible endpoint): the schema subset function declarations take.

Gemini turns tool parameters into its ``Schema`` proto, an OpenAPI 3.0 subset,
and rejects the whole request on the first field the proto lacks: ``Invalid JSON
payload received. Unknown name "const" | "$schema" | "additionalProperties" |
"exclusiveMinimum" ...: Cannot find field`` (zed#44875, 5ire#42, CLIProxyAPI#97,
pizza-bot#62), and ``Proto field is not repeating, cannot start list`` for
``type: [..]`` lists (zed#53919). The sanitizer keeps the proto's fields,
rewrites what has an equivalent (``const`` -> ``enum``, ``oneOf`` -> ``anyOf``,
``type`` lists -> ``nullable``, local ``$ref`` inlined) and drops the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..types import JSONValue
from .profile import ProviderProfile

__all__ = ["GeminiProfile", "sanitize_gemini_schema"]

# Fields of Gemini's Schema proto (ai.google.dev/api/caching#Schema).
_KEEP = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
    "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
    "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum",
})
# The formats the proto documents per type; others are rejected.
_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"},
            "integer": {"int32", "int64"}}
_MAX_REF_DEPTH = 8  # recursive $ref chains are cut to a plain object here


def sanitize_gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` inside Gemini's function-declaration subset."""
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            defs.update({f"#/{key}/{name}": v for name, v in schema[key].items()})
    return _node(schema, defs, 0)


def _node(schema: JSONValue, defs: dict[str, Any], depth: int) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}  # `true` schemas: anything goes
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref)
        if target is None or depth >= _MAX_REF_DEPTH:
            return {"type": "object", "description": schema.get("description", "")} \
                if schema.get("description") else {"type": "object"}
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return _node(merged, defs, depth + 1)
    schema = _merge_all_of(schema)
    out: dict[str, Any] = {}
    _set_type(schema, out)
    for key, value in schema.items():
        if key == "type" or key not in _KEEP and key not in ("const", "oneOf"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _node(v, defs, depth) for name, v in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = _node(value, defs, depth)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            branches = [b for b in value if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(branches) < len(value):
                out["nullable"] = True
            out["anyOf"] = [_node(b, defs, depth) for b in branches]
        elif key == "const":
            out["enum"] = [value]
        elif key not in ("items", "properties"):
            out[key] = value
    return _finish(out)


def _merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    parts = schema.get("allOf")
    if not isinstance(parts, list):
        return schema
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for part in parts:
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required" and isinstance(value, list):
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _set_type(schema: dict[str, Any], out: dict[str, Any]) -> None:
    kind = schema.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        if len(real) < len(kind):
            out["nullable"] = True
        kind = real[0] if real else None
    if isinstance(kind, str) and kind != "null":
        out["type"] = kind


def _finish(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if "format" in out and out["format"] not in _FORMATS.get(kind or "", ()):
        del out["format"]
    if "enum" in out:
        # Gemini enums are string-only ("enum" is for STRING type): a string enum
        # keeps its values, any other enum is dropped (the type still holds)
        values = [v for v in out["enum"] if v is not None]
        if len(values) < len(out["enum"]):
            out["nullable"] = True
        if kind in (None, "string") and values and all(isinstance(v, str) for v in values):
            out["enum"] = values
            out["type"] = "string"
        else:
            del out["enum"]
    if "anyOf" in out:
        if not out["anyOf"]:
            del out["anyOf"]
        elif len(out["anyOf"]) == 1:
            only = out.pop("anyOf")[0]
            out = {**only, **{k: v for k, v in out.items() if k != "type"}}
    props = out.get("properties")
    if isinstance(out.get("required"), list):
        # names outside properties make Gemini answer 400 "property is not defined"
        out["required"] = [r for r in out["required"] if isinstance(props, dict) and r in props]
        if not out["required"]:
            del out["required"]
    return out


@dataclass(frozen=True, slots=True)
class GeminiProfile(ProviderProfile):
    """Gemini via https://generativelanguage.googleapis.com/v1beta/openai."""

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return sanitize_gemini_schema(schema)
