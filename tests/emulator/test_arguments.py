"""Tool arguments the deterministic model builds are valid against the tool's schema."""

from __future__ import annotations

import datetime
import re
import uuid
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelwire.emulator.arguments import build_arguments

FORMATS = ["date-time", "date", "time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname"]
NAMES = ["city", "path", "file_path", "command", "query", "timezone", "url", "id", "bash_id",
         "count", "limit", "text", "name", "expression", "unit", "pattern", "todos", "x", "flag"]
TEXTS = ["What is 17 times 23?", "What's the weather in Paris in fahrenheit?",
         "read src/app.py and README.md", "fetch https://example.com/a?b=1 now",
         'search for "needle" in 3 files', "run `ls -la` with a timeout of 30",
         "limit 500000 results, count -7.5", "Count the words in: the quick brown fox",
         "time in Europe/Paris or UTC", "mail bob@example.org", "", "yes enable flag"]


# without rfc3339-validator installed, jsonschema checks "time" by draft 3's rule (no
# offset), which contradicts RFC 3339's full-time; test_formats... checks it instead
_CHECKER = jsonschema.FormatChecker([f for f in jsonschema.FormatChecker.checkers if f != "time"])


def _validate(schema: dict[str, Any], value: Any) -> None:
    validator = jsonschema.Draft202012Validator(schema, format_checker=_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]
    assert not errors, (value, errors)


@st.composite
def _integer(draw: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
    low = draw(st.none() | st.integers(-1000, 1000))
    if draw(st.booleans()):
        step = draw(st.integers(1, 7))
        schema["multipleOf"] = step
        if low is not None:  # bounds on the grid, so a multiple always fits
            schema["minimum"] = low * step
            schema["maximum"] = (low + draw(st.integers(0, 5))) * step
        return schema
    if low is not None:
        key = draw(st.sampled_from(["minimum", "exclusiveMinimum"]))
        schema[key] = low
        if draw(st.booleans()):
            top = draw(st.sampled_from(["maximum", "exclusiveMaximum"]))
            schema[top] = low + draw(st.integers(2, 50))
    elif draw(st.booleans()):
        schema["maximum"] = draw(st.integers(-1000, 1000))
    return schema


@st.composite
def _string(draw: Any) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"type": "string", "format": draw(st.sampled_from(FORMATS))}
    schema: dict[str, Any] = {"type": "string"}
    low = draw(st.none() | st.integers(0, 12))
    if low is not None:
        schema["minLength"] = low
    if draw(st.booleans()):
        schema["maxLength"] = (low or 0) + draw(st.integers(0, 20))
    return schema


_LEAVES = st.one_of(
    _string(), _integer(), st.just({"type": "boolean"}), st.just({"type": "null"}),
    st.lists(st.sampled_from(["celsius", "fahrenheit", "in_progress", "a b", 3, None]),
             min_size=1, max_size=4, unique=True).map(lambda e: {"enum": e}),
    st.sampled_from(["fixed", 7, True]).map(lambda c: {"const": c}),
    _string().map(lambda s: {**s, "type": ["string", "null"]}),
)


def _object(children: Any) -> Any:
    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        props = draw(st.dictionaries(st.sampled_from(NAMES), children, max_size=5))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) \
                if props else []
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    return build()


def _array(children: Any) -> Any:
    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array", "items": draw(children)}
        low = draw(st.none() | st.integers(0, 3))
        if low is not None:
            schema["minItems"] = low
        if draw(st.booleans()):
            schema["maxItems"] = (low or 0) + draw(st.integers(0, 3))
        return schema

    return build()


def _composite(children: Any) -> Any:
    return st.one_of(
        _object(children), _array(children),
        children.map(lambda c: {"anyOf": [c, {"type": "null"}]}),
        st.tuples(_object(children), _object(children)).filter(  # satisfiable: no shared field
            lambda ab: not set(ab[0]["properties"]) & set(ab[1]["properties"])).map(
            lambda ab: {"allOf": [{k: v for k, v in s.items() if k != "additionalProperties"}
                                  for s in ab]}),
    )


SCHEMAS = st.recursive(_LEAVES, _composite, max_leaves=12)


@st.composite
def tool_schemas(draw: Any) -> dict[str, Any]:
    """An object schema as tools declare them; sometimes with ``$defs`` and ``$ref``."""
    props = draw(st.dictionaries(st.sampled_from(NAMES), SCHEMAS, min_size=1, max_size=6))
    schema: dict[str, Any] = {"type": "object", "properties": props,
                              "required": draw(st.lists(st.sampled_from(sorted(props)), unique=True))}
    if draw(st.booleans()):
        name = min(props)
        schema["$defs"] = {"Shared": props[name]}
        props[name] = {"$ref": "#/$defs/Shared"}
    return schema


@given(tool_schemas(), st.sampled_from(TEXTS) | st.text(max_size=60))
def test_arguments_validate_against_random_schemas(schema, text):
    args = build_arguments(schema, text)
    _validate(schema, args)
    assert set(schema["required"]) <= set(args)


def test_formats_get_values_of_their_format():
    props = {f: {"type": "string", "format": f} for f in FORMATS}
    args = build_arguments({"type": "object", "properties": props, "required": list(props)},
                           "What time is it?")
    datetime.datetime.fromisoformat(args["date-time"])
    datetime.date.fromisoformat(args["date"])
    uuid.UUID(args["uuid"])
    assert re.fullmatch(r"\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)", args["time"])  # RFC 3339 full-time
    assert args["email"].count("@") == 1 and args["uri"].startswith("https://")


@pytest.mark.parametrize(("props", "text", "expected"), [
    ({"timezone": {"type": "string"}}, "What time is it?", {"timezone": "UTC"}),
    ({"timezone": {"type": "string"}}, "What time is it in Asia/Tokyo?",
     {"timezone": "Asia/Tokyo"}),
    ({"city": {"type": "string"}}, "the weather in Paris", {"city": "Paris"}),
    ({"city": {"type": "string"}}, "what's the weather like?", {"city": "London"}),
    ({"query": {"type": "string"}}, "What is the tallest mountain in the world?",
     {"query": "Tallest mountain world"}),
    ({"command": {"type": "string"}}, "list the files", {"command": "ls"}),
    ({"command": {"type": "string"}}, "please run `make test` now", {"command": "make test"}),
    ({"command": {"type": "array", "items": {"type": "string"}}}, "run `git status -s`",
     {"command": ["git", "status", "-s"]}),
    ({"file_path": {"type": "string"}}, "read src/app.py please", {"file_path": "src/app.py"}),
    ({"url": {"type": "string", "format": "uri"}}, "fetch https://example.org/x.",
     {"url": "https://example.org/x"}),
    ({"n": {"type": "integer", "minimum": 1, "maximum": 10}}, "give me 500", {"n": 10}),
], ids=["zone-default", "zone-named", "city-named", "city-default", "query-keywords",
        "command-default", "command-quoted", "argv-quoted", "path-named", "url-named",
        "number-clamped"])
def test_required_strings_get_the_named_or_a_plausible_value(props, text, expected):
    schema = {"type": "object", "properties": props, "required": list(props)}
    assert build_arguments(schema, text) == expected


def test_optional_fields_only_when_the_request_names_them():
    schema = {"type": "object", "required": ["command"], "properties": {
        "command": {"type": "string"}, "timeout": {"type": "number"},
        "description": {"type": "string"}, "run_in_background": {"type": "boolean"},
        "unit": {"enum": ["celsius", "fahrenheit"]}}}
    assert build_arguments(schema, "run `sleep 5`") == {"command": "sleep 5"}
    assert build_arguments(schema, "run `sleep 5` with a timeout of 9000 in fahrenheit") == {
        "command": "sleep 5", "timeout": 9000, "unit": "fahrenheit"}


def test_objects_without_required_take_the_request_numbers_in_order():
    schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
    assert build_arguments(schema, "add 2 and 3.5") == {"a": 2, "b": 3.5}


def test_nested_required_arrays_of_objects_get_one_valid_item():
    schema = {"type": "object", "required": ["todos"], "properties": {"todos": {
        "type": "array", "items": {"type": "object", "required": ["content", "status"],
                                   "properties": {"content": {"type": "string", "minLength": 1},
                                                  "status": {"enum": ["pending", "done"]}}}}}}
    assert build_arguments(schema, "plan the release") == {
        "todos": [{"content": "Plan release", "status": "pending"}]}
