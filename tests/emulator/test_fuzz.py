"""Mutated request bodies never make the emulator answer 5xx or hit its safety net: every
odd shape is a 4xx the protocol's way (checked in-process, no HTTP)."""

from __future__ import annotations

import asyncio
import copy
import json
import random

import pytest

from modelwire.emulator.endpoints import Backend

ODD = [None, 0, -1, 10**30, 1.5, "", "x" * 50, "\u0000\U0001f600", True, [], {}, [None],
       {"": None}, [{"type": "nonsense"}], {"role": "wizard"}, {"type": "object", "properties": 3}]
SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}},
          "required": ["expression"]}
SEEDS = {
    "chat_completions": {
        "model": "emulator-1", "max_tokens": 50, "reasoning_effort": "low",
        "response_format": {"type": "json_object"}, "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "calc", "parameters": SCHEMA}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "2 plus 3"}]},
            {"role": "assistant", "content": None, "reasoning_content": "r", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "5"}]},
    "messages": {
        "model": "claude-sonnet-4-6", "max_tokens": 2000,
        "system": [{"type": "text", "text": "brief", "cache_control": {"type": "ephemeral"}}],
        "thinking": {"type": "enabled", "budget_tokens": 1024}, "tool_choice": {"type": "auto"},
        "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
        "tools": [{"name": "calc", "input_schema": SCHEMA}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "x", "signature": "abc"},
                {"type": "tool_use", "id": "t1", "name": "calc", "input": {"expression": "1"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1"}]}]},
    "responses": {
        "model": "gpt-5.5", "reasoning": {"effort": "low", "summary": "auto"}, "store": False,
        "include": ["reasoning.encrypted_content"], "previous_response_id": None,
        "text": {"format": {"type": "json_schema", "name": "x", "schema": SCHEMA}},
        "tools": [{"type": "function", "name": "calc", "parameters": SCHEMA}],
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "calc", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "1"}]},
}
SEEDS["count_tokens"] = SEEDS["messages"]


def _paths(obj, prefix=()):
    if prefix:
        yield prefix
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        yield from _paths(value, (*prefix, key))


def _mutate(seed, rng):
    body = copy.deepcopy(seed)
    for _ in range(rng.randint(1, 3)):
        paths = list(_paths(body))
        if not paths:
            break
        path = rng.choice(paths)
        parent = body
        for key in path[:-1]:
            parent = parent[key]
        if rng.random() < 0.3:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(ODD))
    raw = json.dumps(body).encode()
    return raw[: rng.randint(0, len(raw))] if rng.random() < 0.05 else raw


@pytest.mark.parametrize("endpoint", list(SEEDS))
@pytest.mark.parametrize("profile", ["lenient", "deepseek", "groq"])
def test_mutated_bodies_get_4xx_never_5xx(endpoint, profile):
    backend = Backend()
    rng = random.Random(f"{endpoint}-{profile}")
    headers = {"authorization": "Bearer sk-fuzz-0000", "anthropic-version": "2023-06-01"}

    async def run():
        for _ in range(150):
            raw = _mutate(SEEDS[endpoint], rng)
            response = await backend.handle(endpoint, profile, "POST", "/fuzz", headers, raw)
            assert response.status < 500, raw
            assert "internal_error" not in response.entry, (response.entry["internal_error"], raw)

    asyncio.run(run())
