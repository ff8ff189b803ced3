"""Mid-conversation system messages in the Anthropic codec: decoded at their place, encoded
natively only where Anthropic allows them, as a user-turn reminder everywhere else."""

from __future__ import annotations

import json

import pytest

from modelwire.client.resolution import resolve
from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.errors import MessageError


def _sent(messages: list[dict], model: str = "anthropic/claude-opus-4-8") -> tuple[list[dict], dict]:
    r = resolve(model)
    enc = am.encode_request({"messages": messages}, Target(r.profile, r.model_id, "sk-ant-x", r.profile.base_url, ()))
    return json.loads(enc.body)["messages"], enc.headers


def _reminder(text: str) -> dict:
    return {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}


def test_the_door_keeps_a_system_message_at_its_place():
    req = am.decode_request({"model": "m", "system": "top", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": [{"type": "text", "text": "later", "cache_control": {"type": "ephemeral"}}]}]})
    assert [(m["role"], m["content"]) for m in req["messages"]] == [
        ("system", "top"), ("user", "hi"),
        ("system", [{"type": "text", "text": "later", "cache_control": {"type": "ephemeral"}}])]


@pytest.mark.parametrize("messages, error", [
    ([{"role": "system", "content": "first"}], "role must be user or assistant"),
    ([{"role": "user", "content": "hi"},
      {"role": "system", "content": [{"type": "image", "source": {"type": "url", "url": "http://x/a.png"}}]}],
     "text blocks only"),
], ids=["first-message", "image-block"])
def test_the_door_refuses_what_anthropic_refuses(messages, error):
    with pytest.raises(MessageError, match=error):
        am.decode_request({"model": "m", "messages": messages})


def test_consecutive_system_messages_are_one_and_get_the_beta():
    sent, headers = _sent([{"role": "user", "content": "hi"}, {"role": "system", "content": "a"},
                           {"role": "system", "content": "b"}])
    assert sent == [{"role": "user", "content": "hi"},
                    {"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert "mid-conversation-system-2026-04-07" in headers["anthropic-beta"]


def test_a_system_message_before_a_user_turn_joins_it_as_a_reminder():
    sent, headers = _sent([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"},
                           {"role": "system", "content": "be brief"}, {"role": "user", "content": "go"}])
    assert sent[2] == {"role": "user", "content": [_reminder("be brief"), {"type": "text", "text": "go"}]}
    assert "mid-conversation-system-2026-04-07" not in headers.get("anthropic-beta", "")


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-5", "minimax/MiniMax-M2"])
def test_a_model_that_does_not_take_them_gets_a_reminder_in_the_user_turn(model):
    sent, _ = _sent([{"role": "user", "content": "hi"}, {"role": "system", "content": "be brief"}], model)
    assert sent == [{"role": "user", "content": [{"type": "text", "text": "hi"}, _reminder("be brief")]}]


def test_the_capability_is_the_profiles_and_the_models():
    anthropic = resolve("anthropic/claude-opus-4-8").profile
    assert am.supports_mid_system(anthropic, "claude-opus-4-8")
    assert am.supports_mid_system(anthropic, "claude-sonnet-5-5")
    assert not am.supports_mid_system(anthropic, "claude-sonnet-5")
    assert not am.supports_mid_system(anthropic, "claude-opus-4-7")
    custom = resolve("custom/claude-opus-4-8", base_url="http://127.0.0.1:9", api_mode="anthropic_messages").profile
    assert not am.supports_mid_system(custom, "claude-opus-4-8")  # default off
