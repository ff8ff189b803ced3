"""Faults through the gateway: disconnects cancel upstream, errors after the first byte arrive
in each protocol's own error event, fallbacks show in the headers."""

from __future__ import annotations

import time

import anthropic
import httpx
import openai
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

KEY = "gw-faults-key-0123456789"


@pytest.fixture(scope="module")
def fgw(emulator, tmp_path_factory):
    path = tmp_path_factory.mktemp("gwf") / "modelwire.yaml"
    o, a = emulator.openai_base_url(), emulator.anthropic_base_url()
    path.write_text(
        "models:\n"
        f"  flaky: {{provider: emulator, model: flaky-model, base_url: \"{o}\"}}\n"
        f"  flaky-anthropic: {{provider: emulator-anthropic, model: flaky-claude, base_url: \"{a}\"}}\n"
        f"  steady: {{provider: emulator-anthropic, model: steady-claude, base_url: \"{a}\"}}\n"
        "fallback: [steady]\n"
        "gateway: {keys_env: FG_KEYS}\n"
    )
    with RunningGateway(load_config(str(path)), environ={"FG_KEYS": KEY}) as gw:
        yield gw


def _wait_for(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


def test_client_disconnect_cancels_the_upstream_request(fgw, emulator_clean):
    emulator_clean.set_faults([{"fault": "slow_chunks", "model": "flaky-model", "seconds": 0.3, "times": 1}])
    with httpx.stream("POST", fgw.base_url + "/v1/chat/completions",
                      json={"model": "flaky", "stream": True,
                            "messages": [{"role": "user", "content": "Tell me a long story about a fox"}]},
                      headers={"authorization": f"Bearer {KEY}"}, timeout=10) as resp:
        assert resp.status_code == 200
        next(resp.iter_raw())  # the first event arrived: now hang up
    upstream = _wait_for(lambda: next(
        (r for r in emulator_clean.requests()["requests"]
         if r["model"] == "flaky-model" and r["disconnected"]), None))
    assert upstream["completed"] is False


def test_error_after_first_event_is_a_chat_error_chunk(fgw, emulator_clean):
    emulator_clean.set_faults([{"fault": "stream_error", "model": "flaky-model", "after": 3, "times": 1}])
    client = openai.OpenAI(base_url=fgw.base_url + "/v1", api_key=KEY, max_retries=0)
    stream = client.chat.completions.create(
        model="flaky", stream=True, messages=[{"role": "user", "content": "Tell me about foxes please"}])
    with pytest.raises(openai.APIError):
        for _ in stream:
            pass


def test_error_after_first_event_is_an_anthropic_error_event(fgw, emulator_clean):
    emulator_clean.set_faults([{"fault": "stream_error", "model": "flaky-model", "after": 3, "times": 1}])
    client = anthropic.Anthropic(base_url=fgw.base_url, api_key=KEY, max_retries=0)
    with pytest.raises(anthropic.APIStatusError), client.messages.stream(
            model="flaky", max_tokens=256,
            messages=[{"role": "user", "content": "Tell me about foxes please"}]) as s:
        for _ in s:
            pass


def test_error_after_first_event_is_a_responses_failure(fgw, emulator_clean):
    emulator_clean.set_faults([{"fault": "stream_error", "model": "flaky-model", "after": 3, "times": 1}])
    client = openai.OpenAI(base_url=fgw.base_url + "/v1", api_key=KEY, max_retries=0)
    kinds = []
    try:
        with client.responses.stream(model="flaky", input="Tell me about foxes please") as s:
            for event in s:
                kinds.append(event.type)
    except openai.APIError:
        kinds.append("raised")
    assert "response.failed" in kinds or "error" in kinds or "raised" in kinds
    assert "response.completed" not in kinds


def test_fallback_serves_the_turn_and_the_headers_say_so(fgw, emulator_clean):
    emulator_clean.set_faults([{"fault": "quota", "model": "flaky-claude"}])
    raw = anthropic.Anthropic(base_url=fgw.base_url, api_key=KEY, max_retries=0).messages.with_raw_response.create(
        model="flaky-anthropic", max_tokens=64, messages=[{"role": "user", "content": "hello"}])
    assert raw.headers["x-modelwire-fallbacks"] == "1"
    assert raw.headers["x-modelwire-model"].endswith("steady-claude")
    assert int(raw.headers["x-modelwire-attempts"]) >= 2
    assert raw.parse().content[0].text


def test_upstream_auth_failure_is_502_not_401(fgw, emulator_clean, tmp_path):
    path = tmp_path / "solo.yaml"
    path.write_text(
        f"models:\n  solo: {{provider: emulator, model: solo-model, base_url: \"{emulator_clean.openai_base_url()}\"}}\n"
        "gateway: {keys_env: FG_KEYS}\n")
    emulator_clean.set_faults([{"fault": "unauthorized", "model": "solo-model"}])
    with RunningGateway(load_config(str(path)), environ={"FG_KEYS": KEY}) as gw:
        r = httpx.post(gw.base_url + "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                       json={"model": "solo", "messages": [{"role": "user", "content": "hi"}]}, timeout=30)
    assert r.status_code == 502, r.text
    assert "credential" in r.json()["error"]["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_overhead_header_counts_the_gateways_time_not_the_upstreams(fgw, emulator_clean, stream):
    # the upstream takes 0.4 s before answering: the request takes that long, while
    # x-modelwire-overhead-ms (the gateway's own time, the Client's encode and decode
    # included) stays far below it
    emulator_clean.set_faults([{"fault": "hang", "model": "flaky-model", "seconds": 0.4, "times": 1}])
    body = {"model": "flaky", "messages": [{"role": "user", "content": "hello"}], "stream": stream}
    started = time.perf_counter()
    with httpx.stream("POST", fgw.base_url + "/v1/chat/completions", json=body,
                      headers={"authorization": f"Bearer {KEY}"}, timeout=10) as resp:
        resp.read()
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert resp.status_code == 200
    overhead = float(resp.headers["x-modelwire-overhead-ms"])
    assert elapsed_ms >= 400
    assert 0 < overhead < 150, overhead


def test_overhead_header_includes_the_clients_own_encode(fgw, emulator_clean, monkeypatch):
    # the Client's encode for the upstream made to take 0.25 s (the profile's body hook,
    # which runs inside it, sleeps for this model): gateway time the header must count,
    # though it is spent inside client.complete() / client.stream()
    from modelwire.providers import get_profile

    cls = type(get_profile("emulator"))
    original = cls.patch_body

    def slow_patch_body(self, body, target):
        if target.model == "flaky-model":
            time.sleep(0.25)
        return original(self, body, target)

    monkeypatch.setattr(cls, "patch_body", slow_patch_body)
    for stream in (False, True):
        with httpx.stream("POST", fgw.base_url + "/v1/chat/completions",
                          json={"model": "flaky", "messages": [{"role": "user", "content": "hello"}],
                                "stream": stream},
                          headers={"authorization": f"Bearer {KEY}"}, timeout=10) as resp:
            resp.read()
        assert resp.status_code == 200
        assert float(resp.headers["x-modelwire-overhead-ms"]) >= 250, (stream, resp.headers["x-modelwire-overhead-ms"])
