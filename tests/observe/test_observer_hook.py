"""The Client's observer hook: what a program that does not run the gateway sees."""

from __future__ import annotations

import pytest

from modelwire import Client, FallbackExhaustedError
from modelwire.observe import AttemptReport, BaseObserver, CallReport, Observer
from modelwire.resilience import RetryPolicy

from .conftest import RETRY_THEN_FALLBACK, chain_config


class Recorder(BaseObserver):
    def __init__(self) -> None:
        self.attempts: list[AttemptReport] = []
        self.calls: list[CallReport] = []
        self.started = 0

    def call_started(self, call):
        self.started += 1
        return "handle"

    def attempt_ended(self, handle, attempt):
        assert handle == "handle"
        self.attempts.append(attempt)

    def call_ended(self, handle, call):
        assert handle == "handle"
        self.calls.append(call)


def _client(emulator, observer):
    return Client("m", config=chain_config(emulator), observer=observer, fallback_stick_s=0,
                  retry=RetryPolicy(base=0.01, jitter=0))


def test_a_recorder_satisfies_the_observer_protocol():
    assert isinstance(Recorder(), Observer)


def test_each_attempt_reports_its_outcome_and_failure_kind(emulator_clean):
    emulator_clean.set_faults(RETRY_THEN_FALLBACK)
    rec = Recorder()
    with _client(emulator_clean, rec) as client:
        done = client.complete([{"role": "user", "content": "hi"}])
    assert [(a.model, a.outcome, a.failure) for a in rec.attempts] == [
        ("m", "retried", "overloaded"), ("m", "fell_back", "billing"), ("b", "ok", None)]
    assert rec.attempts[1].status == 402 and rec.attempts[2].status is None
    assert all(a.ended_ns >= a.started_ns for a in rec.attempts)
    assert rec.attempts[1].started_ns >= rec.attempts[0].ended_ns  # one after the other
    [call] = rec.calls
    assert (call.model, call.provider, call.model_id, call.attempts, call.error_type) == (
        "m", "emulator", "emulator-2", 3, None)
    assert call.usage["prompt_tokens"] == done.usage["prompt_tokens"] > 0
    assert rec.started == 1


def test_a_failed_call_reports_the_error_class_and_never_its_text(emulator_clean):
    emulator_clean.set_faults([{"fault": "unauthorized", "times": 4}])
    rec = Recorder()
    with _client(emulator_clean, rec) as client, pytest.raises(FallbackExhaustedError):
        client.complete([{"role": "user", "content": "hi"}])
    [call] = rec.calls
    assert call.error_type == "FallbackExhaustedError" and call.provider is None
    assert {a.error_type for a in rec.attempts} == {"AuthenticationError"}
    assert all(a.failure == "auth" for a in rec.attempts)


def test_the_warm_up_at_construction_reports_nothing(emulator_clean):
    rec = Recorder()
    with _client(emulator_clean, rec):
        pass
    assert rec.started == 0 and rec.calls == [] and rec.attempts == []


def test_an_observer_that_raises_never_breaks_the_call(emulator_clean, caplog):
    class Broken(BaseObserver):
        def call_ended(self, handle, call):
            raise RuntimeError("observer bug")

    with _client(emulator_clean, Broken()) as client:
        done = client.complete([{"role": "user", "content": "hi"}])
    assert done.text
    assert "observer failed in call_ended" in caplog.text


def test_a_stream_reports_once_when_it_ends(emulator_clean):
    rec = Recorder()
    with _client(emulator_clean, rec) as client, client.stream([{"role": "user", "content": "hi"}]) as stream:
        assert rec.calls == []  # not before the stream ends
        text = "".join(stream.text())
    [call] = rec.calls
    assert text and call.stream and call.finish_reason == "stop" and call.attempts == 1


def test_metrics_as_a_library_observer_count_tokens_and_ladder_steps(emulator_clean):
    pytest.importorskip("prometheus_client")
    from modelwire.observe import Metrics

    emulator_clean.set_faults(RETRY_THEN_FALLBACK)
    metrics = Metrics()
    with _client(emulator_clean, metrics) as client:
        done = client.complete([{"role": "user", "content": "hi"}])
    value = metrics.registry.get_sample_value
    assert value("modelwire_calls_total", {"model": "m", "provider": "emulator", "result": "ok"}) == 1
    assert value("modelwire_retries_total", {"model": "m", "provider": "emulator"}) == 1
    assert value("modelwire_fallbacks_total", {"model": "m"}) == 1
    assert value("modelwire_upstream_failures_total", {"provider": "emulator", "kind": "billing"}) == 1
    assert value("modelwire_tokens_total", {"model": "m", "provider": "emulator", "kind": "output"}) \
        == done.usage["completion_tokens"]
