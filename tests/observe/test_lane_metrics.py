"""The same-protocol lane and the embeddings route in /metrics: a relayed answer adds
exactly the usage its bytes carry to the token and cost counters, once per request, and a
relayed stream one time to first token; the translating path counts as it did."""

from __future__ import annotations

import httpx
import orjson
import pytest

from modelwire.gateway.testing import RunningGateway

pytest.importorskip("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families

ANTHROPIC = {"anthropic-version": "2023-06-01"}
# USD per million tokens of each kind (anthropic/claude-sonnet-4-5 in the config)
PRICE = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}
KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")
# long enough for a cache prefix, marked for caching: the first request writes it, the next reads it
SYSTEM = [{"type": "text", "text": "You are terse. " * 200, "cache_control": {"type": "ephemeral"}}]


@pytest.fixture
def gw(emulator_clean, monkeypatch):
    from modelwire.config import config_from_dict

    monkeypatch.setenv("LANEM_ANTHROPIC_KEY", "sk-" + "ant-lanem-test")
    monkeypatch.setenv("LANEM_OPENAI_KEY", "sk-" + "lanem-test")
    base = emulator_clean.openai_base_url()
    config = config_from_dict({
        "models": {
            "claude": {"provider": "anthropic", "model": "claude-sonnet-4-5", "api_key_env": "LANEM_ANTHROPIC_KEY",
                       "base_url": emulator_clean.anthropic_base_url("anthropic")},
            "gpt": {"provider": "openai", "model": "gpt-5-mini", "base_url": base, "api_key_env": "LANEM_OPENAI_KEY"},
            "emu": {"provider": "emulator", "model": "emulator-1", "base_url": base},
            "embed": {"provider": "emulator", "model": "emulator-embed-1", "base_url": base},
        },
        "default_model": "emu",
        "prices": {"anthropic/claude-sonnet-4-5": PRICE},
    })
    with RunningGateway(config, environ={}) as running:
        yield running


def _scrape(gw) -> dict[tuple[str, frozenset], float]:
    text = httpx.get(gw.base_url + "/metrics", timeout=10).text
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _tokens(samples, model: str, provider: str) -> dict[str, float]:
    return {kind: samples.get(("modelwire_tokens_total",
                               frozenset({"model": model, "provider": provider, "kind": kind}.items())), 0)
            for kind in KINDS}


def _one(samples, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0)


def _delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] for k in before}


def _anthropic_kinds(usage: dict) -> dict[str, float]:
    read, write = usage.get("cache_read_input_tokens") or 0, usage.get("cache_creation_input_tokens") or 0
    return {"input": usage["input_tokens"] + read + write, "output": usage["output_tokens"],
            "cache_read": read, "cache_write": write, "reasoning": 0}


def _anthropic_cost(usage: dict) -> float:
    return (usage["input_tokens"] * PRICE["input"] + usage["output_tokens"] * PRICE["output"]
            + (usage.get("cache_read_input_tokens") or 0) * PRICE["cache_read"]
            + (usage.get("cache_creation_input_tokens") or 0) * PRICE["cache_write"]) / 1e6


def _events(raw: bytes) -> list[dict]:
    return [orjson.loads(line[5:]) for line in raw.split(b"\n")
            if line.startswith(b"data:") and line[5:].strip() != b"[DONE]"]


def test_a_lane_json_answer_adds_exactly_its_usage_and_cost(gw):
    body = {"model": "claude", "max_tokens": 64, "system": SYSTEM, "messages": [{"role": "user", "content": "hi"}]}
    for expect_cache in ("cache_write", "cache_read"):
        before = _scrape(gw)
        r = httpx.post(gw.base_url + "/v1/messages", json=body, headers=ANTHROPIC, timeout=30)
        assert r.status_code == 200 and r.headers["x-modelwire-lane"] == "passthrough"
        after = _scrape(gw)
        usage = r.json()["usage"]
        delta = _delta(_tokens(before, "claude", "anthropic"), _tokens(after, "claude", "anthropic"))
        assert delta == _anthropic_kinds(usage)
        assert delta[expect_cache] > 0  # the prefix written, then read
        cost = (_one(after, "modelwire_cost_usd_total", model="claude", provider="anthropic")
                - _one(before, "modelwire_cost_usd_total", model="claude", provider="anthropic"))
        assert cost == pytest.approx(_anthropic_cost(usage), abs=1e-12)
    # a JSON answer has no first token of its own
    assert _one(after, "modelwire_time_to_first_token_seconds_count", door="anthropic_messages", model="claude") == 0


def test_a_lane_stream_adds_its_usage_once_and_one_time_to_first_token(gw):
    body = {"model": "claude", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    before = _scrape(gw)
    with httpx.stream("POST", gw.base_url + "/v1/messages", json=body, headers=ANTHROPIC, timeout=30) as r:
        assert r.headers["x-modelwire-lane"] == "passthrough"
        raw = b"".join(r.iter_bytes())
    after = _scrape(gw)
    usage: dict = {}
    for event in _events(raw):  # input counts in message_start, the output count in message_delta
        if event["type"] == "message_start":
            usage.update(event["message"]["usage"])
        elif event["type"] == "message_delta":
            usage.update(event["usage"])
    assert usage["output_tokens"] > 0
    assert _delta(_tokens(before, "claude", "anthropic"), _tokens(after, "claude", "anthropic")) == _anthropic_kinds(usage)
    cost = _one(after, "modelwire_cost_usd_total", model="claude", provider="anthropic")
    assert cost == pytest.approx(_anthropic_cost(usage), abs=1e-12)
    labels = {"door": "anthropic_messages", "model": "claude"}
    assert _one(after, "modelwire_time_to_first_token_seconds_count", **labels) == 1
    assert (_one(after, "modelwire_time_to_first_token_seconds_sum", **labels)
            <= _one(after, "modelwire_request_duration_seconds_sum", **labels))
    assert _one(after, "modelwire_requests_total", door="anthropic_messages", model="claude",
                served_model="claude-sonnet-4-5", provider="anthropic", status_class="2xx", lane="passthrough") == 1


def test_a_chat_lane_stream_counts_the_final_usage_chunk_not_the_nulls_before_it(gw):
    body = {"model": "gpt", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream("POST", gw.base_url + "/v1/chat/completions", json=body, timeout=30) as r:
        assert r.headers["x-modelwire-lane"] == "passthrough"
        raw = b"".join(r.iter_bytes())
    assert raw.count(b'"usage":null') > 1  # every chunk but the last says so
    usage = _events(raw)[-1]["usage"]
    after = _scrape(gw)
    assert _tokens(after, "gpt", "openai") == {
        "input": usage["prompt_tokens"], "output": usage["completion_tokens"],
        "cache_read": usage["prompt_tokens_details"]["cached_tokens"], "cache_write": 0,
        "reasoning": usage["completion_tokens_details"]["reasoning_tokens"]}
    assert _one(after, "modelwire_time_to_first_token_seconds_count", door="chat_completions", model="gpt") == 1


def test_the_translating_path_counts_its_answers_usage_as_before(gw):
    r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                   json={"model": "emu", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200 and "x-modelwire-lane" not in r.headers
    usage = r.json()["usage"]
    after = _scrape(gw)
    tokens = _tokens(after, "emu", "emulator")
    assert (tokens["input"], tokens["output"]) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert _one(after, "modelwire_requests_total", door="chat_completions", model="emu", served_model="emulator-1",
                provider="emulator", status_class="2xx", lane="translate") == 1


def test_embeddings_are_counted_with_their_input_tokens(gw):
    r = httpx.post(gw.base_url + "/v1/embeddings", timeout=30,
                   json={"model": "embed", "input": ["the first text to embed", "a second one"]})
    assert r.status_code == 200, r.text
    assert httpx.post(gw.base_url + "/v1/embeddings", json={"model": "embed"}, timeout=30).status_code == 400
    after = _scrape(gw)
    assert _one(after, "modelwire_requests_total", door="embeddings", model="embed", served_model="emulator-embed-1",
                provider="emulator", status_class="2xx", lane="translate") == 1
    # refused before its model was read: counted as the chat doors count one (model "other", no upstream)
    assert _one(after, "modelwire_requests_total", door="embeddings", model="other", served_model="-",
                provider="-", status_class="4xx", lane="translate") == 1
    assert _tokens(after, "embed", "emulator") == {
        "input": r.json()["usage"]["prompt_tokens"], "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    assert _one(after, "modelwire_gateway_overhead_seconds_count", door="embeddings") == 1  # the served one's
    assert _one(after, "modelwire_request_duration_seconds_count", door="embeddings", model="embed") == 1
    assert _one(after, "modelwire_request_duration_seconds_count", door="embeddings", model="other") == 1


def test_the_status_page_shows_a_lane_answers_cost_with_metrics_off(emulator_clean, monkeypatch):
    from modelwire.config import config_from_dict

    monkeypatch.setenv("LANEM_ANTHROPIC_KEY", "sk-" + "ant-lanem-test")
    admin = "adm-lanem-" + "test-key-0123456789"
    config = config_from_dict({
        "models": {"claude": {"provider": "anthropic", "model": "claude-sonnet-4-5", "api_key_env": "LANEM_ANTHROPIC_KEY",
                              "base_url": emulator_clean.anthropic_base_url("anthropic")}},
        "prices": {"anthropic/claude-sonnet-4-5": PRICE},
        "gateway": {"admin_keys_env": "LANEM_ADMIN_KEYS", "metrics": {"enabled": False}},
    })
    with RunningGateway(config, environ={"LANEM_ADMIN_KEYS": admin}) as gw:
        r = httpx.post(gw.base_url + "/v1/messages", headers=ANTHROPIC, timeout=30,
                       json={"model": "claude", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]})
        assert r.headers["x-modelwire-lane"] == "passthrough"
        data = httpx.get(gw.base_url + "/ui/data", headers={"authorization": f"Bearer {admin}"}, timeout=10).json()
    (last,) = data["recent"]
    assert last["lane"] is True
    assert last["cost_usd"] == pytest.approx(_anthropic_cost(r.json()["usage"]), abs=1e-8)


def test_an_open_lane_stream_is_counted_in_open_streams_until_it_ends(gw, emulator_clean):
    emulator_clean.set_faults([{"fault": "slow_chunks", "model": "claude-sonnet-4-5", "seconds": 0.2}])
    body = {"model": "claude", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream("POST", gw.base_url + "/v1/messages", json=body, headers=ANTHROPIC, timeout=30) as r:
        assert r.headers["x-modelwire-lane"] == "passthrough"
        chunks = r.iter_bytes()
        next(chunks)  # the stream is open: its first bytes came
        during = _one(_scrape(gw), "modelwire_open_streams")
        b"".join(chunks)
    assert during == 1
    assert _one(_scrape(gw), "modelwire_open_streams") == 0
