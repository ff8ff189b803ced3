"""Tools for Anthropic Messages: specs, JSON Schema normalization, tool ids, tool_choice."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from typing import Any

from ...errors import MessageError
from ..cache import EncodeCache
from ..tools import NAMESPACE_KEY, native_tool

__all__ = [
    "encode_tool_choice",
    "encode_tools",
    "input_schema_converter",
    "normalize_schema",
    "sanitize_tool_id",
]

log = logging.getLogger("modelwire.codecs.anthropic")

_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_UNION_KEYS = ("anyOf", "oneOf")


def sanitize_tool_id(tool_id: str) -> str:
    """Anthropic rejects tool ids outside ``[A-Za-z0-9_-]`` (ids minted by other providers,
    e.g. ``call_abc.1`` or ``functions.get:0`` from Kimi). The same function is applied to
    the ``tool_use`` id and the ``tool_result`` ``tool_use_id``, so they stay paired."""
    if tool_id and not _BAD_ID_CHARS.search(tool_id):
        return tool_id
    # a short hash of the original keeps distinct ids distinct ("a.b" and "a:b")
    digest = hashlib.sha256(tool_id.encode()).hexdigest()[:8]
    return f"{_BAD_ID_CHARS.sub('_', tool_id) or 'toolu'}_{digest}"


# ---------------------------------------------------------------- JSON Schema
def normalize_schema(schema: Any) -> dict[str, Any]:
    """A tool input schema Anthropic accepts, as a new dict.

    * the top level must be one ``type: object`` (Anthropic: "input_schema: type must be
      object"; unions at the top are rejected): object branches of a top-level
      ``anyOf``/``oneOf`` are merged (properties united, ``required`` intersected);
    * ``anyOf: [X, {"type": "null"}]`` (pydantic's ``Optional[X]``) collapses to X,
      keeping the outer description/title/default;
    * every ``type: object`` gets ``properties`` (``{}`` when empty) — some
      Anthropic-compatible endpoints (and older Claude versions) reject bare objects.
    """
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    out = _normalize(schema)  # builds every dict and list anew: the caller's stays as it is
    if any(k in out for k in _UNION_KEYS) or out.get("type") != "object":
        out = _merge_top_union(out)
    out.setdefault("properties", {})
    return out


def _normalize(node: Any) -> Any:
    if isinstance(node, list):
        return [_normalize(x) for x in node]
    if not isinstance(node, dict):
        return node
    node = {k: _normalize(v) for k, v in node.items()}
    for key in _UNION_KEYS:
        branches = node.get(key)
        if isinstance(branches, list):
            non_null = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(non_null) == 1 and len(non_null) < len(branches) and isinstance(non_null[0], dict):
                del node[key]
                merged = dict(non_null[0])
                for k, v in node.items():  # outer description/title/default win
                    merged.setdefault(k, v)
                node = merged
    t = node.get("type")
    if t == "object" or (isinstance(t, list) and "object" in t):
        node.setdefault("properties", {})
    return node


def _merge_top_union(node: dict[str, Any]) -> dict[str, Any]:
    branches = []
    for key in _UNION_KEYS:
        branches.extend(b for b in node.pop(key, None) or [] if isinstance(b, dict))
    props: dict[str, Any] = dict(node.get("properties") or {})
    required: set[str] | None = set(node["required"]) if "required" in node else None
    for b in branches:
        if b.get("type") not in ("object", None):
            continue
        props.update(b.get("properties") or {})
        req = set(b.get("required") or [])
        required = req if required is None else required & req
    out = {k: v for k, v in node.items() if k not in ("type", "properties", "required")}
    out = {"type": "object", "properties": props, **out}
    if required:
        out["required"] = sorted(required)
    return out


# --------------------------------------------------------------------- specs
# ToolSpec keys we map; any other top-level key of a function ToolSpec (cache_control,
# defer_loading, input_examples, eager_input_streaming...) is copied onto the
# Anthropic tool as it is, so a same-protocol round trip keeps it.
_SPEC_KEYS = frozenset({"type", "function", NAMESPACE_KEY})  # NAMESPACE_KEY: a Responses upstream's


def input_schema_converter(profile: Any, cache: EncodeCache | None = None) -> Callable[[Any], Any]:
    """A function's parameters -> the ``input_schema`` ``profile`` accepts; with a
    ``cache``, converted once per distinct schema and profile (an ``orjson.Fragment``)."""
    def convert(params: Any) -> dict[str, Any]:
        return profile.sanitize_tool_schema(normalize_schema(params))  # type: ignore[no-any-return]

    return convert if cache is None else cache.converter(("anthropic_messages.input_schema", profile), convert)


def encode_tools(
    tools: list[dict[str, Any]], profile: Any, *, eager: bool, request: Any = None,
    cache: EncodeCache | None = None, warnings: list[tuple[Any, ...]] | None = None,
) -> list[dict[str, Any]]:
    """OpenAI-shaped tool specs -> Anthropic tools. Non-function entries (server tools such
    as ``{"type": "web_search_20250305", "name": "web_search"}``, kept by decode_request)
    go out verbatim. Duplicate names: first wins (Anthropic 400 "Tool names must be
    unique"), with a warning (its ``log.warning`` arguments appended to ``warnings``
    instead, when given). ``cache``: see :func:`input_schema_converter`."""

    def warn(*args: object) -> None:
        if warnings is None:
            log.warning(*args)
        else:
            warnings.append(args)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    input_schema = input_schema_converter(profile, cache)
    for i, spec in enumerate(tools):
        if not isinstance(spec, dict):
            raise MessageError(f"tools[{i}] is not an object")
        if spec.get("type") != "function":
            name = spec.get("name")
            if isinstance(name, str):
                if name in seen:
                    warn("tools[%d]: duplicate tool name %r dropped", i, name)
                    continue
                seen.add(name)
            out.append(native_tool(spec, i, request, "anthropic_messages"))
            continue
        fn = spec.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise MessageError(f"tools[{i}].function.name is missing")
        name = fn["name"]
        if name in seen:
            warn("tools[%d]: duplicate tool name %r dropped (first definition wins)", i, name)
            continue
        seen.add(name)
        schema = input_schema(fn.get("parameters"))
        tool: dict[str, Any] = {"name": name}
        if "description" in fn:
            tool["description"] = fn["description"]
        tool["input_schema"] = schema
        if fn.get("strict") is not None:
            tool["strict"] = fn["strict"]
        for k, v in spec.items():
            if k not in _SPEC_KEYS:
                tool[k] = v
        if eager and "eager_input_streaming" not in tool:
            # fine-grained tool streaming, per tool: arguments stream without buffering.
            # Preferred over the old fine-grained-tool-streaming beta header, which
            # conflicts with some built-in tools.
            tool["eager_input_streaming"] = True
        out.append(tool)
    return out


def encode_tool_choice(choice: Any, parallel: bool | None) -> dict[str, Any] | None:
    """OpenAI tool_choice -> Anthropic. ``None`` return means: send no tool_choice.
    ``"none"`` only reaches here when the history holds tool blocks (see ``request``)."""
    tc: dict[str, Any] | None
    if choice is None:
        tc = {"type": "auto"} if parallel is not None else None
    elif choice == "auto":
        tc = {"type": "auto"}
    elif choice == "none":
        tc = {"type": "none"}
    elif choice == "required":
        tc = {"type": "any"}
    elif isinstance(choice, dict) and choice.get("type") == "function":
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if not isinstance(name, str):
            raise MessageError("tool_choice names no function")
        tc = {"type": "tool", "name": name}
    elif isinstance(choice, dict) and choice.get("type") in ("auto", "any", "tool", "none"):
        tc = dict(choice)  # already Anthropic-shaped (a front door passed it through)
    elif isinstance(choice, str):
        tc = {"type": "tool", "name": choice}
    else:
        raise MessageError(f"tool_choice {choice!r} is not auto, none, required or a function")
    if parallel is not None and tc is not None and tc.get("type") != "none":
        tc["disable_parallel_tool_use"] = not parallel
    return tc


def is_forced(tc: dict[str, Any] | None) -> bool:
    return tc is not None and tc.get("type") in ("any", "tool")
