"""Prometheus metrics: :class:`Metrics`, an :class:`~modelwire.observe.Observer` for a
Client and the gateway's recorder of requests (``/metrics``).

Needs ``prometheus-client`` (``pip install 'modelwire[metrics]'``); imported only when
metrics are on. Label values are bounded: a model name outside ``models`` (the
gateway passes its configured names and aliases) and an upstream id outside
``served_models`` count as ``other``, so no client can grow the series by inventing
names. With ``PROMETHEUS_MULTIPROC_DIR`` set (``modelwire serve --workers N`` sets it
to a directory of its own run), every worker writes its values there and a scrape of
any worker reads the sum (prometheus-client's multiprocess mode).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

from .reports import AttemptReport, BaseObserver, CallReport

__all__ = ["CONTENT_TYPE", "Metrics", "multiprocess_dir"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OTHER = "other"
_NONE = "-"  # no provider or upstream model (the request failed before one was chosen)

# seconds: from a fast cached answer to a long agent turn
_LATENCY = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_OVERHEAD = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)
_TOKEN_KINDS = (("input", "prompt_tokens"), ("output", "completion_tokens"),
                ("cache_read", "cache_read_tokens"), ("cache_write", "cache_write_tokens"),
                ("reasoning", "reasoning_tokens"))
_STATUS_CLASS = {1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}


def multiprocess_dir() -> str | None:
    """The multiprocess directory in force (``None``: one process)."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.environ.get("prometheus_multiproc_dir")


class Metrics(BaseObserver):
    """The counters, in a registry of their own (``registry``) unless one is given.

    ``models``: the model names allowed as label values (``None``: any, for a program's
    own Clients, whose names the program chose); ``served_models``: the upstream ids
    allowed, likewise; ``providers``: the provider names allowed."""

    def __init__(self, *, registry: CollectorRegistry | None = None,
                 models: Iterable[str] | None = None, served_models: Iterable[str] | None = None,
                 providers: Iterable[str] | None = None, call_durations: bool = True) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.models = frozenset(models) if models is not None else None
        self.served_models = frozenset(served_models) if served_models is not None else None
        self.providers = frozenset(providers) if providers is not None else None
        r = self.registry
        self.requests = Counter(
            "modelwire_requests", "Gateway requests answered, by door, model asked, model served, "
            "provider, status class and lane", ["door", "model", "served_model", "provider", "status_class",
                                                "lane"], registry=r)
        self.request_seconds = Histogram(
            "modelwire_request_duration_seconds", "Gateway request time, to the answer's last byte",
            ["door", "model"], buckets=_LATENCY, registry=r)
        self.first_token_seconds = Histogram(
            "modelwire_time_to_first_token_seconds", "Gateway streams: time to the first event",
            ["door", "model"], buckets=_LATENCY, registry=r)
        self.overhead_seconds = Histogram(
            "modelwire_gateway_overhead_seconds", "Time the gateway itself spent on a request "
            "(x-modelwire-overhead-ms), not waiting on the upstream", ["door"], buckets=_OVERHEAD, registry=r)
        self.calls = Counter(
            "modelwire_calls", "Client calls (complete, stream), by model, provider and result",
            ["model", "provider", "result"], registry=r)
        self.call_seconds = Histogram(
            "modelwire_call_duration_seconds", "Client call time, every attempt and wait included",
            ["model"], buckets=_LATENCY, registry=r)
        self.tokens = Counter(
            "modelwire_tokens", "Tokens, by model, provider and kind (input, output, cache_read, "
            "cache_write, reasoning)", ["model", "provider", "kind"], registry=r)
        self.cost = Counter(
            "modelwire_cost_usd", "Cost in USD of the answers whose price is known",
            ["model", "provider"], registry=r)
        self.failures = Counter(
            "modelwire_upstream_failures", "Failed upstream attempts, by provider and classified kind",
            ["provider", "kind"], registry=r)
        self.retries = Counter("modelwire_retries", "Attempts retried on the same model",
                               ["model", "provider"], registry=r)
        self.rotations = Counter("modelwire_rotations", "Attempts retried with another credential",
                                 ["provider"], registry=r)
        self.fallbacks = Counter("modelwire_fallbacks", "Moves to the next model of the chain, by "
                                 "the model given up", ["model"], registry=r)
        self.streams = Gauge("modelwire_open_streams", "Gateway answers streaming right now",
                             registry=r, multiprocess_mode="livesum")
        self.connections = Gauge("modelwire_open_connections", "Client connections open to the gateway",
                                 registry=r, multiprocess_mode="livesum")
        self._credentials: Callable[[], Iterable[tuple[str, str, int]]] | None = None
        # the gateway leaves it out: its request histogram already times each call
        self.call_durations = call_durations
        # each metric's child per label values, as prometheus-client advises for labels used
        # often (``labels()`` checks and locks on every call)
        self._children: dict[tuple[Any, tuple[str, ...]], Any] = {}

    def child(self, metric: Any, *values: str) -> Any:
        """``metric.labels(*values)``, made once."""
        key = (metric, values)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*values)
        return found

    # ------------------------------------------------------------- labels
    def model(self, name: str | None) -> str:
        if not name:
            return _NONE
        return name if self.models is None or name in self.models else OTHER

    def served(self, model_id: str | None) -> str:
        if not model_id:
            return _NONE
        return model_id if self.served_models is None or model_id in self.served_models else OTHER

    def provider(self, name: str | None) -> str:
        if not name:
            return _NONE
        return name if self.providers is None or name in self.providers else OTHER

    # ----------------------------------------------------- Client reports
    def attempt_ended(self, handle: Any, attempt: AttemptReport) -> None:
        outcome = attempt.outcome
        if outcome == "ok":
            return
        provider = self.provider(attempt.provider)
        if attempt.failure is not None:
            self.child(self.failures, provider, attempt.failure).inc()
        if outcome == "retried":
            self.child(self.retries, self.model(attempt.model), provider).inc()
        elif outcome == "rotated":
            self.child(self.rotations, provider).inc()
        elif outcome == "fell_back":
            self.child(self.fallbacks, self.model(attempt.model)).inc()

    def call_ended(self, handle: Any, call: CallReport) -> None:
        model = self.model(call.model)
        provider = self.provider(call.provider)
        child = self.child
        child(self.calls, model, provider, "error" if call.error_type else "ok").inc()
        if self.call_durations:
            child(self.call_seconds, model).observe((call.ended_ns - call.started_ns) / 1e9)
        usage = call.usage
        if usage:
            for kind, key in _TOKEN_KINDS:
                count = usage.get(key)
                if count:
                    child(self.tokens, model, provider, kind).inc(count)
        if call.cost:
            child(self.cost, model, provider).inc(call.cost)

    # ---------------------------------------------------- gateway requests
    def request(self, door: str, model: str | None, upstream: str | None, status: int, lane: bool,
                seconds: float, overhead: float | None, first_token: float | None) -> None:
        """One gateway request answered (``upstream``: ``provider/model-id``)."""
        provider, _, served = (upstream or "").partition("/") if upstream != _NONE else ("", "", "")
        model_label = self.model(model)
        child = self.child
        child(self.requests, door, model_label, self.served(served), self.provider(provider),
              _STATUS_CLASS.get(status // 100, "5xx"), "passthrough" if lane else "translate").inc()
        child(self.request_seconds, door, model_label).observe(seconds)
        if overhead is not None:
            child(self.overhead_seconds, door).observe(overhead)
        if first_token is not None:
            child(self.first_token_seconds, door, model_label).observe(first_token)

    # ------------------------------------------------------------ scrape
    def watch_credentials(self, source: Callable[[], Iterable[tuple[str, str, int]]]) -> None:
        """``source()`` gives ``(provider, state, count)`` rows at each scrape: the
        ``modelwire_credentials`` gauge (read live, not stored)."""
        self._credentials = source
        self.registry.register(_Credentials(self))

    def render(self) -> bytes:
        """The exposition text: this process's values, or with a multiprocess directory,
        every worker's summed (and this process's live credential gauge)."""
        path = multiprocess_dir()
        if path is None:
            return generate_latest(self.registry)
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=path)
        if self._credentials is not None:
            registry.register(_Credentials(self))
        return generate_latest(registry)

    def credential_rows(self) -> Iterator[tuple[str, str, int]]:
        if self._credentials is None:
            return iter(())
        return iter(self._credentials())


class _Credentials:
    """The collector behind ``modelwire_credentials{provider,state}``."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("modelwire_credentials", "Credentials by provider and state "
                                   "(ok, cooling, dead)", labels=["provider", "state"])
        for provider, state, count in self.metrics.credential_rows():
            family.add_metric([self.metrics.provider(provider), state], count)
        yield family

    def describe(self) -> list[Any]:
        return []


def mark_worker_gone(pid: int) -> None:
    """A worker exits: its live gauges (open streams, connections) leave the sum."""
    if multiprocess_dir() is None:
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)
