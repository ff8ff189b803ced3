"""The official openai SDK against the emulator: well-formed objects from Chat
Completions and Responses, plain and streamed, with tools and reasoning."""

from __future__ import annotations

import json

import openai
import pytest

from .conftest import KEY

CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Evaluate an arithmetic expression",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                   "required": ["expression"]}}}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
RESP_CALCULATOR = {"type": "function", **CALCULATOR["function"]}
QUESTION = "What is 17 times 23?"


@pytest.fixture
def client(emu):
    with openai.OpenAI(base_url=emu.openai_base_url(), api_key=KEY, max_retries=0) as c:
        yield c


def test_chat_answers_arithmetic_without_tools(client):
    r = client.chat.completions.create(model="emulator-1",
                                       messages=[{"role": "user", "content": QUESTION}])
    assert "391" in r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0


def test_chat_restates_a_question_it_cannot_answer(client):
    r = client.chat.completions.create(model="emulator-1",
                                       messages=[{"role": "user", "content": "Who wrote Hamlet?"}])
    assert "Who wrote Hamlet?" in r.choices[0].message.content


def test_chat_calls_the_matching_tool_with_schema_arguments(client):
    r = client.chat.completions.create(
        model="emulator-1", messages=[{"role": "user", "content": QUESTION}],
        tools=[WEATHER, CALCULATOR])
    (call,) = r.choices[0].message.tool_calls
    assert call.function.name == "calculator"
    assert json.loads(call.function.arguments) == {"expression": "17 * 23"}
    assert r.choices[0].finish_reason == "tool_calls"


def test_chat_makes_parallel_calls_when_several_tools_match(client):
    tools = [{"type": "function", "function": {
        "name": name, "description": f"{name.capitalize()} two numbers",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                        "b": {"type": "integer"}},
                       "required": ["a", "b"]}}} for name in ("add", "multiply")]
    r = client.chat.completions.create(
        model="emulator-1",
        messages=[{"role": "user", "content": "Add and multiply the numbers 2 and 3"}], tools=tools)
    calls = r.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["add", "multiply"]
    assert all(json.loads(c.function.arguments) == {"a": 2, "b": 3} for c in calls)


def test_chat_stream_with_tools_then_answer_from_the_result(client):
    messages = [{"role": "user", "content": QUESTION}]
    with client.chat.completions.stream(model="emulator-1", messages=messages,
                                        tools=[CALCULATOR],
                                        stream_options={"include_usage": True}) as stream:
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    assert final.usage is not None and final.usage.completion_tokens > 0
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "391"},
    ]
    answer = client.chat.completions.create(model="emulator-1", messages=messages,
                                            tools=[CALCULATOR])
    assert "391" in answer.choices[0].message.content


def test_chat_stream_is_chunked_and_ends_with_done(emu, http):
    r = http.post("/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                  json={"model": "m", "stream": True,
                        "messages": [{"role": "user", "content": "Tell me about the sea"}]})
    frames = [f for f in r.text.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]"
    assert len(frames) > 4  # small chunks, not one blob


def test_deepseek_profile_streams_reasoning_content(emu):
    with openai.OpenAI(base_url=emu.openai_base_url("deepseek"), api_key=KEY) as c:
        stream = c.chat.completions.create(
            model="deepseek-reasoner", stream=True,
            messages=[{"role": "user", "content": QUESTION}])
        reasoning = "".join(getattr(ch.choices[0].delta, "reasoning_content", None) or ""
                            for ch in stream if ch.choices)
    assert "391" in reasoning


def test_models_list_in_openai_shape(client):
    ids = [m.id for m in client.models.list()]
    assert "emulator-1" in ids


def test_responses_create_with_encrypted_reasoning_round_trip(client):
    tools = [RESP_CALCULATOR]
    first = client.responses.create(
        model="gpt-5.5", input=QUESTION, tools=tools, store=False,
        reasoning={"effort": "low"}, include=["reasoning.encrypted_content"])
    kinds = [item.type for item in first.output]
    assert kinds == ["reasoning", "function_call"]
    assert first.output[0].encrypted_content
    call = first.output[1]
    follow = [{"role": "user", "content": QUESTION}]
    follow += [item.model_dump(exclude_none=True, exclude={"status"}) for item in first.output]
    for item in follow[1:]:
        if item.get("type") == "function_call":
            item.pop("id")  # store=false: ids of function calls were never stored
    follow.append({"type": "function_call_output", "call_id": call.call_id, "output": "391"})
    second = client.responses.create(model="gpt-5.5", input=follow, tools=tools, store=False,
                                     reasoning={"effort": "low"},
                                     include=["reasoning.encrypted_content"])
    assert "391" in second.output_text


def test_responses_stream_starts_with_created_and_yields_tool_call(client):
    with client.responses.stream(model="gpt-5.5", input=QUESTION,
                                 tools=[RESP_CALCULATOR]) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert types[0] == "response.created"
    assert types[-1] == "response.completed"
    assert final.output[0].type == "function_call"
    assert json.loads(final.output[0].arguments) == {"expression": "17 * 23"}


def test_responses_stream_reasoning_summary_and_text(client):
    with client.responses.stream(model="gpt-5.5", input=QUESTION,
                                 reasoning={"effort": "low", "summary": "auto"}) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.reasoning_summary_text.delta" in types
    assert "391" in final.output_text
    seq = final.model_dump()["output"][0]["summary"][0]["text"]
    assert "391" in seq


def test_responses_previous_response_id_continues_a_stored_response(client):
    first = client.responses.create(model="gpt-5.5", input=QUESTION, tools=[RESP_CALCULATOR])
    call = first.output[0]
    second = client.responses.create(
        model="gpt-5.5", previous_response_id=first.id, tools=[RESP_CALCULATOR],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "391"}])
    assert "391" in second.output_text


def test_structured_output_follows_the_json_schema(client):
    schema = {"type": "object", "properties": {"city": {"type": "string"},
                                               "population": {"type": "integer"}},
              "required": ["city", "population"], "additionalProperties": False}
    r = client.chat.completions.create(
        model="emulator-1",
        messages=[{"role": "user", "content": "Paris has 2100000 inhabitants; give me JSON"}],
        response_format={"type": "json_schema", "json_schema": {"name": "c", "schema": schema}})
    assert json.loads(r.choices[0].message.content) == {"city": "Paris", "population": 2100000}
    resp = client.responses.create(
        model="gpt-5.5", input="Paris has 2100000 inhabitants",
        text={"format": {"type": "json_schema", "name": "c", "schema": schema}})
    assert json.loads(resp.output_text) == {"city": "Paris", "population": 2100000}
