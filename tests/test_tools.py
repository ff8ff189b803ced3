from __future__ import annotations

import dataclasses
import enum
import logging
from typing import Any, Literal, NotRequired, Optional, TypedDict

import pytest

from modelwire.errors import MessageError
from modelwire.tools import (
    ToolRegistry,
    dedupe_tools,
    parse_arguments,
    schema_for,
    tool,
    validate_arguments,
    validate_spec,
)


def spec(name: str, desc: str = "") -> dict:
    return {"type": "function", "function": {"name": name, "description": desc,
                                             "parameters": {"type": "object", "properties": {}}}}


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    label: str
    size: float = 1.0


def test_schema_for_every_supported_type():
    assert schema_for(str) == {"type": "string"}
    assert schema_for(int) == {"type": "integer"}
    assert schema_for(float) == {"type": "number"}
    assert schema_for(bool) == {"type": "boolean"}
    assert schema_for(Literal["a", "b"]) == {"enum": ["a", "b"], "type": "string"}
    assert schema_for(Color) == {"enum": ["red", "blue"], "type": "string"}
    assert schema_for(list[int]) == {"type": "array", "items": {"type": "integer"}}
    assert schema_for(dict[str, float]) == {"type": "object", "additionalProperties": {"type": "number"}}
    assert schema_for(Optional[int]) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}  # noqa: UP045
    assert schema_for(int | None) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert schema_for(Point) == {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert schema_for(Box) == {
        "type": "object", "properties": {"label": {"type": "string"}, "size": {"type": "number"}},
        "required": ["label"],
    }


def test_decorator_derives_schema_and_descriptions_from_docstring():
    @tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
        """Get the weather forecast for a city.

        Args:
            city: Name of the city, e.g. Paris.
            unit: Temperature unit.
        """
        return f"{city} {unit} {days}"

    assert get_weather.name == "get_weather"
    assert get_weather.description == "Get the weather forecast for a city."
    params = get_weather.spec["function"]["parameters"]
    assert params["required"] == ["city"]
    assert params["properties"]["city"] == {"type": "string", "description": "Name of the city, e.g. Paris."}
    assert params["properties"]["unit"]["enum"] == ["c", "f"]
    assert params["properties"]["days"] == {"type": "integer", "default": 1}
    assert get_weather("Paris") == "Paris c 1"


def test_numpy_docstring_parameters():
    @tool
    def add(a: int, b: int) -> int:
        """Add numbers.

        Parameters
        ----------
        a : int
            The first.
        b : int
            The second.
        """
        return a + b

    props = add.spec["function"]["parameters"]["properties"]
    assert props["a"]["description"] == "The first."
    assert props["b"]["description"] == "The second."


def test_explicit_schema_and_options():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @tool(name="search_docs", description="Search.", schema=schema, timeout=2.5)
    async def search(q):
        return q

    assert search.name == "search_docs" and search.timeout == 2.5 and search.is_async
    assert search.spec["function"]["parameters"] == schema
    assert search.spec["function"]["parameters"] is not schema


def test_validate_spec_names_the_bad_field():
    with pytest.raises(MessageError, match="name"):
        validate_spec(spec("bad name!"))
    with pytest.raises(MessageError, match="parameters.type"):
        validate_spec({"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}})
    with pytest.raises(MessageError, match="function must be an object"):
        validate_spec({"type": "function"})


def test_registry_hands_out_copies_never_its_cache():
    reg = ToolRegistry([spec("a"), spec("b")])
    first = reg.specs()
    first[0]["function"]["name"] = "mutated"
    first.append(spec("c"))
    again = reg.specs()
    assert [s["function"]["name"] for s in again] == ["a", "b"]
    assert again is not first and again[0] is not first[0]


def test_duplicates_first_definition_wins_with_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="modelwire.tools"):
        out = dedupe_tools([spec("a", "one"), spec("b"), spec("a", "two")])
    assert [(s["function"]["name"], s["function"]["description"]) for s in out] == [
        ("a", "one"), ("b", "")
    ]
    assert "duplicate tool definition 'a'" in caplog.text


@pytest.mark.parametrize(
    "raw, value, reason",
    [
        ('{"x": 1}', {"x": 1}, None),
        ("", {}, None),
        (None, {}, None),
        ('{"x": ', None, "not valid JSON"),
        ("[1, 2]", None, "must be a JSON object"),
        (42, None, "must be a JSON string"),
        ({"x": 1}, {"x": 1}, None),
    ],
    ids=["object", "empty", "missing", "truncated", "array", "not-a-string", "already-parsed"],
)
def test_parse_arguments_reports_instead_of_raising(raw, value, reason):
    parsed, err = parse_arguments(raw)
    assert parsed == value
    assert (err is None) if reason is None else (reason in err)


def test_validate_arguments_against_schema():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert validate_arguments({"n": 3}, schema) is None
    assert "n" in validate_arguments({}, schema)
    assert "n: 'x' is not of type 'integer'" in validate_arguments({"n": "x"}, schema)


# ------------------------------------------------------------------ exact schemas and errors
# the functional form: this module's string annotations would hide NotRequired from typing
_Point = TypedDict("_Point", {"x": int, "label": NotRequired[str]})


@dataclasses.dataclass
class _Place:
    city: str
    days: int = 1


@pytest.mark.parametrize(("annotation", "schema"), [
    (type(None), {"type": "null"}),
    (Any, {}),
    (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (list, {"type": "array"}),
    (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (set[str], {"type": "array", "items": {"type": "string"}}),
    (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
    (dict, {"type": "object"}),
    (Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}),
    (Literal[1, "a"], {"enum": [1, "a"]}),
    (_Point, {"type": "object", "properties": {"x": {"type": "integer"}, "label": {"type": "string"}},
              "required": ["x"]}),
    (_Place, {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
              "required": ["city"]}),
], ids=["none", "any", "optional", "union", "list-of", "list", "tuple-of", "set-of", "dict-of",
        "dict", "literal-str", "literal-mixed", "typeddict", "dataclass"])
def test_schema_for_each_kind_of_annotation(annotation, schema):
    assert schema_for(annotation) == schema


def test_an_annotation_without_a_schema_says_to_pass_one():
    with pytest.raises(TypeError, match=r"^cannot derive a JSON Schema for None; pass schema= explicitly$"):
        schema_for(None)


@pytest.mark.parametrize(("spec", "message"), [
    (5, "tools must be an object, got int"),
    ({"type": "custom", "function": {"name": "f"}}, "tools.type must be 'function', got 'custom'"),
    ({"type": "function"}, "tools.function must be an object"),
    ({"function": {"name": "f", "description": 3}}, "tools.function.description must be a string"),
    ({"function": {"name": "f", "parameters": []}},
     "tools.function.parameters must be a JSON Schema object"),
    ({"function": {"name": "f", "parameters": {"type": "array"}}},
     "tools.function.parameters.type must be 'object', got 'array'"),
], ids=["not-object", "type", "no-function", "description", "parameters", "parameters-type"])
def test_spec_errors_name_the_field_exactly(spec, message):
    with pytest.raises(MessageError) as info:
        validate_spec(spec)
    assert str(info.value) == message


def test_a_spec_without_type_or_parameter_type_is_a_function_taking_an_object():
    spec = {"function": {"name": "f", "parameters": {"properties": {}}}}
    assert validate_spec(spec, where="tools[2]") is spec
    with pytest.raises(MessageError, match=r"^tools\[2\]\.function must be an object$"):
        validate_spec({}, where="tools[2]")


# ------------------------------------------------------------------ derivation details
def test_star_args_are_skipped_and_later_parameters_kept():
    def f(*items: int, label: str, **extra: int) -> None:
        """Do it."""

    assert tool(f).parameters == {"type": "object", "properties": {"label": {"type": "string"}},
                                  "required": ["label"]}


def test_defaults_are_shown_only_when_json_can_hold_them():
    def f(a: int = 3, b: set[int] = frozenset({1})) -> None:
        """Do it."""

    props = tool(f).parameters["properties"]
    assert props["a"] == {"type": "integer", "default": 3}
    assert props["b"] == {"type": "array", "items": {"type": "integer"}}  # a set: no JSON default


def test_numpy_docstrings_with_underlines_and_google_arguments_both_describe_parameters():
    def numpy(city: str, days: int) -> None:
        """Forecast for a city.

        Parameters
        ----------
        city : str
            The city's name.
        days : int
            How many days ahead.
        """

    def google(city: str) -> None:
        """Forecast for a city,
        for the coming days.

        A second paragraph that is not the summary.

        Arguments:
            city (str): The city's name,
                as people write it.
        """

    n, g = tool(numpy), tool(google)
    assert n.description == "Forecast for a city."
    assert n.parameters["properties"]["city"]["description"] == "The city's name."
    assert n.parameters["properties"]["days"]["description"] == "How many days ahead."
    assert g.description == "Forecast for a city, for the coming days."
    assert g.parameters["properties"]["city"]["description"] == "The city's name, as people write it."


def test_an_explicit_description_and_schema_win_and_the_schema_is_copied():
    schema = {"type": "object", "properties": {"q": {"type": "string", "enum": ["a"]}}}

    def f(q: str) -> None:
        """Docstring text."""

    made = tool(description="Search the notes.", schema=schema)(f)
    schema["properties"]["q"]["enum"].append("b")  # the caller's dict, changed afterwards
    assert made.description == "Search the notes."
    assert made.parameters["properties"]["q"]["enum"] == ["a"]


def test_a_bad_name_is_reported_with_the_tool_it_belongs_to():
    def f() -> None:
        """Do it."""

    with pytest.raises(MessageError, match=r"^tool 'bad name'\.function\.name 'bad name' must match"):
        tool(name="bad name")(f)


def test_duplicates_anywhere_are_dropped_with_a_warning_naming_them(caplog):
    a1, a2 = ({"type": "function", "function": {"name": "a", "description": str(n)}} for n in (1, 2))
    b = {"type": "function", "function": {"name": "b"}}
    with caplog.at_level(logging.WARNING, logger="modelwire.tools"):
        assert dedupe_tools([a1, a2, b]) == [a1, b]
    assert "dropping duplicate tool definition 'a' (the first one wins)" in caplog.text
    assert dedupe_tools([{"type": "web_search"}, b]) == [{"type": "web_search"}, b]


def test_argument_errors_name_what_came():
    assert parse_arguments(5)[1] == "arguments must be a JSON string, got int"
    assert parse_arguments("[1]")[1] == "arguments must be a JSON object, got list"


# ------------------------------------------------------------------ what the mutants asked for
def test_a_parameter_without_an_annotation_takes_any_value():
    def f(x, y: int) -> None:
        """Do it."""

    assert tool(f).parameters["properties"] == {"x": {}, "y": {"type": "integer"}}


def test_a_function_without_a_docstring_has_no_description():
    def f(x: int) -> None:
        pass

    made = tool(f)
    assert made.description == "" and "description" not in made.spec["function"]


def test_a_numpy_section_after_the_parameters_is_not_part_of_the_last_one():
    def f(city: str) -> None:
        """Forecast.

        Parameters
        ----------
        city : str
            The city's name.

        Notes
        -----
        Uses the national weather service.
        """

    assert tool(f).parameters["properties"]["city"]["description"] == "The city's name."


def test_a_google_section_after_the_arguments_is_not_part_of_the_last_one():
    def f(city: str) -> str:
        """Forecast.

        Args:
            city: The city's name.

        Returns:
            The forecast, as text.
        """

    assert tool(f).parameters["properties"]["city"]["description"] == "The city's name."


def test_google_arguments_flush_with_their_heading_are_described():
    def f(city: str) -> None:
        """Forecast.

        Args:
        city (str): The city's name.
        """

    assert tool(f).parameters["properties"]["city"]["description"] == "The city's name."


def test_a_tool_passes_keyword_arguments_on():
    @tool
    def add(a: int, b: int = 0) -> int:
        """Add."""
        return a + 10 * b

    assert add(1, b=2) == 21


def test_builtin_tools_without_a_function_are_never_duplicates():
    web, code = {"type": "web_search"}, {"type": "code_interpreter"}
    assert dedupe_tools([web, code, web]) == [web, code, web]


def test_a_duplicate_is_logged_by_name(caplog):
    with caplog.at_level(logging.WARNING, logger="modelwire.tools"):
        dedupe_tools([spec("a"), spec("a")])
        ToolRegistry([spec("b"), spec("b")])
    assert [r.getMessage() for r in caplog.records] == [
        "dropping duplicate tool definition 'a' (the first one wins)",
        "tool 'b' already registered; keeping the first definition",
    ]


def test_the_registry_keeps_its_own_copy_of_what_it_was_given():
    given = spec("a", "first")
    reg = ToolRegistry([given])
    given["function"]["description"] = "changed by the caller"
    assert reg.get("a")["function"]["description"] == "first"


class _Mixed(enum.Enum):
    ONE = 1
    A = "a"


class _Plain:
    pass


def test_an_enum_of_mixed_kinds_has_no_type():
    assert schema_for(_Mixed) == {"enum": [1, "a"]}


def test_a_plain_class_says_to_pass_a_schema():
    with pytest.raises(TypeError, match=r"^cannot derive a JSON Schema for .*_Plain'>; pass schema="):
        schema_for(_Plain)


def test_argument_errors_are_listed_by_path_and_capped_at_five():
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "fedcba"},
              "required": ["n"]}
    assert validate_arguments({k: "x" for k in "fedcba"}, schema) == (
        "invalid arguments: 'n' is a required property; a: 'x' is not of type 'integer'; "
        "b: 'x' is not of type 'integer'; c: 'x' is not of type 'integer'; "
        "d: 'x' is not of type 'integer'")


def test_an_argument_error_deep_inside_names_the_whole_path():
    schema = {"type": "object", "properties": {"p": {"type": "object", "properties": {
        "q": {"type": "array", "items": {"type": "integer"}}}}}}
    assert validate_arguments({"p": {"q": [1, "x"]}}, schema) == (
        "invalid arguments: p.q.1: 'x' is not of type 'integer'")


def test_get_hands_out_a_copy_too():
    reg = ToolRegistry([spec("a", "first")])
    reg.get("a")["function"]["description"] = "changed"
    assert reg.get("a")["function"]["description"] == "first"
    assert reg.get("missing") is None


def test_a_heading_underlined_on_the_last_line_still_ends_the_parameters():
    def f(city: str) -> None:
        """Forecast.

        Parameters
        ----------
        city : str
            The city's name.
        See Also
        --------"""

    assert tool(f).parameters["properties"]["city"]["description"] == "The city's name."


def test_a_lowercase_numpy_parameters_heading_is_read():
    def f(city: str) -> None:
        """Forecast.

        parameters
        ----------
        city : str
            The city's name.
        """

    assert tool(f).parameters["properties"]["city"]["description"] == "The city's name."
