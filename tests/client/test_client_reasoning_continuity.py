"""Reasoning continuity for plain histories: an assistant turn with reasoning_content and
no reasoning_details (unattributed, the seed's shape) goes back as it is to providers that
need it on tool-call turns; attributed reasoning keeps the issuer rule."""

from __future__ import annotations

import pytest

from modelwire import Client

KEY = "sk-test-0123456789abcdef"
THOUGHT = "The user wants the weather in Paris; I should call get_weather first."
FOREIGN = [{"issuer": "anthropic", "block": {"type": "thinking", "thinking": THOUGHT, "signature": "c2ln"}}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                           "parameters": {"type": "object", "properties": {}}}}]


def _history(details=None):
    turn = {"role": "assistant", "content": None, "reasoning_content": THOUGHT,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"}}]}
    if details is not None:
        turn["reasoning_details"] = details
    return [{"role": "user", "content": "Weather in Paris?"}, turn,
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]


def _assistant(wire, mode):
    (request,) = wire.requests()
    messages = request["body"]["messages"]
    return next(m for m in messages if m["role"] == "assistant")


@pytest.mark.parametrize("provider", ["deepseek/deepseek-v4-pro", "moonshot/kimi-k2.6", "xiaomi/mimo-v2"])
def test_a_plain_histories_reasoning_goes_back_to_providers_that_need_it(wire, provider):
    with Client(provider, base_url=wire.base_url("chat_completions"), api_key=KEY) as client:
        client.complete(_history(), tools=TOOLS)
    assert _assistant(wire, "chat")["reasoning_content"] == THOUGHT


def test_deepseeks_anthropic_endpoint_gets_it_as_an_unsigned_thinking_block():
    # encoded only: the emulator's Anthropic door enforces Anthropic's own rule (signed
    # thinking), which DeepSeek's endpoint does not have
    import orjson

    from modelwire.codecs import Target
    from modelwire.codecs import anthropic_messages as am
    from modelwire.providers.catalog import CATALOG

    def first_block(history):
        target = Target(CATALOG["deepseek-anthropic"], "deepseek-v4-pro", KEY, "https://api.deepseek.com/anthropic", ())
        body = orjson.loads(am.encode_request({"messages": history, "tools": TOOLS}, target).body)
        return body["messages"][1]["content"][0]

    assert first_block(_history()) == {"type": "thinking", "thinking": THOUGHT}
    assert first_block(_history(FOREIGN))["type"] == "tool_use"  # another issuer's: not sent


def test_another_issuers_reasoning_is_never_sent(wire):
    with Client("deepseek/deepseek-v4-pro", base_url=wire.base_url("chat_completions"),
                api_key=KEY) as client:
        client.complete(_history(FOREIGN), tools=TOOLS)
    assert _assistant(wire, "chat")["reasoning_content"] == " "  # the required stand-in


def test_providers_that_reject_the_field_never_get_it(wire):
    with Client("mistral/mistral-large-latest", base_url=wire.base_url("chat_completions"),
                api_key=KEY) as client:
        client.complete(_history(), tools=TOOLS)
    assert "reasoning_content" not in _assistant(wire, "chat")


@pytest.mark.parametrize("off", ["none", "off"])
def test_deepseek_is_told_thinking_is_disabled_when_asked_off(wire, off):
    with Client("deepseek/deepseek-v4-pro", base_url=wire.base_url("chat_completions"),
                api_key=KEY) as client:
        client.complete([{"role": "user", "content": "hi"}], thinking=off)
    (request,) = wire.requests()
    assert request["body"]["thinking"] == {"type": "disabled"}
