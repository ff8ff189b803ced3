from __future__ import annotations

import pytest

from modelwire.testing import emulator, emulator_clean  # noqa: F401


def chain_config(emulator, **gateway):  # noqa: F811 - the fixture's value
    """``m`` (emulator-1) falling back to ``b`` (emulator-2), both on the emulator."""
    from modelwire.config import config_from_dict

    base = emulator.openai_base_url()
    return config_from_dict({
        "models": {"m": {"provider": "emulator", "model": "emulator-1", "base_url": base},
                   "b": {"provider": "emulator", "model": "emulator-2", "base_url": base}},
        "default_model": "m", "fallback": ["b"], "gateway": gateway})


# an overload answered with Retry-After: 0 (retried at once), then a spent quota on the
# primary (billing, no other key: the ladder falls back)
RETRY_THEN_FALLBACK = [
    {"fault": "overloaded", "model": "emulator-1", "times": 1, "retry_after": 0},
    {"fault": "quota", "model": "emulator-1", "times": 1},
]


@pytest.fixture(scope="session")
def spans():
    """The process's global tracer provider, exporting to memory (set once: OpenTelemetry
    allows one global provider per process); cleared before each test that takes it."""
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter


@pytest.fixture
def memory_spans(spans):
    spans.clear()
    yield spans
    spans.clear()
