"""The door's depth limits, told by orjson's serializer: the same answers as the walk
(the oracle here), to the level, for lists and dicts, at both limits."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.gateway.depth import check_depth, depth_exceeds
from modelwire.gateway.depth_orjson import exceeds, writable_depth
from modelwire.gateway.errors import GatewayError

SCHEMA_REFUSED = "gateway.max_schema_depth"
BODY_REFUSED = "gateway.max_json_depth"


def _nest(kinds: list[str], leaf: Any = None) -> Any:
    """Containers one inside the other, outermost first (``kinds[0]``)."""
    value: Any = ([] if kinds[-1] == "list" else {}) if leaf is None else leaf
    for kind in reversed(kinds[:-1] if leaf is None else kinds):
        value = [value] if kind == "list" else {"k": value}
    return value


def _levels(levels: int, kind: str) -> Any:
    return _nest([kind] * levels)


def _oracle(data: dict[str, Any], max_body: int, max_schema: int) -> str | None:
    """Which 400 the walk gives: the schema's first, then the body's."""
    for tool in data.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        holder: dict[str, Any] = function if isinstance(function, dict) else tool
        for key in ("parameters", "input_schema"):
            schema = holder.get(key)
            if isinstance(schema, (dict, list)) and depth_exceeds(schema, max_schema):
                return SCHEMA_REFUSED
    return BODY_REFUSED if depth_exceeds(data, max_body) else None


def _refusal(body: bytes, max_body: int, max_schema: int) -> str | None:
    try:
        check_depth(body, orjson.loads(body), max_body, max_schema)
    except GatewayError as exc:
        assert exc.http.status == 400 and exc.http.code == "too_deep"
        return SCHEMA_REFUSED if SCHEMA_REFUSED in exc.http.message else BODY_REFUSED
    return None


def test_orjson_writes_254_levels_and_refuses_the_next_with_its_recursion_error() -> None:
    assert writable_depth() == 254
    for kind in ("list", "dict"):
        orjson.dumps(_levels(254, kind))
        with pytest.raises(TypeError) as info:
            orjson.dumps(_levels(255, kind))
        assert str(info.value) == "Recursion limit reached"


def test_what_orjson_loads_gives_it_always_writes_back() -> None:
    # the only refusal left for a parsed value is depth: integers past 64 bits parse as
    # floats, infinities and lone surrogates do not parse at all
    for text in (b"18446744073709551616", b"-9223372036854775809", b"1" + b"0" * 300):
        assert isinstance(orjson.loads(text), float)
        assert exceeds([orjson.loads(text)], 1) is False
    for text in (b"1e400", b'"\\ud800"', b"NaN"):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(text)


def test_a_value_orjson_refuses_for_another_reason_is_left_to_the_walk() -> None:
    for odd in ([1 << 70], [{1, 2}], {"a": [float] * 2}):
        assert exceeds(odd, 5) is None
    # the integer is written before the deep value: orjson's error is not about depth
    for levels, refused in ((130, True), (127, False)):
        data = {"model": "m", "big": 1 << 70, "metadata": _levels(levels, "dict")}
        body = json.dumps(data).encode()
        if refused:
            with pytest.raises(GatewayError, match=BODY_REFUSED):
                check_depth(body, data, 128, 64)
        else:
            check_depth(body, data, 128, 64)


@pytest.mark.parametrize("limit", [0, -3, 255, 10_000])
def test_a_limit_orjson_cannot_express_is_left_to_the_walk(limit: int) -> None:
    assert exceeds([[1]], limit) is None


def _chat_body(schema: Any, metadata: Any = None) -> bytes:
    data = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "metadata": metadata,
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
                      {"type": "function", "function": {"name": "g", "parameters": schema}}]}
    return json.dumps(data).encode()  # the stdlib writes past 254 levels


@pytest.mark.parametrize("kind", ["list", "dict"])
@pytest.mark.parametrize(("max_body", "max_schema"), [(128, 64), (40, 64), (254, 253), (300, 260), (1, 1)],
                         ids=["defaults", "body-lower", "orjsons-own", "past-orjsons", "one-level"])
def test_each_limit_holds_to_the_level(kind: str, max_body: int, max_schema: int) -> None:
    # a schema of exactly max_schema levels passes, one more is the schema's 400
    schema_room = min(max_schema, max_body - 4)  # the schema sits at level 5 of the body
    if schema_room >= 1:
        assert _refusal(_chat_body(_levels(schema_room, kind)), max_body, max_schema) is None
    assert _refusal(_chat_body(_levels(max_schema + 1, kind)), max_body, max_schema) == SCHEMA_REFUSED
    # a body of exactly max_body levels (metadata at level 2) passes, one more is the body's 400
    if max_body >= 5:
        assert _refusal(_chat_body({"type": "object"}, _levels(max_body - 1, kind)), max_body, max_schema) is None
        assert _refusal(_chat_body({"type": "object"}, _levels(max_body, kind)), max_body, max_schema) == BODY_REFUSED


_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.floats(allow_nan=False,
                                                                                       allow_infinity=False)
_side = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8)


@st.composite
def _trees(draw: st.DrawFn, levels: int | None = None) -> Any:
    """A spine of nested lists and dicts with shallow branches beside it at a few levels
    (``levels`` containers in the spine, else any number), then a leaf that may add one."""
    if levels is None:
        levels = draw(st.integers(1, 270))
    kinds = "".join(draw(st.sampled_from(["l", "d"])) for _ in range(min(levels, 8))) * (levels // 8 + 1)
    branches = dict(draw(st.lists(st.tuples(st.integers(0, levels - 1), _side), max_size=4)))
    value: Any = draw(st.sampled_from([[], {}, 1, "x"]))
    for level in reversed(range(levels)):
        side = branches.get(level, 0)
        if kinds[level] == "l":
            value = [value, side] if level in branches else [value]
        else:
            value = {"spine": value, "side": side} if level in branches else {"spine": value}
    return value


def _depth(value: Any) -> int:
    return 1 + max(map(_depth, value.values() if isinstance(value, dict) else value), default=0) \
        if isinstance(value, (dict, list)) else 0


@settings(max_examples=300, deadline=None)
@given(tree=_trees(), offset=st.integers(-2, 2))
def test_orjson_tells_the_depth_the_walk_finds(tree: Any, offset: int) -> None:
    value = orjson.loads(json.dumps(tree))  # as the door has it
    limit = _depth(value) + offset
    told = exceeds(value, limit)
    if 1 <= limit <= 254:
        assert told is depth_exceeds(value, limit)
    else:
        assert told is None


@settings(max_examples=400, deadline=None)
@given(data=st.data(), odd_tool=st.booleans(), shape=st.sampled_from(["chat", "anthropic", "responses"]),
       max_body=st.sampled_from([128, 40, 67, 68, 254, 255, 300]),
       max_schema=st.sampled_from([64, 30, 125, 126, 252, 253, 260]), tools=st.integers(0, 3))
def test_the_door_refuses_what_the_walk_refuses(data: st.DataObject, odd_tool: bool, shape: str, max_body: int,
                                                max_schema: int, tools: int) -> None:
    # depths drawn around each boundary: the schema's, the tools list's as a whole (a deep
    # part of a tool that is not its schema, ``extra``, still counts toward the body) and
    # the body's
    def near(level: int) -> Any:
        return data.draw(_trees(max(1, level + data.draw(st.integers(-2, 1)))))

    def tool(i: int, params: Any) -> dict[str, Any]:
        if shape == "chat":
            return {"type": "function", "function": {"name": f"t{i}", "parameters": params}}
        if shape == "anthropic":
            return {"name": f"t{i}", "input_schema": params}
        return {"type": "function", "name": f"t{i}", "parameters": params}

    listed: list[Any] = [tool(i, {"type": "object"}) for i in range(tools)] + [tool(tools, near(max_schema))]
    extra = data.draw(st.sampled_from([None, max_schema + 1, max_body - 2]))
    if extra is not None:
        listed[0]["extra"] = near(extra)
    if odd_tool:
        listed.append("not a tool")
    body = json.dumps({"model": "m", "metadata": near(max_body - 1), "tools": listed}).encode()
    assert _refusal(body, max_body, max_schema) == _oracle(orjson.loads(body), max_body, max_schema)


@pytest.mark.parametrize(("max_body", "max_schema"), [(128, 64), (67, 64), (128, 126), (128, 125), (300, 64)])
@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_deep_part_of_a_tool_that_is_not_its_schema_counts_toward_the_body(kind: str, max_body: int,
                                                                             max_schema: int) -> None:
    # body, tools, the tool, then the part: it may nest max_body - 3 levels of its own
    def body(levels: int) -> bytes:
        tool = {"name": "t", "input_schema": {"type": "object"}, "extra": _levels(levels, kind)}
        return json.dumps({"model": "m", "tools": [tool, {"name": "u", "input_schema": {}}]}).encode()

    assert _refusal(body(max_body - 3), max_body, max_schema) is None
    assert _refusal(body(max_body - 2), max_body, max_schema) == BODY_REFUSED


@pytest.mark.parametrize(("max_body", "max_schema"), [(32, 64), (67, 64), (68, 64), (300, 297), (300, 296)])
@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_schema_within_its_own_limit_still_counts_toward_the_body(kind: str, max_body: int,
                                                                    max_schema: int) -> None:
    # the schema is at level 5 of a Chat body: it may nest max_body - 4 levels of its own
    assert _refusal(_chat_body(_levels(max_body - 4, kind)), max_body, max_schema) is None
    refused = SCHEMA_REFUSED if max_body - 3 > max_schema else BODY_REFUSED
    assert _refusal(_chat_body(_levels(max_body - 3, kind)), max_body, max_schema) == refused
