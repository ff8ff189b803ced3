"""Fast mode (Anthropic's ``speed: "fast"`` + its beta) is opt-in: absent by default; sent
when asked (Client argument, per call, config key) on Anthropic's own endpoint for a model
that has it; elsewhere left out with a warning (a speed knob, not content)."""

from __future__ import annotations

import logging

import pytest

from modelwire import Client
from modelwire.config import config_from_dict

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-ant-" + "test-0123456789abcdef"  # built, so no scan takes it for a real key


def _sent(wire):
    (request,) = wire.requests()
    return request["body"].get("speed"), request["headers"].get("anthropic-beta", "")


def _direct(wire, **kw):
    # the anthropic row (fast_mode allowed) pointed at the emulator's Anthropic door
    return Client("anthropic/claude-opus-4-6", base_url=wire.base_url("anthropic_messages"),
                  api_key=KEY, **kw)


def test_fast_mode_is_absent_by_default(wire):
    with _direct(wire) as client:
        client.complete(HI, max_tokens=16)
    speed, betas = _sent(wire)
    assert speed is None and "fast-mode" not in betas


@pytest.mark.parametrize("how", ["client", "call"])
def test_fast_mode_is_sent_when_asked(wire, how):
    with _direct(wire, **({"speed": "fast"} if how == "client" else {})) as client:
        client.complete(HI, max_tokens=16, **({"speed": "fast"} if how == "call" else {}))
    speed, betas = _sent(wire)
    assert speed == "fast" and "fast-mode-2026-02-01" in betas.split(",")


def test_a_call_can_turn_a_client_wide_fast_mode_off(wire):
    with _direct(wire, speed="fast") as client:
        client.complete(HI, max_tokens=16, speed="standard")
    assert _sent(wire) == (None, "")


def test_the_config_key_asks_for_it(wire):
    config = config_from_dict({"models": {"opus": {
        "provider": "anthropic", "model": "claude-opus-4-6", "speed": "fast",
        "base_url": wire.base_url("anthropic_messages")}}})
    with Client("opus", config=config, api_key=KEY) as client:
        client.complete(HI, max_tokens=16)
    assert _sent(wire)[0] == "fast"


def test_elsewhere_it_is_left_out_with_a_warning(wire, caplog):
    caplog.set_level(logging.WARNING)
    with Client("anthropic/claude-sonnet-4-5", base_url=wire.base_url("anthropic_messages"),
                api_key=KEY) as client:  # no fast mode for this model
        client.complete(HI, max_tokens=16, speed="fast")
    with Client(f"custom/{wire.model}", base_url=wire.base_url("chat_completions"),
                api_mode="chat_completions", api_key=KEY) as client:  # another protocol
        client.complete(HI, speed="fast")
    bodies = [r["body"] for r in wire.requests()]
    assert [b.get("speed") for b in bodies] == [None, None]
    warned = [r.getMessage() for r in caplog.records if "speed 'fast'" in r.getMessage()]
    assert len(warned) == 2 and "claude-sonnet-4-5" in warned[0] and "Chat Completions" in warned[1]
