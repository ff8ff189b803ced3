"""Credential rotation through the gateway: a rate-limited key is cooled and the next key
serves the same request at once; the attempts header shows it."""

from __future__ import annotations

import httpx

from modelwire.config import load_config
from modelwire.credentials import CredentialPool
from modelwire.gateway.testing import RunningGateway


def test_rate_limited_key_rotates_and_the_headers_say_so(emulator_clean, tmp_path):
    emulator = emulator_clean
    path = tmp_path / "modelwire.yaml"
    store = f"sqlite:///{tmp_path}/state.db"
    # DeepSeek's row is not eligible for the byte-forwarding lane, so the Client's ladder
    # serves every attempt (and counts it)
    path.write_text(
        f"models:\n  ds: {{provider: deepseek, model: rot-model, base_url: \"{emulator.openai_base_url('deepseek')}\"}}\n"
        f"credential_pool: {{store: \"{store}\"}}\n")
    config = load_config(str(path))
    pool = CredentialPool.for_provider("deepseek", config=config)
    pool.add("sk-rotation-first-key", label="first")
    pool.add("sk-rotation-second-key", label="second")
    emulator.set_faults([{"fault": "rate_limit", "model": "rot-model", "times": 1, "retry_after": 3600}])
    with RunningGateway(config, environ={}) as gw:
        r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                       json={"model": "ds", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200, r.text
    assert r.headers["x-modelwire-attempts"] == "2" and r.headers["x-modelwire-fallbacks"] == "0"
    states = {c.label: c.status for c in CredentialPool.for_provider("deepseek", config=config).credentials()}
    assert sorted(states.values()) == ["cooling", "ok"]  # the one that got the 429 cools
