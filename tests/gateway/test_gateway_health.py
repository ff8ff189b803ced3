"""/health reports a degraded credential store (an unreachable Redis) while requests keep flowing."""

from __future__ import annotations

import socket

import httpx

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway


def test_unreachable_redis_is_degraded_but_requests_flow(emulator, tmp_path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens here once closed
    path = tmp_path / "modelwire.yaml"
    path.write_text(
        f"models:\n  gpt: {{provider: openai, model: gpt-5-mini, base_url: \"{emulator.openai_base_url()}\"}}\n"
        f"credential_pool: {{store: \"redis://127.0.0.1:{dead}/0\"}}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-health-test-key")
    with RunningGateway(load_config(str(path)), environ={}) as gw:
        assert httpx.get(gw.base_url + "/health").json()["status"] == "ok"
        r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                       json={"model": "gpt", "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 200, r.text
        health = httpx.get(gw.base_url + "/health").json()
    assert health["status"] == "degraded"
    assert health["problems"] == [{"model": "gpt", "provider": "openai", "credential_store": "degraded"}]
