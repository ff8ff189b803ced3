"""Reasoning across front doors: over several turns, each upstream gets its own reasoning
back in native form (checked in the emulator's request log and by its strict rules:
DeepSeek's reasoning_content passback, Anthropic's signature verification)."""

from __future__ import annotations

import anthropic
import openai
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

KEY = "gw-reasoning-key-0123456789"
SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}


@pytest.fixture(scope="module")
def strict_gateway(emulator, tmp_path_factory):
    path = tmp_path_factory.mktemp("gwr") / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  deepseek-like: {{provider: emulator, model: deepseek-reasoner, base_url: \"{emulator.openai_base_url('deepseek')}\"}}\n"
        f"  claude-like: {{provider: emulator-anthropic, model: claude-sonnet-4-5, base_url: \"{emulator.anthropic_base_url('anthropic')}\"}}\n"
        f"  openai-like: {{provider: emulator-responses, model: gpt-5-mini, base_url: \"{emulator.openai_base_url('openai')}\"}}\n"
        "gateway: {keys_env: RG_KEYS}\n"
    )
    env = {"RG_KEYS": KEY, "MODELWIRE_SEAL_SECRET": "another-seal-secret-0123456789"}
    with RunningGateway(load_config(str(path)), environ=env) as gw:
        yield gw


def _upstream_requests(emulator, since: int) -> list[dict]:
    return [r for r in emulator.requests()["requests"] if r["n"] > since]


def _last_n(emulator) -> int:
    reqs = emulator.requests()["requests"]
    return reqs[-1]["n"] if reqs else 0


def _assert_native_reasoning_came_back(upstream: str, req: dict) -> None:
    assert req["status"] == 200, req
    body = req["body"]
    if upstream == "deepseek-like":
        assistants = [m for m in body["messages"] if m["role"] == "assistant"]
        assert assistants and all(isinstance(m.get("reasoning_content"), str) and m["reasoning_content"].strip()
                                  for m in assistants if m.get("tool_calls"))
    elif upstream == "claude-like":
        assistants = [m for m in body["messages"] if m["role"] == "assistant"]
        assert assistants and all(m["content"][0]["type"] == "thinking" and m["content"][0]["signature"]
                                  for m in assistants)
    else:
        items = body["input"]
        reasoning = [i for i in items if i.get("type") == "reasoning"]
        assert reasoning and all(i.get("encrypted_content") for i in reasoning)


UPSTREAMS = ["deepseek-like", "claude-like", "openai-like"]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_door_reasoning_round_trip(strict_gateway, emulator, upstream):
    client = openai.OpenAI(base_url=strict_gateway.base_url + "/v1", api_key=KEY, max_retries=0)
    tools = [{"type": "function", "function": {"name": "calculator", "description": "Evaluate arithmetic",
                                               "parameters": SCHEMA}}]
    messages = [{"role": "user", "content": "What is 17 times 23, then plus 1?"}]
    since = _last_n(emulator)
    for step in range(3):
        resp = client.chat.completions.create(model=upstream, messages=messages, tools=tools,
                                              reasoning_effort="medium")
        msg = resp.choices[0].message
        dumped = msg.model_dump(exclude_none=True)
        assert dumped.get("reasoning_content"), dumped
        messages.append(dumped)
        for call in msg.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "391"})
        if not msg.tool_calls:
            break
    assert step == 1 and "391" in msg.content
    _assert_native_reasoning_came_back(upstream, _upstream_requests(emulator, since)[-1])


@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_door_reasoning_round_trip(strict_gateway, emulator, upstream, stream):
    client = anthropic.Anthropic(base_url=strict_gateway.base_url, api_key=KEY, max_retries=0)
    tools = [{"name": "calculator", "description": "Evaluate arithmetic", "input_schema": SCHEMA}]
    messages = [{"role": "user", "content": "What is 17 times 23?"}]
    since = _last_n(emulator)
    kwargs = {"model": upstream, "max_tokens": 4096, "tools": tools,
              "thinking": {"type": "enabled", "budget_tokens": 2048}}
    if stream:
        with client.messages.stream(messages=messages, **kwargs) as s:
            first = s.get_final_message()
    else:
        first = client.messages.create(messages=messages, **kwargs)
    assert first.content[0].type == "thinking" and first.content[0].signature
    use = next(b for b in first.content if b.type == "tool_use")
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "391"}]},
    ]
    second = client.messages.create(messages=messages, **kwargs)
    assert "391" in "".join(b.text for b in second.content if b.type == "text")
    _assert_native_reasoning_came_back(upstream, _upstream_requests(emulator, since)[-1])


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_door_reasoning_round_trip(strict_gateway, emulator, upstream):
    client = openai.OpenAI(base_url=strict_gateway.base_url + "/v1", api_key=KEY, max_retries=0)
    tools = [{"type": "function", "name": "calculator", "description": "Evaluate arithmetic", "parameters": SCHEMA}]
    inputs: list = [{"role": "user", "content": "What is 17 times 23?"}]
    since = _last_n(emulator)
    kwargs = {"model": upstream, "tools": tools, "reasoning": {"effort": "medium"},
              "include": ["reasoning.encrypted_content"], "store": False}
    first = client.responses.create(input=inputs, **kwargs)
    kinds = [i.type for i in first.output]
    assert kinds[0] == "reasoning" and first.output[0].encrypted_content
    call = next(i for i in first.output if i.type == "function_call")
    inputs += [i.model_dump(exclude_none=True) for i in first.output]
    inputs.append({"type": "function_call_output", "call_id": call.call_id, "output": "391"})
    second = client.responses.create(input=inputs, **kwargs)
    assert "391" in second.output_text
    _assert_native_reasoning_came_back(upstream, _upstream_requests(emulator, since)[-1])


def test_tampered_seal_is_dropped_not_forwarded(strict_gateway, emulator):
    client = anthropic.Anthropic(base_url=strict_gateway.base_url, api_key=KEY, max_retries=0)
    tools = [{"name": "calculator", "description": "Evaluate arithmetic", "input_schema": SCHEMA}]
    messages = [{"role": "user", "content": "What is 17 times 23?"}]
    kwargs = {"model": "deepseek-like", "max_tokens": 4096, "tools": tools,
              "thinking": {"type": "enabled", "budget_tokens": 2048}}
    first = client.messages.create(messages=messages, **kwargs)
    blocks = [b.model_dump(exclude_none=True) for b in first.content]
    blocks[0]["signature"] = blocks[0]["signature"][:-6] + "AAAAAA"
    use = next(b for b in first.content if b.type == "tool_use")
    messages += [{"role": "assistant", "content": blocks},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "391"}]}]
    since = _last_n(emulator)
    client.messages.create(messages=messages, **kwargs)
    sent = _upstream_requests(emulator, since)[-1]["body"]["messages"]
    assistant = next(m for m in sent if m["role"] == "assistant")
    # the tampered reasoning never reaches the upstream; DeepSeek gets the
    # placeholder its API requires instead of another text
    assert assistant.get("reasoning_content", "").strip() == ""
