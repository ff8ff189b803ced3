"""The gateway's request counters as a scrape shows them: each kind of request (door,
model, upstream, status, lane) counted exactly, however many kinds there are, and a
histogram appearing only once something was counted in it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families

from modelwire.observe.metrics import Metrics


@dataclass
class _Answer:
    usage: dict[str, int]
    cost: float | None = None


@dataclass
class _Facts:  # what the gateway's request books hold (RequestFacts)
    door: str = "chat_completions"
    model: str = "m"
    upstream: str = "emulator/emulator-1"
    status: int = 200
    lane: bool = False
    started: float = 0.0
    overhead: float | None = None
    first_token: float | None = None
    completion: Any = None
    span: Any = None
    span_token: Any = None


def _metrics() -> Metrics:
    return Metrics(models=["m"], served_models=["emulator-1"], providers=["emulator"], calls=False)


def _samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(metrics.render().decode()) for s in family.samples}


def _names(samples: dict[tuple[str, frozenset[tuple[str, str]]], float]) -> set[str]:
    return {name for name, _ in samples}


SERVED = {"door": "chat_completions", "model": "m", "served_model": "emulator-1", "provider": "emulator",
          "status_class": "2xx", "lane": "translate"}


def test_repeated_requests_add_up_in_every_counter_and_histogram():
    metrics = _metrics()
    usage = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14, "cache_read_tokens": 3,
             "cache_write_tokens": 0, "reasoning_tokens": 1}
    now = time.perf_counter()
    for _ in range(3):
        metrics.request(_Facts(started=now, overhead=0.0002, first_token=now + 0.07,
                               completion=_Answer(usage, cost=0.5)))
    s = _samples(metrics)
    assert s[("modelwire_requests_total", frozenset(SERVED.items()))] == 3
    by_door_model = frozenset({"door": "chat_completions", "model": "m"}.items())
    assert s[("modelwire_request_duration_seconds_count", by_door_model)] == 3
    assert s[("modelwire_time_to_first_token_seconds_count", by_door_model)] == 3
    # each first token at 0.07 s: in the 0.1 bucket, not the 0.05 one
    assert s[("modelwire_time_to_first_token_seconds_bucket", by_door_model | {("le", "0.05")})] == 0
    assert s[("modelwire_time_to_first_token_seconds_bucket", by_door_model | {("le", "0.1")})] == 3
    assert s[("modelwire_gateway_overhead_seconds_bucket",
              frozenset({("door", "chat_completions"), ("le", "0.00025")}))] == 3
    tokens = {kind: s.get(("modelwire_tokens_total", frozenset({"model": "m", "provider": "emulator",
                                                                 "kind": kind}.items())))
              for kind in ("input", "output", "cache_read", "cache_write", "reasoning")}
    assert tokens == {"input": 30, "output": 12, "cache_read": 9, "cache_write": None, "reasoning": 3}
    assert s[("modelwire_cost_usd_total", frozenset({"model": "m", "provider": "emulator"}.items()))] == 1.5


def test_a_histogram_shows_only_once_a_request_was_counted_in_it():
    metrics = _metrics()
    metrics.request(_Facts(started=time.perf_counter(), status=404, upstream="-", model="-"))
    names = _names(_samples(metrics))
    assert "modelwire_request_duration_seconds_count" in names
    assert "modelwire_time_to_first_token_seconds_count" not in names  # no stream yet
    assert "modelwire_gateway_overhead_seconds_count" not in names  # an error: no overhead measured
    assert "modelwire_tokens_total" not in names
    metrics.request(_Facts(started=time.perf_counter(), first_token=time.perf_counter()))
    assert "modelwire_time_to_first_token_seconds_count" in _names(_samples(metrics))


def test_requests_of_more_kinds_than_the_labels_kept_for_are_still_each_counted():
    metrics = _metrics()
    # an upstream that names a new model in every answer (more kinds than the 4,096 whose
    # labels are kept looked up): every one is counted, as "other"
    for i in range(5000):
        for _ in range(2):
            metrics.request(_Facts(started=time.perf_counter(), upstream=f"emulator/new-{i}"))
    other = {**SERVED, "served_model": "other"}
    assert _samples(metrics)[("modelwire_requests_total", frozenset(other.items()))] == 10_000
