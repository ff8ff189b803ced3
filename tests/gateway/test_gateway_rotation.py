"""Credential rotation through the gateway: a rate-limited key is cooled and the next key
serves the same request at once; the attempts header shows it."""

from __future__ import annotations

import time

import httpx

from modelwire.config import load_config
from modelwire.credentials import CredentialPool
from modelwire.gateway.testing import RunningGateway


def _two_keys(emulator, tmp_path, model: str, prefix: str):
    """Model ``ds`` on the emulator as DeepSeek with two pooled keys. DeepSeek's row is not
    eligible for the byte-forwarding lane, so the Client's ladder serves every attempt."""
    path = tmp_path / "modelwire.yaml"
    path.write_text(
        f"models:\n  ds: {{provider: deepseek, model: {model}, base_url: \"{emulator.openai_base_url('deepseek')}\"}}\n"
        f"credential_pool: {{store: \"sqlite:///{tmp_path}/state.db\"}}\n")
    config = load_config(str(path))
    pool = CredentialPool.for_provider("deepseek", config=config)
    pool.add(f"{prefix}-first-key-000", label="first")
    pool.add(f"{prefix}-second-key-00", label="second")
    return config


def test_rate_limited_key_rotates_and_the_headers_say_so(emulator_clean, tmp_path):
    emulator = emulator_clean
    config = _two_keys(emulator, tmp_path, "rot-model", "sk-rotation")
    emulator.set_faults([{"fault": "rate_limit", "model": "rot-model", "times": 1, "retry_after": 3600}])
    with RunningGateway(config, environ={}) as gw:
        r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                       json={"model": "ds", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200, r.text
    assert r.headers["x-modelwire-attempts"] == "2" and r.headers["x-modelwire-fallbacks"] == "0"
    states = {c.label: c.status for c in CredentialPool.for_provider("deepseek", config=config).credentials()}
    assert sorted(states.values()) == ["cooling", "ok"]  # the one that got the 429 cools


def test_health_says_when_every_key_of_a_model_is_cooling(emulator_clean, tmp_path):
    # both keys rate-limited for an hour: requests for the model fail (or fall back) until
    # then, and /health says so without a key in sight
    emulator = emulator_clean
    config = _two_keys(emulator, tmp_path, "cool-model", "sk-cooling")
    emulator.set_faults([{"fault": "rate_limit", "model": "cool-model", "times": 2, "retry_after": 3600}])
    with RunningGateway(config, environ={}) as gw:
        assert httpx.get(gw.base_url + "/health").json()["status"] == "ok"
        # the upstream's 429s, then the gateway's own: both say when the pool's first key
        # frees up (the upstream's own hint is capped at 600 s, as every retry hint is)
        for _ in range(2):
            started = time.monotonic()
            r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                           json={"model": "ds", "messages": [{"role": "user", "content": "hi"}]})
            # not held for the wait (the ladder would sleep up to 600 s): the client's SDK retries
            assert r.status_code == 429 and time.monotonic() - started < 10, r.text
            assert 3500 <= int(r.headers["retry-after"]) <= 3600
        health = httpx.get(gw.base_url + "/health")
    body = health.json()
    assert body["status"] == "degraded"
    (problem,) = body["problems"]
    assert {k: problem[k] for k in ("model", "provider", "credentials", "count")} == {
        "model": "ds", "provider": "deepseek", "credentials": "all cooling", "count": 2}
    assert 3500 <= problem["available_in_s"] <= 3600
    assert b"sk-cooling" not in health.content


def test_health_says_when_every_key_of_a_model_is_dead(emulator_clean, tmp_path):
    # both keys revoked: dead until replaced, so no time to say
    config = _two_keys(emulator_clean, tmp_path, "dead-model", "sk-revoked")
    pool = CredentialPool.for_provider("deepseek", config=config)
    for _ in range(2):
        lease = pool.lease()
        pool.report(lease, "revoked")
        lease.release()
    with RunningGateway(config, environ={}) as gw:
        started = time.monotonic()
        r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,  # opens the model's pool
                       json={"model": "ds", "messages": [{"role": "user", "content": "hi"}]})
        # at once (no wait brings a dead key back: the ladder backed off ~30 s before) and
        # never a 401 that would blame the client's key
        assert time.monotonic() - started < 5 and r.status_code >= 400 and r.status_code != 401, r.text
        assert "dead" in r.text
        body = httpx.get(gw.base_url + "/health").json()
    (problem,) = body["problems"]
    assert (problem["credentials"], problem["count"], "available_in_s" in problem) == ("all dead", 2, False)
