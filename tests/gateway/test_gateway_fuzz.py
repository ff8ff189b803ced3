"""10,000 mutated request bodies across the three front doors: every answer is a 2xx or a 4xx
in the door's own error shape (never a 5xx for a client's mistake), and the gateway stays up."""

from __future__ import annotations

import collections
import concurrent.futures
import copy
import json
import random

import httpx
import pytest

KEY = "gw-test-key-0123456789"
N = int(__import__("os").environ.get("FUZZ_N", "10000"))

TOOL = {"type": "function", "function": {"name": "calculator", "description": "math",
                                         "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}}
SEEDS = {
    "/v1/chat/completions": {
        "model": "emu-chat", "max_tokens": 50, "tools": [TOOL], "reasoning_effort": "low",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "hi"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"1+1\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "2"},
            {"role": "user", "content": "thanks"},
        ],
    },
    "/v1/messages": {
        "model": "emu-anthropic", "max_tokens": 50, "system": [{"type": "text", "text": "be brief"}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"name": "calculator", "description": "math", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "calculator", "input": {"expression": "1"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1"},
                                         {"type": "text", "text": "ok"}]},
        ],
    },
    "/v1/responses": {
        "model": "emu-responses", "instructions": "be brief", "reasoning": {"effort": "low"},
        "tools": [{"type": "function", "name": "calculator", "parameters": {"type": "object"}}],
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "calculator", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "1"},
        ],
    },
}
ODD_VALUES = [None, 0, -1, 10**30, 1.5, "", "x" * 300, "\u0000\ud7ff\U0001f600", True, [], {}, [None], {"": None},
              [{"type": "nonsense"}], {"role": "wizard"}]


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def _delete(obj, path):
    for key in path[:-1]:
        obj = obj[key]
    del obj[path[-1]]


def mutate(seed: dict, rng: random.Random) -> bytes:
    body = copy.deepcopy(seed)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(body) if p]
        if not paths:
            break
        path = rng.choice(paths)
        op = rng.random()
        try:
            if op < 0.35:
                _set(body, path, rng.choice(ODD_VALUES))
            elif op < 0.55:
                _delete(body, path)
            elif op < 0.65:
                _set(body, path, [copy.deepcopy(rng.choice(ODD_VALUES))] * rng.randint(0, 3))
            elif op < 0.75:
                body["stream"] = rng.choice([True, False, "yes", 1])
            else:
                parent = body
                for key in path[:-1]:
                    parent = parent[key]
                if isinstance(parent, list):
                    parent.insert(rng.randint(0, len(parent)), copy.deepcopy(rng.choice(parent)))
                else:
                    _set(body, path, {"nested": {"deeper": rng.choice(ODD_VALUES)}})
        except (KeyError, IndexError, TypeError):
            continue
    raw = json.dumps(body).encode()
    r = rng.random()
    if r < 0.04:
        raw = raw[: rng.randint(0, len(raw))]  # truncated JSON
    elif r < 0.06:
        raw = b"\xff\xfe" + raw  # not UTF-8
    elif r < 0.07:
        raw = b"[" * 5000 + b"]" * 5000  # deep nesting
    return raw


def _check_shape(path: str, resp: httpx.Response, sent: bytes) -> None:
    assert resp.status_code < 500, f"{path} -> {resp.status_code} {resp.text[:300]} for {sent[:400]!r}"
    if resp.status_code >= 400:
        body = resp.json()
        if path == "/v1/messages":
            assert body["type"] == "error" and isinstance(body["error"]["message"], str), body
        else:
            assert isinstance(body["error"]["message"], str) and body["error"]["type"], body


WORKERS = 8


@pytest.mark.timeout(900)
def test_ten_thousand_mutated_bodies_never_get_a_5xx(gateway):
    rng = random.Random(20261129)
    cases = []
    for _ in range(N):
        path = rng.choice(list(SEEDS))
        cases.append((path, mutate(SEEDS[path], rng)))
    headers = {"authorization": f"Bearer {KEY}", "content-type": "application/json",
               "anthropic-version": "2023-06-01"}
    statuses: collections.Counter[int] = collections.Counter()

    def run(share: list[tuple[str, bytes]]) -> None:
        with httpx.Client(base_url=gateway.base_url, headers=headers, timeout=60) as http:
            for path, raw in share:
                try:
                    with http.stream("POST", path, content=raw) as resp:
                        resp.read()
                except httpx.TimeoutException as exc:
                    raise AssertionError(f"{path} timed out for {raw[:600]!r}") from exc
                statuses[resp.status_code] += 1
                _check_shape(path, resp, raw)

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        for done in [pool.submit(run, cases[i::WORKERS]) for i in range(WORKERS)]:
            done.result()
    assert httpx.get(gateway.base_url + "/health").status_code == 200
    print(f"fuzz statuses: {dict(sorted(statuses.items()))}")
    assert sum(statuses.values()) == N
    assert statuses[400] > N // 10  # the mutations really do break requests
