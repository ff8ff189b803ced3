"""A whole tool loop through the Responses codec against the emulator's OpenAI rules.

The emulator enforces what the real API does (store false: no replayed ids;
reasoning followed by its item; encrypted content verified by its minter), so a
conversation that goes round three times proves the encoder's rules together.
"""

from __future__ import annotations

import httpx
import pytest

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target, responses
from modelwire.providers.profile import ProviderProfile
from modelwire.testing import emulator  # noqa: F401  (the public session fixture)

TOOLS = [{"type": "function", "function": {
    "name": "multiply", "description": "multiply two numbers (math)",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                   "required": ["a", "b"]}}}]


def _turn(target: Target, messages: list, *, stream: bool):
    encoded = responses.encode_request(
        {"model": "emulator-1", "messages": messages, "tools": TOOLS, "thinking": "low", "stream": stream}, target)
    answer = httpx.post(target.profile.url(encoded.path), headers=encoded.headers, content=encoded.body, timeout=30)
    assert answer.status_code == 200, answer.text
    if not stream:
        return responses.decode_response(answer.content, issuer="emulator")
    decoder = responses.StreamDecoder(issuer="emulator")
    acc = Accumulator()
    for event in decoder.feed(answer.content) + decoder.close():
        acc.feed(event)
    return acc.result()


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_a_tool_loop_with_replayed_encrypted_reasoning_is_accepted(emulator, stream):  # noqa: F811
    profile = ProviderProfile(name="emu", base_url=emulator.openai_base_url("openai"), api_mode="responses",
                              issuer="emulator")
    target = Target(profile, "emulator-1", api_key="sk-fake-emulator-key")
    messages: list = [{"role": "system", "content": "be brief"},
                      {"role": "user", "content": "what is 17 times 23? use the math tool"}]
    first = _turn(target, messages, stream=stream)
    assert first.finish_reason == "tool_calls"
    assert first.message["reasoning_details"][0]["block"]["encrypted_content"]
    messages.append(first.message)
    messages += [{"role": "tool", "tool_call_id": c["id"], "content": "391"} for c in first.tool_calls]
    second = _turn(target, messages, stream=stream)
    assert second.finish_reason == "stop"
    assert "391" in second.text
