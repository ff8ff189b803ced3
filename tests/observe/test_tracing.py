"""OpenTelemetry traces: a span per gateway request and Client call, a child per attempt
with the ladder's decision, trace context in and (only to internal upstreams) out."""

from __future__ import annotations

import httpx
import pytest

from modelwire.gateway.testing import RunningGateway

from .conftest import RETRY_THEN_FALLBACK, chain_config

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


def _post(gw, model="m", **kw):
    return httpx.post(gw.base_url + "/v1/messages", timeout=30, headers=kw.pop("headers", {}),
                      json={"model": model, "max_tokens": 64,
                            "messages": [{"role": "user", "content": "the secret plan"}], **kw})


def _by_name(spans):
    return {s.name: s for s in spans}


def test_an_agent_turn_with_a_retry_and_a_fallback_shows_each_attempt_as_a_child_span(
        emulator_clean, memory_spans):
    emulator_clean.set_faults(RETRY_THEN_FALLBACK)
    with RunningGateway(chain_config(emulator_clean, tracing={"enabled": True}), environ={}) as gw:
        r = _post(gw, headers={"traceparent": PARENT},
                  tools=[{"name": "calc", "description": "add", "input_schema": {"type": "object"}}])
    assert r.status_code == 200, r.text
    spans = memory_spans.get_finished_spans()
    request = _by_name(spans)["POST /v1/messages"]
    call = _by_name(spans)["chat m"]
    attempts = sorted((s for s in spans if s.parent is not None and s.parent.span_id == call.context.span_id),
                      key=lambda s: s.start_time)
    # one trace, continued from the caller's traceparent
    assert {format(s.context.trace_id, "032x") for s in spans} == {TRACE_ID}
    assert format(request.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert call.parent.span_id == request.context.span_id
    assert [(a.attributes["gen_ai.request.model"], a.attributes["modelwire.attempt.outcome"],
             a.attributes["modelwire.attempt.decision"]) for a in attempts] == [
        ("emulator-1", "retried", "retry"), ("emulator-1", "fell_back", "fallback"),
        ("emulator-2", "ok", "none")]
    failed = attempts[0].attributes
    assert failed["error.type"] == "OverloadedError" and failed["modelwire.failure.kind"] == "overloaded"
    assert attempts[1].attributes["modelwire.failure.kind"] == "billing"
    assert "error.type" not in attempts[2].attributes
    assert all(a.attributes["gen_ai.provider.name"] == "emulator" for a in attempts)
    assert all(a.attributes["gen_ai.operation.name"] == "chat" for a in attempts)
    # the call span: the GenAI conventions' names, the usage the client was told
    usage = r.json()["usage"]
    c = call.attributes
    assert (c["gen_ai.operation.name"], c["gen_ai.request.model"], c["gen_ai.provider.name"],
            c["gen_ai.response.model"]) == ("chat", "m", "emulator", "emulator-2")
    assert (c["gen_ai.usage.input_tokens"], c["gen_ai.usage.output_tokens"]) == (
        usage["input_tokens"], usage["output_tokens"])
    assert c["modelwire.attempts"] == 3
    assert request.attributes["http.response.status_code"] == 200
    assert request.end_time >= call.end_time >= attempts[-1].end_time
    # no content unless asked for
    assert not any("secret plan" in str(v) for s in spans for v in s.attributes.values())


def test_message_content_is_recorded_only_when_turned_on(emulator_clean, memory_spans):
    with RunningGateway(chain_config(emulator_clean, tracing={"enabled": True, "content": True}),
                        environ={}) as gw:
        assert _post(gw).status_code == 200
    call = _by_name(memory_spans.get_finished_spans())["chat m"]
    assert "the secret plan" in call.attributes["gen_ai.input.messages"]
    assert call.attributes["gen_ai.output.messages"].startswith('[{"role":"assistant"')


def test_a_streamed_answer_ends_its_spans_when_the_stream_ends(emulator_clean, memory_spans):
    with RunningGateway(chain_config(emulator_clean, tracing={"enabled": True}), environ={}) as gw:
        r = _post(gw, stream=True)
        assert r.status_code == 200 and "message_stop" in r.text
    names = _by_name(memory_spans.get_finished_spans())
    assert names["chat m"].attributes["modelwire.stream"] is True
    assert names["chat m"].attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert names["POST /v1/messages"].end_time >= names["chat m"].end_time


def _upstream_traceparents(emulator, since):
    return [e["headers"].get("traceparent") for e in emulator.requests(since)["requests"]]


def test_trace_context_goes_only_to_upstreams_marked_internal(emulator_clean, memory_spans):
    emulator = emulator_clean
    start = len(emulator.requests()["requests"]) and emulator.requests()["requests"][-1]["n"]
    with RunningGateway(chain_config(emulator, tracing={"enabled": True}), environ={}) as gw:
        assert _post(gw, headers={"traceparent": PARENT}).status_code == 200
    assert _upstream_traceparents(emulator, start) == [None]  # a third party by default
    start = emulator.requests()["requests"][-1]["n"]
    config = chain_config(emulator, tracing={"enabled": True, "internal_models": ["m"]})
    with RunningGateway(config, environ={}) as gw:
        assert _post(gw, headers={"traceparent": PARENT}).status_code == 200
    [sent] = _upstream_traceparents(emulator, start)
    call = _by_name(memory_spans.get_finished_spans())["chat m"]
    assert sent == f"00-{TRACE_ID}-{call.context.span_id:016x}-01"


def test_a_library_client_traces_through_its_own_provider(emulator_clean):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from modelwire import Client
    from modelwire.observe import Tracer

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with Client("m", config=chain_config(emulator_clean), observer=Tracer(tracer_provider=provider)) as c:
        c.complete([{"role": "user", "content": "hi"}])
    call, attempt = sorted(exporter.get_finished_spans(), key=lambda s: s.parent is not None)
    assert call.name == "chat m" and call.parent is None
    assert attempt.parent.span_id == call.context.span_id
    assert attempt.attributes["modelwire.attempt.outcome"] == "ok"
