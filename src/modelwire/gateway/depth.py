"""Nesting depth of a request, checked at the door: a 400 that names the limit.

orjson parses 1,023 levels but writes only 254, and the codecs' recursive walks (tool
schema normalizers) run out of stack before that: an over-deep body was a 500. The
check runs on the parsed body, and a small body with no more brackets than the limit
(no value in it can be that deep) skips it.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..types import JSONValue
from .depth_orjson import exceeds
from .errors import GatewayError

__all__ = ["check_depth", "depth_exceeds"]

_SCHEMA_KEYS = ("parameters", "input_schema")  # Chat/Responses tools, Anthropic tools


def depth_exceeds(value: JSONValue, limit: int, skip: frozenset[int] = frozenset()) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (the value
    itself is level 1); walks iteratively and stops at the first level past it. Containers
    whose ``id`` is in ``skip`` are not entered (their depth is known already)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, level = pop()
        if level > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)) and id(child) not in skip:
                push((child, level + 1))
    return False


def _brackets(body: bytes) -> int:
    return body.count(b"{") + body.count(b"[")


def _schema_brackets(schema: JSONValue) -> int:
    try:
        return _brackets(orjson.dumps(schema))
    except orjson.JSONEncodeError:  # orjson writes 254 levels at most: deeper than any limit
        return 1 << 30


_COUNTED = 4 * 1024  # counting brackets costs ~1 ns a byte: past this, orjson answers sooner
_SCHEMA_LEVEL = 5  # a schema's own level in the body: body, tools, tool, function, schema


def _schemas(data: dict[str, Any]) -> list[Any]:
    tools = data.get("tools")
    if not isinstance(tools, list):
        return []
    found = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        holder = function if isinstance(function, dict) else tool
        for key in _SCHEMA_KEYS:
            schema = holder.get(key)
            if isinstance(schema, (dict, list)):
                found.append(schema)
    return found


def check_depth(body: bytes, data: dict[str, Any], max_body: int, max_schema: int) -> None:
    """Raise a 400 when the body nests more than ``max_body`` levels, or a tool's schema
    more than ``max_schema`` (``gateway.max_json_depth``, ``gateway.max_schema_depth``).
    ``data`` is ``body`` as ``orjson.loads`` read it.

    A small body with no more brackets than a limit cannot nest deeper: it passes on the
    count. Otherwise orjson tells, in C (:mod:`.depth_orjson`); where it cannot, walks do.
    An agent's tools are most of its body: when the tools list as a whole is shallow
    enough, no schema in it can be too deep, and the body's check leaves it out."""
    brackets = _brackets(body) if len(body) <= _COUNTED else len(body)
    if brackets <= min(max_body, max_schema):
        return
    tools = data.get("tools")
    # a schema is at level 3 or 4 of the tools list (tools[i].input_schema,
    # tools[i].function.parameters): a list within max_schema + 2 levels holds none deeper
    shallow = isinstance(tools, list) and exceeds(tools, max_schema + _SCHEMA_LEVEL - 3) is False
    if not shallow:
        _check_schemas(_schemas(data), max_schema)
    if brackets <= max_body:
        return
    if shallow and max_schema + _SCHEMA_LEVEL - 2 <= max_body:
        # the tools are within the body's limit: the rest decides (in a list, one level
        # as in the body)
        deep = exceeds([value for key, value in data.items() if key != "tools"], max_body)
    else:
        deep = exceeds(data, max_body)
    if deep is None:
        schemas = _schemas(data)
        # the schemas are within max_schema levels of their own, at level 5 of the body
        skip = frozenset(map(id, schemas)) if max_schema + _SCHEMA_LEVEL - 1 <= max_body else frozenset()
        deep = depth_exceeds(data, max_body, skip)
    if deep:
        raise GatewayError(400, f"request body nests deeper than {max_body} levels, the gateway's "
                                "limit (gateway.max_json_depth)", "too_deep")


def _check_schemas(schemas: list[Any], max_schema: int) -> None:
    # in one list, each schema is a level deeper than on its own
    deep = exceeds(schemas, max_schema + 1) if schemas else False
    if deep is None:
        deep = any(_schema_brackets(schema) > max_schema and depth_exceeds(schema, max_schema)
                   for schema in schemas)
    if deep:
        raise GatewayError(400, f"a tool's schema nests deeper than {max_schema} levels, the "
                                "gateway's limit (gateway.max_schema_depth)", "too_deep")
