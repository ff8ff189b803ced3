"""Responses ``namespace`` tools in the internal model, which has only flat function names.

A namespace tool is a named group of function (or custom) tools; Codex CLI sends
``multi_agent_v1`` and one per MCP server (``mcp__<server>``), and the model's calls come
back as ``function_call`` items with ``namespace`` and ``name`` apart. Chat Completions and
Anthropic Messages have no groups, so the Responses door flattens each member into a
function named :func:`flat_name` (``<namespace>__<name>``: Codex's own spelling of MCP
tools) and remembers, in the request's metadata, which flat name is which pair; its
encoders split the model's calls back with that table. Each flat spec also carries its
namespace (:data:`NAMESPACE_KEY`), so the Responses encoder can give an upstream that
speaks the Responses API the group back as it came (:func:`regroup`,
:func:`namespaced_calls`); the other encoders leave the mark out.

Every provider takes tool names of at most 64 characters of ``[a-zA-Z0-9_-]``
(OpenAI, Anthropic, Gemini): a joined name that breaks that rule is cut and given a
hash of the pair, so it stays unique and the same for the same pair in every request.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from ..tools import NAMESPACE_KEY

__all__ = ["MAX_TOOL_NAME", "NAMESPACE_KEY", "call_name", "flat_name", "namespace_table", "namespaced_calls",
           "regroup", "spec_table", "split_name"]

MAX_TOOL_NAME = 64
_VALID = re.compile(r"[a-zA-Z0-9_-]+")
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_SEPARATOR = "__"


def flat_name(namespace: str, name: str, *, hashed: bool = False) -> str:
    """The function name a namespaced tool has toward a model without namespaces
    (``hashed``: always the cut-and-hashed form, for a joined name another tool has)."""
    joined = f"{namespace}{_SEPARATOR}{name}"
    if not hashed and len(joined) <= MAX_TOOL_NAME and _VALID.fullmatch(joined):
        return joined
    digest = hashlib.sha256(f"{namespace}\0{name}".encode()).hexdigest()[:8]
    clean = _INVALID_CHAR.sub("_", joined)
    return f"{clean[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def call_name(item: Mapping[str, Any]) -> str:
    """The internal name of a ``function_call`` / ``custom_tool_call`` item: the flat name
    when a Responses server (or a client's echoed history) says its namespace."""
    name = item.get("name")
    name = name if isinstance(name, str) else ""
    namespace = item.get("namespace")
    return flat_name(namespace, name) if isinstance(namespace, str) and namespace else name


def namespace_table(request: Mapping[str, Any] | None) -> Mapping[str, tuple[str, str]]:
    """Flat name -> (namespace, name) for the request's namespaced tools (set by the
    Responses door's decoder; empty for any other request)."""
    meta = (request or {}).get("metadata")
    table = meta.get("namespaces") if isinstance(meta, Mapping) else None
    return table if isinstance(table, Mapping) else {}


def split_name(name: str, table: Mapping[str, tuple[str, str]]) -> tuple[str | None, str]:
    """A call's internal name -> (namespace or None, name as the client declared it)."""
    pair = table.get(name)
    return (pair[0], pair[1]) if pair else (None, name)


def regroup(encoded: list[dict[str, Any]], specs: list[Any]) -> list[dict[str, Any]]:
    """Responses tools (``encoded``, one per spec of ``specs``) with the flattened members
    of a namespace put back in it, at the place of its first member."""
    out: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for tool, spec in zip(encoded, specs):
        mark = spec.get(NAMESPACE_KEY) if isinstance(spec, dict) else None
        if not isinstance(mark, dict) or tool.get("type") != "function":
            out.append(tool)
            continue
        group = groups.get(mark["name"])
        if group is None:
            group = groups[mark["name"]] = {"type": "namespace", "name": mark["name"],
                                            "description": mark.get("description") or "", "tools": []}
            out.append(group)
        group["tools"].append({**tool, "name": mark["member"]})
    return out


def spec_table(specs: list[Any]) -> dict[str, tuple[str, str]]:
    """Flat name -> (namespace, name) from the specs' marks (see :data:`NAMESPACE_KEY`)."""
    table = {}
    for spec in specs:
        mark = spec.get(NAMESPACE_KEY) if isinstance(spec, dict) else None
        fn = spec.get("function") if isinstance(spec, dict) else None
        if isinstance(mark, dict) and isinstance(fn, dict) and isinstance(fn.get("name"), str):
            table[fn["name"]] = (mark["name"], mark["member"])
    return table


def namespaced_calls(items: list[dict[str, Any]], table: Mapping[str, tuple[str, str]]) -> None:
    """Echoed ``function_call`` items of namespace members named as the API names them."""
    for item in items:
        if item.get("type") == "function_call" and item.get("name") in table:
            item["namespace"], item["name"] = table[item["name"]]
