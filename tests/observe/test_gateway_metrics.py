"""The gateway's /metrics: counters by label after real requests, labels no client can
grow, its own keys, and off by default when the gateway is not on loopback."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from modelwire.gateway.testing import RunningGateway

from .conftest import RETRY_THEN_FALLBACK, chain_config

pytest.importorskip("prometheus_client")


def _samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def _chat(gw, model, **kw):
    return httpx.post(gw.base_url + "/v1/chat/completions", timeout=30, headers=kw.pop("headers", {}),
                      json={"model": model, "messages": [{"role": "user", "content": "hi"}], **kw})


def test_requests_are_counted_by_door_model_provider_status_and_lane(emulator_clean):
    emulator_clean.set_faults(RETRY_THEN_FALLBACK)
    with RunningGateway(chain_config(emulator_clean), environ={}) as gw:
        assert _chat(gw, "m").status_code == 200  # retried, then served by the fallback
        assert _chat(gw, "m", stream=True).status_code == 200
        r = httpx.get(gw.base_url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4")
    s = _samples(r.text)
    served_by = {"door": "chat_completions", "model": "m", "provider": "emulator", "lane": "translate",
                 "status_class": "2xx"}
    # the second request starts at the fallback that served the first (fallback_stick_s)
    assert _value(s, "modelwire_requests_total", **served_by, served_model="emulator-2") == 2
    assert _value(s, "modelwire_requests_total", **served_by, served_model="emulator-1") is None
    assert _value(s, "modelwire_retries_total", model="m", provider="emulator") == 1
    assert _value(s, "modelwire_fallbacks_total", model="m") == 1
    assert _value(s, "modelwire_upstream_failures_total", provider="emulator", kind="overloaded") == 1
    assert _value(s, "modelwire_upstream_failures_total", provider="emulator", kind="billing") == 1
    assert _value(s, "modelwire_request_duration_seconds_count", door="chat_completions", model="m") == 2
    assert _value(s, "modelwire_time_to_first_token_seconds_count", door="chat_completions", model="m") == 1
    assert _value(s, "modelwire_gateway_overhead_seconds_count", door="chat_completions") == 2
    assert _value(s, "modelwire_tokens_total", model="m", provider="emulator", kind="input") > 0
    assert "modelwire_calls_total" not in r.text  # the gateway's calls are its requests
    assert _value(s, "modelwire_open_streams") == 0  # the stream ended
    assert _value(s, "modelwire_open_connections") == 1  # the scrape's own


def test_model_names_a_client_invents_are_counted_as_other(emulator_clean):
    with RunningGateway(chain_config(emulator_clean), environ={}) as gw:
        for name in ("emulator/invented-1", "emulator/invented-2", "no-such-model"):
            _chat(gw, name)
        text = httpx.get(gw.base_url + "/metrics").text
    assert "invented" not in text and "no-such-model" not in text
    s = _samples(text)
    assert _value(s, "modelwire_requests_total", door="chat_completions", model="other", served_model="other",
                  provider="emulator", status_class="2xx", lane="translate") == 2
    assert _value(s, "modelwire_requests_total", door="chat_completions", model="other", served_model="-",
                  provider="-", status_class="4xx", lane="translate") == 1


def test_a_credential_that_got_a_429_shows_as_cooling(emulator_clean, tmp_path):
    from modelwire.config import load_config
    from modelwire.credentials import CredentialPool

    path = tmp_path / "modelwire.yaml"
    path.write_text(
        f"models:\n  ds: {{provider: deepseek, model: cool-model, base_url: \"{emulator_clean.openai_base_url('deepseek')}\"}}\n"
        f"credential_pool: {{store: \"sqlite:///{tmp_path}/state.db\"}}\n")
    config = load_config(str(path))
    pool = CredentialPool.for_provider("deepseek", config=config)
    pool.add("sk-" + "metrics-first-000", label="first")
    pool.add("sk-" + "metrics-second-00", label="second")
    emulator_clean.set_faults([{"fault": "rate_limit", "model": "cool-model", "times": 1, "retry_after": 3600}])
    with RunningGateway(config, environ={}) as gw:
        assert _chat(gw, "ds").status_code == 200  # the second key served it
        text = httpx.get(gw.base_url + "/metrics").text
    s = _samples(text)
    assert _value(s, "modelwire_credentials", provider="deepseek", state="cooling") == 1
    assert _value(s, "modelwire_credentials", provider="deepseek", state="ok") == 1
    assert _value(s, "modelwire_rotations_total", provider="deepseek") == 1
    assert "metrics-first" not in text and "label=" not in text  # no key, no credential label


def test_metrics_keys_guard_the_endpoint_apart_from_the_gateway_keys(emulator_clean):
    env = {"MODELWIRE_GATEWAY_KEYS": "gw-" + "key-123456", "SCRAPE_KEYS": "scrape-" + "key-123456"}
    config = chain_config(emulator_clean, metrics={"keys_env": "SCRAPE_KEYS"})
    with RunningGateway(config, environ=env) as gw:
        url = gw.base_url + "/metrics"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"authorization": "Bearer gw-key-123456"}).status_code == 401
        ok = httpx.get(url, headers={"authorization": "Bearer scrape-key-123456"})
    assert ok.status_code == 200 and "modelwire_requests" in ok.text


def test_without_metrics_keys_the_gateway_keys_guard_the_endpoint(emulator_clean):
    env = {"MODELWIRE_GATEWAY_KEYS": "gw-" + "key-123456"}
    with RunningGateway(chain_config(emulator_clean), environ=env) as gw:
        url = gw.base_url + "/metrics"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"authorization": "Bearer gw-key-123456"}).status_code == 200


@pytest.mark.parametrize(("host", "metrics", "env", "status"), [
    pytest.param("0.0.0.0", {}, {}, 404, id="public-host-off-by-default"),
    pytest.param("0.0.0.0", {"keys_env": "SCRAPE"}, {"SCRAPE": "k-" + "123456789"}, 200, id="public-host-with-metrics-keys"),
    pytest.param("0.0.0.0", {"enabled": True}, {}, 200, id="public-host-turned-on"),
    pytest.param("127.0.0.1", {"enabled": False}, {}, 404, id="loopback-turned-off"),
])
def test_metrics_are_off_by_default_off_loopback(emulator_clean, host, metrics, env, status):
    environ = {"MODELWIRE_SERVE_HOST": host, **env}
    with RunningGateway(chain_config(emulator_clean, metrics=metrics), environ=environ) as gw:
        r = httpx.get(gw.base_url + "/metrics", headers={"authorization": "Bearer k-123456789"})
    assert r.status_code == status
