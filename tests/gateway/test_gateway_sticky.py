"""The gateway keeps a model's fallback across requests (one Client per configured model)
and says so in ``x-modelwire-fallbacks``."""

from __future__ import annotations

import httpx

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

KEY = "gw-sticky-key-0123456789"


def _last(emu):
    log = emu.requests()["requests"]
    return log[-1]["n"] if log else 0


def _since(emu, n):  # the session emulator's log holds other tests' requests too
    return emu.requests(since=n)["requests"]


def test_a_later_request_starts_at_the_fallback_and_the_header_says_sticky(emulator_clean, tmp_path):
    o = emulator_clean.openai_base_url()
    path = tmp_path / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  shaky: {{provider: emulator, model: shaky-model, base_url: \"{o}\"}}\n"
        f"  sound: {{provider: emulator, model: sound-model, base_url: \"{o}\"}}\n"
        "fallback: [sound]\n"
        "gateway: {keys_env: GS_KEYS}\n")
    emulator_clean.set_faults([{"fault": "quota", "model": "shaky-model"}])
    body = {"model": "shaky", "messages": [{"role": "user", "content": "hello"}]}
    headers = {"authorization": f"Bearer {KEY}"}
    before = _last(emulator_clean)
    with RunningGateway(load_config(str(path)), environ={"GS_KEYS": KEY}) as gw:
        first = httpx.post(gw.base_url + "/v1/chat/completions", json=body, headers=headers, timeout=10)
        second = httpx.post(gw.base_url + "/v1/chat/completions", json=body, headers=headers, timeout=10)
    assert first.status_code == second.status_code == 200
    assert first.headers["x-modelwire-fallbacks"] == "1"
    assert second.headers["x-modelwire-fallbacks"] == "1; sticky"
    assert second.headers["x-modelwire-attempts"] == "1"  # the skipped primary was not tried
    models = [r["model"] for r in _since(emulator_clean, before)]
    assert models == ["shaky-model", "sound-model", "sound-model"]


def test_anthropic_speed_field_is_the_clients_fast_mode_option(emulator_clean, tmp_path, monkeypatch):
    monkeypatch.setenv("GS_UP", "sk-ant-" + "test-upstream-0123456789")
    a = emulator_clean.anthropic_base_url()
    path = tmp_path / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  opus: {{provider: anthropic, model: claude-opus-4-6, base_url: \"{a}\", api_key_env: GS_UP}}\n"
        f"  spare: {{provider: emulator-anthropic, model: spare-claude, base_url: \"{a}\"}}\n"
        "fallback: [spare]\n"  # a chain: the translating path, not the byte-for-byte lane
        "gateway: {keys_env: GS_KEYS}\n")
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    body = {"model": "opus", "max_tokens": 32, "messages": [{"role": "user", "content": "hello"}]}
    environ = {"GS_KEYS": KEY}
    before = _last(emulator_clean)
    with RunningGateway(load_config(str(path)), environ=environ) as gw:
        plain = httpx.post(gw.base_url + "/v1/messages", json=body, headers=headers, timeout=10)
        fast = httpx.post(gw.base_url + "/v1/messages", json={**body, "speed": "fast"},
                          headers=headers, timeout=10)
    assert plain.status_code == fast.status_code == 200
    first, second = _since(emulator_clean, before)
    assert "speed" not in first["body"] and "fast-mode" not in first["headers"].get("anthropic-beta", "")
    assert second["body"]["speed"] == "fast"
    assert "fast-mode-2026-02-01" in second["headers"]["anthropic-beta"].split(",")
