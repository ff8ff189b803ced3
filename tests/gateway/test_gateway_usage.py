"""Usage leaves every door in that door's own protocol's shape, whatever the upstream spoke.

Each answer's usage object is checked key by key (no key of another protocol, none of its
own missing) on the nine door x upstream pairs, streamed and not, over real loopback HTTP.
"""

from __future__ import annotations

import httpx
import orjson
import pytest

GATEWAY_KEY = "gw-test-key-0123456789"
UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]
QUESTION = "What is 6 times 7?"

RESPONSES_KEYS = {"input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"}
ANTHROPIC_KEYS = {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"}
CHAT_KEYS = {"prompt_tokens", "completion_tokens", "total_tokens"}


def _post(gateway, path: str, body: dict, **headers: str) -> httpx.Response:
    answer = httpx.post(gateway.base_url + path, json=body, timeout=30,
                        headers={"authorization": f"Bearer {GATEWAY_KEY}", **headers})
    assert answer.status_code == 200, answer.text
    return answer


def _events(answer: httpx.Response) -> list[dict]:
    return [orjson.loads(line[5:]) for line in answer.text.splitlines()
            if line.startswith("data:") and line[5:].strip() != "[DONE]"]


def _responses_usage(usage: dict) -> None:
    assert set(usage) <= RESPONSES_KEYS | {"cost"} and RESPONSES_KEYS <= set(usage), usage
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert set(usage["input_tokens_details"]) <= {"cached_tokens", "cache_write_tokens"}
    assert set(usage["output_tokens_details"]) == {"reasoning_tokens"}


def _anthropic_usage(usage: dict) -> None:
    # message_start and message_delta usage: Anthropic's names only (no total, no details)
    assert ANTHROPIC_KEYS <= set(usage) <= ANTHROPIC_KEYS | {"cache_creation", "service_tier", "server_tool_use"}, usage
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


def _chat_usage(usage: dict) -> None:
    assert CHAT_KEYS <= set(usage) <= CHAT_KEYS | {"prompt_tokens_details", "completion_tokens_details"}, usage
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_door_usage_is_responses_shaped(gateway, upstream):
    body = {"model": upstream, "input": QUESTION}
    _responses_usage(_post(gateway, "/v1/responses", body).json()["usage"])
    events = _events(_post(gateway, "/v1/responses", {**body, "stream": True}))
    done = [e for e in events if e.get("type") == "response.completed"]
    assert len(done) == 1
    _responses_usage(done[0]["response"]["usage"])


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_door_usage_is_anthropic_shaped(gateway, upstream):
    body = {"model": upstream, "max_tokens": 200, "messages": [{"role": "user", "content": QUESTION}]}
    _anthropic_usage(_post(gateway, "/v1/messages", body, **{"anthropic-version": "2023-06-01"}).json()["usage"])
    events = _events(_post(gateway, "/v1/messages", {**body, "stream": True}, **{"anthropic-version": "2023-06-01"}))
    start = [e["message"]["usage"] for e in events if e.get("type") == "message_start"]
    delta = [e["usage"] for e in events if e.get("type") == "message_delta"]
    assert len(start) == 1 and len(delta) == 1
    assert "total_tokens" not in start[0] and "input_tokens_details" not in start[0]
    _anthropic_usage(delta[0])


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_door_usage_is_chat_shaped(gateway, upstream):
    body = {"model": upstream, "messages": [{"role": "user", "content": QUESTION}]}
    _chat_usage(_post(gateway, "/v1/chat/completions", body).json()["usage"])
    events = _events(_post(gateway, "/v1/chat/completions",
                           {**body, "stream": True, "stream_options": {"include_usage": True}}))
    usages = [e["usage"] for e in events if e.get("usage")]
    assert len(usages) == 1
    _chat_usage(usages[0])
