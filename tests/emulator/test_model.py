"""The deterministic model, without HTTP."""

from __future__ import annotations

import json

import pytest

from modelwire.emulator.model import (
    PlannedCall,
    Prompt,
    ToolDef,
    Turn,
    arithmetic,
    build_arguments,
    respond,
)

CALC = ToolDef("calculator", "Evaluate an arithmetic expression",
               {"type": "object", "properties": {"expression": {"type": "string"}},
                "required": ["expression"]})
WEATHER = ToolDef("get_weather", "Current weather for a city",
                  {"type": "object", "properties": {
                      "city": {"type": "string"},
                      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]})


def ask(text, *tools, **kw):
    return respond(Prompt((Turn("user", text),), tuple(tools), **kw))


@pytest.mark.parametrize(("text", "expected"), [
    ("What is 17 times 23?", ("17 * 23", "391")),
    ("compute 10 divided by 4", ("10 / 4", "2.5")),
    ("2 plus 3 times 4", ("2 + 3 * 4", "14")),
    ("no numbers here", None),
])
def test_arithmetic(text, expected):
    assert arithmetic(text) == expected


def test_picks_the_tool_by_overlap_and_fills_arguments():
    reply = ask("What's the weather in Paris in fahrenheit?", CALC, WEATHER)
    (call,) = reply.calls
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "Paris", "unit": "fahrenheit"}
    assert reply.finish == "tool_calls"


def test_no_matching_tool_answers_in_text():
    reply = ask("Tell me a story about dragons", CALC, WEATHER)
    assert reply.calls == () and "dragons" in reply.text


def test_forced_tool_choice_and_parallel_off():
    assert [c.name for c in ask("hello", CALC, WEATHER, tool_choice="get_weather").calls] == [
        "get_weather"]
    assert [c.name for c in ask("hello", CALC, WEATHER, tool_choice="required").calls] == [
        "calculator"]
    both = ask("weather and calculate 2 plus 2", CALC, WEATHER)
    assert len(both.calls) == 2
    assert len(ask("weather and calculate 2 plus 2", CALC, WEATHER, parallel=False).calls) == 1


def test_answers_from_tool_results():
    call = PlannedCall("calculator", '{"expression": "17 * 23"}', "c1")
    reply = respond(Prompt((Turn("user", "What is 17 times 23?"), Turn("assistant", calls=(call,)),
                            Turn("tool", "391", call_id="c1")), (CALC,)))
    assert reply.text == "Based on the tool results: 17 * 23 = 391."


def test_reasoning_only_when_thinking_and_length_limit():
    assert ask("What is 17 times 23?").reasoning is None
    assert "391" in ask("What is 17 times 23?", thinking=True).reasoning
    cut = ask("Tell me about the long history of the Roman empire", max_tokens=2)
    assert cut.finish == "length" and len(cut.text) == 8


def test_schema_arguments_have_required_fields_and_right_types():
    schema = {"type": "object", "required": ["n", "flag", "items", "nested"], "properties": {
        "n": {"type": "integer"}, "flag": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "number"}},
        "nested": {"type": "object", "properties": {"x": {"type": ["string", "null"]}},
                   "required": ["x"]},
        "optional": {"type": "string"}}}
    args = build_arguments(schema, "use 3 and 4.5")
    assert args == {"n": 3, "flag": False, "items": [3, 4.5],
                    "nested": {"x": "example"}}  # a plausible value, not the whole request


def test_text_after_a_colon_is_the_payload():
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    assert build_arguments(schema, "Count the words in: the quick brown fox") == {
        "text": "the quick brown fox"}
