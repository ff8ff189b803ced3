"""The gateway keeps a model's fallback across requests (one Client per configured model)
and says so in ``x-modelwire-fallbacks``."""

from __future__ import annotations

import httpx

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

KEY = "gw-sticky-key-0123456789"


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
    with RunningGateway(load_config(str(path)), environ={"GS_KEYS": KEY}) as gw:
        first = httpx.post(gw.base_url + "/v1/chat/completions", json=body, headers=headers, timeout=10)
        second = httpx.post(gw.base_url + "/v1/chat/completions", json=body, headers=headers, timeout=10)
    assert first.status_code == second.status_code == 200
    assert first.headers["x-modelwire-fallbacks"] == "1"
    assert second.headers["x-modelwire-fallbacks"] == "1; sticky"
    assert second.headers["x-modelwire-attempts"] == "1"  # the skipped primary was not tried
    models = [r["model"] for r in emulator_clean.requests()["requests"]]
    assert models == ["shaky-model", "sound-model", "sound-model"]
