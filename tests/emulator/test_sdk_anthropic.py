"""The official anthropic SDK against the emulator, under both API versions: the SDK's
own default (2.x sends ``anthropic-version: 2026-10-21`` and Bearer auth) and
``2023-06-01`` set through ``default_headers``."""

from __future__ import annotations

import anthropic
import pytest

from .conftest import KEY

CALCULATOR = {"name": "calculator", "description": "Evaluate an arithmetic expression",
              "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}},
                               "required": ["expression"]}}
QUESTION = "What is 17 times 23?"
VERSIONS = ["2026-10-21", "2023-06-01"]


def _client(emu, version: str) -> anthropic.Anthropic:
    headers = {} if version == "2026-10-21" else {"anthropic-version": version}
    return anthropic.Anthropic(base_url=emu.anthropic_base_url(), api_key=KEY, max_retries=0,
                               default_headers=headers)


def test_sdk_default_version_is_the_new_one(emu):
    _client(emu, "2026-10-21").messages.create(
        model="claude-sonnet-4-6", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    sent = emu.requests()["requests"][-1]["headers"]
    assert sent["anthropic-version"] == "2026-10-21"
    assert sent["authorization"].startswith("Bearer")


@pytest.mark.parametrize("version", VERSIONS)
def test_create_answers_arithmetic(emu, version):
    msg = _client(emu, version).messages.create(
        model="claude-sonnet-4-6", max_tokens=512, messages=[{"role": "user", "content": QUESTION}])
    assert msg.stop_reason == "end_turn"
    assert "391" in msg.content[0].text
    assert msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0


@pytest.mark.parametrize("version", VERSIONS)
def test_thinking_and_tools_round_trip_with_signatures(emu, version):
    client = _client(emu, version)
    messages = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(model="claude-sonnet-4-6", max_tokens=4000,
                                   thinking={"type": "enabled", "budget_tokens": 1024},
                                   tools=[CALCULATOR], messages=messages)
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    assert first.content[0].signature
    assert first.content[1].input == {"expression": "17 * 23"}
    assert first.stop_reason == "tool_use"
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[1].id,
                                      "content": "391"}]},
    ]
    second = client.messages.create(model="claude-sonnet-4-6", max_tokens=4000,
                                    thinking={"type": "enabled", "budget_tokens": 1024},
                                    tools=[CALCULATOR], messages=messages)
    assert "391" in second.content[-1].text


@pytest.mark.parametrize("version", VERSIONS)
def test_stream_with_adaptive_thinking_and_tools(emu, version):
    client = _client(emu, version)
    with client.messages.stream(model="claude-opus-4-7", max_tokens=4000,
                                thinking={"type": "adaptive"}, tools=[CALCULATOR],
                                messages=[{"role": "user", "content": QUESTION}]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert [b.type for b in final.content] == ["thinking", "tool_use"]
    assert final.content[1].input == {"expression": "17 * 23"}
    assert final.content[0].signature


def test_stream_text_deltas_are_small(emu):
    with _client(emu, "2023-06-01").messages.stream(
            model="claude-sonnet-4-6", max_tokens=300,
            messages=[{"role": "user", "content": "Describe the sea in a few words"}]) as stream:
        pieces = list(stream.text_stream)
    assert len(pieces) > 3
    assert "Describe the sea" in "".join(pieces)


def test_count_tokens(emu):
    result = _client(emu, "2023-06-01").messages.count_tokens(
        model="claude-sonnet-4-6", messages=[{"role": "user", "content": QUESTION}])
    assert result.input_tokens > 0


def test_models_list_in_anthropic_shape(emu):
    page = _client(emu, "2023-06-01").models.list()
    assert any(m.id.startswith("claude-") and m.type == "model" for m in page.data)


def test_cache_control_reports_write_then_read(emu):
    client = _client(emu, "2023-06-01")
    system = [{"type": "text", "text": "You are a careful assistant. " * 40,
               "cache_control": {"type": "ephemeral"}}]
    kwargs = {"model": "claude-sonnet-4-6", "max_tokens": 200, "system": system,
              "messages": [{"role": "user", "content": "cache test unique 7f3a"}]}
    first = client.messages.create(**kwargs)
    second = client.messages.create(**kwargs)
    assert first.usage.cache_creation_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0


def test_interleaved_thinking_between_parallel_tool_calls_round_trips(emu):
    tools = [{"name": name, "description": f"{name.capitalize()} two numbers",
              "input_schema": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                "b": {"type": "integer"}},
                               "required": ["a", "b"]}} for name in ("add", "multiply")]
    client = _client(emu, "2026-10-21")
    messages = [{"role": "user", "content": "Add and multiply 2 and 3"}]
    first = client.messages.create(model="claude-opus-4-7", max_tokens=4000, tools=tools,
                                   thinking={"type": "adaptive"}, messages=messages)
    assert [b.type for b in first.content] == ["thinking", "tool_use", "thinking", "tool_use"]
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": value}
            for b, value in zip([b for b in first.content if b.type == "tool_use"], ["5", "6"])]},
    ]
    second = client.messages.create(model="claude-opus-4-7", max_tokens=4000, tools=tools,
                                    thinking={"type": "adaptive"}, messages=messages)
    text = second.content[-1].text
    assert "add returned 5" in text and "multiply returned 6" in text


def test_stop_sequences_end_the_text_and_are_named(emu):
    client = _client(emu, "2023-06-01")
    ask = {"model": "claude-sonnet-4-6", "max_tokens": 512, "messages": [{"role": "user", "content": QUESTION}],
           "stop_sequences": ["nope", "391."]}
    msg = client.messages.create(**ask)
    assert (msg.content[0].text, msg.stop_reason, msg.stop_sequence) == ("17 * 23 = ", "stop_sequence", "391.")
    with client.messages.stream(**ask) as stream:
        final = stream.get_final_message()
    assert (final.content[0].text, final.stop_reason, final.stop_sequence) == ("17 * 23 = ", "stop_sequence", "391.")
