"""Images through every door to every upstream: the picture reaches the upstream in its own
protocol's shape (checked in the emulator's request log)."""

from __future__ import annotations

import anthropic
import openai
import pytest

KEY = "gw-test-key-0123456789"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]


def _has_image(body: dict) -> bool:
    text = str(body)
    return PNG in text


def _last_upstream(emulator, since: int) -> dict:
    reqs = [r for r in emulator.requests()["requests"] if r["n"] > since]
    assert reqs, "nothing reached the upstream"
    return reqs[-1]


def _n(emulator) -> int:
    reqs = emulator.requests()["requests"]
    return reqs[-1]["n"] if reqs else 0


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_door_image(gateway, emulator, upstream):
    since = _n(emulator)
    client = openai.OpenAI(base_url=gateway.base_url + "/v1", api_key=KEY, max_retries=0)
    done = client.chat.completions.create(model=upstream, messages=[{"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}])
    assert done.choices[0].message.content
    assert _has_image(_last_upstream(emulator, since)["body"])


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_door_image(gateway, emulator, upstream):
    since = _n(emulator)
    client = anthropic.Anthropic(base_url=gateway.base_url, api_key=KEY, max_retries=0)
    done = client.messages.create(model=upstream, max_tokens=256, messages=[{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": "What is in this picture?"}]}])
    assert done.content[0].text
    assert _has_image(_last_upstream(emulator, since)["body"])


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_door_image(gateway, emulator, upstream):
    since = _n(emulator)
    client = openai.OpenAI(base_url=gateway.base_url + "/v1", api_key=KEY, max_retries=0)
    done = client.responses.create(model=upstream, input=[{"role": "user", "content": [
        {"type": "input_text", "text": "What is in this picture?"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]}])
    assert done.output_text
    assert _has_image(_last_upstream(emulator, since)["body"])
