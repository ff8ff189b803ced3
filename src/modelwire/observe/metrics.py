"""Prometheus metrics: :class:`Metrics`, an :class:`~modelwire.observe.Observer` for a
Client and the gateway's recorder of requests (``/metrics``).

Needs ``prometheus-client`` (a dependency of modelwire), imported only when metrics are
on. Label values are bounded: a model name outside ``models`` (the gateway passes its
configured names and aliases) and an upstream id outside ``served_models`` count as
``other``, so no client can grow the series by inventing names. With
``MODELWIRE_METRICS_DIR`` set (``modelwire serve --workers N`` sets it to a directory
of its own run, removed on exit), every worker writes its counts there and a scrape of
any worker reads the sum (:mod:`.tally`).
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from operator import add
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from .reports import AttemptReport, BaseObserver, CallReport, Reports
from .tally import Tally, observe, read_dir

if TYPE_CHECKING:
    from .gateway import RequestFacts

__all__ = ["CONTENT_TYPE", "METRICS", "Metrics", "multiprocess_dir"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OTHER = "other"
_NONE = "-"  # no provider or upstream model (the request failed before one was chosen)

# seconds: from a fast cached answer to a long agent turn
LATENCY = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
OVERHEAD = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")
# the Usage field of each kind, in TOKEN_KINDS' order (a missing one counts 0)
_USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
_ZEROS = (0,) * len(_USAGE_FIELDS)
_STATUS_CLASS = {1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}
_MAX_SERIES = 4096  # kinds of request whose labels are kept looked up

# name -> (kind, labels, help, buckets): every metric, as docs/guides/observability.md lists them
METRICS: dict[str, tuple[str, tuple[str, ...], str, tuple[float, ...]]] = {
    "modelwire_requests": ("counter", ("door", "model", "served_model", "provider", "status_class", "lane"),
                           ("Gateway requests answered, by door, model asked, model served, provider, "
                           "status class and lane"), ()),
    "modelwire_request_duration_seconds": ("histogram", ("door", "model"),
                                           "Gateway request time, to the answer's last byte", LATENCY),
    "modelwire_time_to_first_token_seconds": ("histogram", ("door", "model"),
                                              "Gateway streams: time to the first event", LATENCY),
    "modelwire_gateway_overhead_seconds": ("histogram", ("door",),
                                           ("Time the gateway itself spent on a request "
                                           "(x-modelwire-overhead-ms), not waiting on the upstream"), OVERHEAD),
    "modelwire_calls": ("counter", ("model", "provider", "result"),
                        "Client calls (complete, stream), by model, provider and result (ok, error)", ()),
    "modelwire_call_duration_seconds": ("histogram", ("model",),
                                        "Client call time, every attempt and wait included", LATENCY),
    # kept as one row per (model, provider): a count per kind, in TOKEN_KINDS' order
    "modelwire_tokens": ("counter_by_kind", ("model", "provider", "kind"),
                         ("Tokens, by model, provider and kind (input, output, cache_read, cache_write, "
                         "reasoning)"), ()),
    "modelwire_cost_usd": ("counter", ("model", "provider"), "Cost in USD of the answers whose price is known", ()),
    "modelwire_upstream_failures": ("counter", ("provider", "kind"),
                                    "Failed upstream attempts, by provider and classified kind", ()),
    "modelwire_retries": ("counter", ("model", "provider"), "Attempts retried on the same model", ()),
    "modelwire_rotations": ("counter", ("provider",), "Attempts retried with another credential", ()),
    "modelwire_fallbacks": ("counter", ("model",), "Moves to the next model of the chain, by the model given up", ()),
    "modelwire_open_streams": ("gauge", (), "Gateway answers streaming right now", ()),
    "modelwire_open_connections": ("gauge", (), "Client connections open to the gateway", ()),
}
_CALLS = ("modelwire_calls", "modelwire_call_duration_seconds")
_CREDENTIALS_HELP = "Credentials by provider and state (ok, cooling, dead), of the pools opened so far"


def multiprocess_dir() -> str | None:
    """The multiprocess directory in force (``None``: one process)."""
    return os.environ.get("MODELWIRE_METRICS_DIR") or None


class Metrics(BaseObserver):
    """The counters of a Client (as its ``observer``) or of the gateway.

    ``models``: the model names allowed as label values (``None``: any, for a program's
    own Clients, whose names the program chose); ``served_models``: the upstream ids
    allowed, likewise; ``providers``: the provider names allowed. ``registry``: a
    prometheus-client registry to show them in too (``prometheus_client.REGISTRY``, for
    ``start_http_server``); :meth:`render` gives the text either way."""

    # counts need no call's start nor its successful attempts; the gateway's (calls=False)
    # count its requests' tokens themselves, so they hear of failed attempts only
    reports: Reports

    def __init__(self, *, registry: CollectorRegistry | None = None,
                 models: Iterable[str] | None = None, served_models: Iterable[str] | None = None,
                 providers: Iterable[str] | None = None, calls: bool = True) -> None:
        self.models = frozenset(models) if models is not None else None
        self.served_models = frozenset(served_models) if served_models is not None else None
        self.providers = frozenset(providers) if providers is not None else None
        # modelwire_calls and its histogram; the gateway leaves them out (its requests are
        # its calls: modelwire_requests and its histogram count and time them)
        self.count_calls = calls
        self.reports = "ends" if calls else "failures"
        # label values already checked against the allow-lists (only allowed ones: a name a
        # client invents is never kept), one table per kind of name
        self._models: dict[str | None, str] = {}
        self._served: dict[str | None, str] = {}
        self._providers: dict[str | None, str] = {}
        # (door, model, upstream, status, lane) as a request's facts say them -> its labels
        # and rows (see request)
        self._series: dict[tuple[Any, ...], _Series] = {}
        self.tally = Tally([n for n, m in METRICS.items() if m[0] == "counter"],
                           [n for n, m in METRICS.items() if m[0] in ("histogram", "counter_by_kind")],
                           [n for n, m in METRICS.items() if m[0] == "gauge"])
        c, h = self.tally.counters, self.tally.histograms
        self._requests, self._calls, self._tokens, self._cost = (
            c["modelwire_requests"], c["modelwire_calls"], h["modelwire_tokens"], c["modelwire_cost_usd"])
        self._request_s, self._first_s, self._overhead_s, self._call_s = (
            h["modelwire_request_duration_seconds"], h["modelwire_time_to_first_token_seconds"],
            h["modelwire_gateway_overhead_seconds"], h["modelwire_call_duration_seconds"])
        self._credentials: Callable[[], Iterable[tuple[str, str, int]]] | None = None
        self.registry = registry if registry is not None else CollectorRegistry()
        self.registry.register(_Collector(self))

    # ------------------------------------------------------------- labels
    def model(self, name: str | None) -> str:
        return self._models.get(name) or _label(self._models, self.models, name)

    def served(self, model_id: str | None) -> str:
        return self._served.get(model_id) or _label(self._served, self.served_models, model_id)

    def provider(self, name: str | None) -> str:
        return self._providers.get(name) or _label(self._providers, self.providers, name)

    # ----------------------------------------------------- Client reports
    def attempt_ended(self, handle: Any, attempt: AttemptReport) -> None:
        outcome = attempt.outcome
        if outcome == "ok":
            return
        provider = self.provider(attempt.provider)
        counters = self.tally.counters
        with self.tally.lock:
            if attempt.failure is not None:
                _inc(counters["modelwire_upstream_failures"], (provider, attempt.failure))
            if outcome == "retried":
                _inc(counters["modelwire_retries"], (self.model(attempt.model), provider))
            elif outcome == "rotated":
                _inc(counters["modelwire_rotations"], (provider,))
            elif outcome == "fell_back":
                _inc(counters["modelwire_fallbacks"], (self.model(attempt.model),))

    def call_ended(self, handle: Any, call: CallReport) -> None:
        model = self._models.get(call.model) or _label(self._models, self.models, call.model)
        provider = self._providers.get(call.provider) or _label(self._providers, self.providers, call.provider)
        tally = self.tally
        usage = call.usage
        with tally.lock:
            if self.count_calls:
                _inc(self._calls, (model, provider, "error" if call.error_type else "ok"))
                observe(self._call_s, (model,), (call.ended_ns - call.started_ns) / 1e9, LATENCY)
            self._count_usage(model, provider, usage, call.cost)

    def _count_usage(self, model: str, provider: str, usage: Any, cost: float | None) -> None:
        """Tokens and cost of one answer (the lock held)."""
        if usage:
            key = (model, provider)
            row = self._tokens.get(key)
            if row is None:
                row = self._tokens[key] = [0, 0, 0, 0, 0]
            row[:] = map(add, row, map(usage.get, _USAGE_FIELDS, _ZEROS))
        if cost:
            _inc(self._cost, (model, provider), cost)

    # ---------------------------------------------------- gateway requests
    def request(self, facts: RequestFacts) -> None:
        """One gateway request answered, when its answer's last byte is out (``facts.
        completion``: the Completion whose usage and cost count). The gateway's alone,
        called on its event loop, where its scrapes and worker writes run too: no lock."""
        seconds = time.perf_counter() - facts.started
        first, overhead, answer = facts.first_token, facts.overhead, facts.completion
        series = (self._series.get((facts.door, facts.model, facts.upstream, facts.status, facts.lane))
                  or self._new_series(facts))
        requests = self._requests
        requests[series.key] = requests[series.key] + 1
        row = series.duration
        row[bisect_left(LATENCY, seconds)] += 1
        row[-1] += seconds
        if overhead is not None:
            row = series.overhead or series.overhead_row(self._overhead_s)
            row[bisect_left(OVERHEAD, overhead)] += 1
            row[-1] += overhead
        if first is not None:
            first -= facts.started
            row = series.first or series.first_row(self._first_s)
            row[bisect_left(LATENCY, first)] += 1
            row[-1] += first
        if answer is not None:
            usage = answer.usage
            if usage:
                tokens = series.tokens or series.tokens_row(self._tokens)
                tokens[:] = map(add, tokens, map(usage.get, _USAGE_FIELDS, _ZEROS))
            cost = answer.cost
            if cost:
                _inc(self._cost, series.usage_key, cost)

    def _new_series(self, facts: RequestFacts) -> _Series:
        """The labels of one kind of request (door, model, upstream, status, lane), looked
        up once; kept while there are fewer than ``_MAX_SERIES`` (an upstream naming a new
        model in every answer must not grow this)."""
        upstream = facts.upstream
        provider, _, served = upstream.partition("/") if upstream and upstream != _NONE else ("", "", "")
        model = self.model(facts.model)
        key = (facts.door, model, self.served(served), self.provider(provider),
               _STATUS_CLASS.get(facts.status // 100, "5xx"), "passthrough" if facts.lane else "translate")
        self._requests.setdefault(key, 0)
        series = _Series(key, _row_in(self._request_s, (facts.door, model), LATENCY))
        if len(self._series) < _MAX_SERIES:
            self._series[(facts.door, facts.model, upstream, facts.status, facts.lane)] = series
        return series

    def gauge(self, name: str, change: float) -> None:
        """``modelwire_open_streams`` / ``modelwire_open_connections`` up or down."""
        tally = self.tally
        with tally.lock:
            tally.gauges[name] += change

    # ------------------------------------------------------------ scrape
    def watch_credentials(self, source: Callable[[], Iterable[tuple[str, str, int]]]) -> None:
        """``source()`` gives ``(provider, state, count)`` rows at each scrape: the
        ``modelwire_credentials`` gauge (read live, not stored)."""
        self._credentials = source

    def render(self) -> bytes:
        """The exposition text: this process's values, or with a multiprocess directory,
        every worker's added up."""
        return generate_latest(self.registry)

    def write(self, *, final: bool = False) -> None:
        """This worker's counts into the multiprocess directory, when there is one."""
        path = multiprocess_dir()
        if path is not None:
            self.tally.write(path, final=final)

    def families(self) -> Iterator[Any]:
        path = multiprocess_dir()
        tally = read_dir(path, self.tally) if path is not None else self.tally
        with tally.lock:
            counters = {n: dict(t) for n, t in tally.counters.items()}
            histograms = {n: {k: list(r) for k, r in t.items()} for n, t in tally.histograms.items()}
            gauges = dict(tally.gauges)
        for name, (kind, labels, text, buckets) in METRICS.items():
            if not self.count_calls and name in _CALLS:
                continue
            if kind == "counter":
                family: Any = CounterMetricFamily(name, text, labels=labels)
                for key, value in sorted(counters[name].items()):
                    family.add_metric(list(key), value)
            elif kind == "counter_by_kind":
                family = CounterMetricFamily(name, text, labels=labels)
                for key, row in sorted(histograms[name].items()):
                    for kind_name, value in zip(TOKEN_KINDS, row, strict=True):
                        if value:
                            family.add_metric([*key, kind_name], value)
            elif kind == "histogram":
                family = HistogramMetricFamily(name, text, labels=labels)
                for key, row in sorted(histograms[name].items()):
                    family.add_metric(list(key), _cumulative(row, buckets), sum_value=row[-1])
            else:
                family = GaugeMetricFamily(name, text, value=gauges[name])
            yield family
        if self._credentials is not None:
            family = GaugeMetricFamily("modelwire_credentials", _CREDENTIALS_HELP, labels=["provider", "state"])
            for provider, state, count in self._credentials():
                family.add_metric([self.provider(provider), state], count)
            yield family


def _label(known: dict[str | None, str], allowed: frozenset[str] | None, name: str | None) -> str:
    """``name`` as a label value: itself when allowed (then kept in ``known``), ``other``
    when not, ``-`` when empty."""
    if not name:
        return _NONE
    if allowed is None or name in allowed:
        known[name] = name
        return name
    return OTHER


def _row(bounds: tuple[float, ...]) -> list[float]:
    """An empty histogram row: a count per bucket, the count above the last, the sum."""
    return [0.0] * (len(bounds) + 2)


class _Series:
    """One kind of gateway request's label values, and the rows of the tally it adds to
    (made on first use: a row appears in a scrape only once something counted in it)."""

    __slots__ = ("duration", "first", "key", "overhead", "tokens")

    def __init__(self, key: tuple[str, ...], duration: list[float]) -> None:
        self.key = key  # modelwire_requests' labels; key[0] door, key[1] model, key[3] provider
        self.duration = duration
        self.overhead: list[float] | None = None
        self.first: list[float] | None = None
        self.tokens: list[int] | None = None

    @property
    def usage_key(self) -> tuple[str, str]:
        return self.key[1], self.key[3]  # model, provider

    # each made on first use
    def overhead_row(self, table: dict[tuple[str, ...], list[float]]) -> list[float]:
        row = self.overhead = _row_in(table, self.key[:1], OVERHEAD)
        return row

    def first_row(self, table: dict[tuple[str, ...], list[float]]) -> list[float]:
        row = self.first = _row_in(table, self.key[:2], LATENCY)
        return row

    def tokens_row(self, table: dict[tuple[str, ...], Any]) -> list[int]:
        row = self.tokens = table.get(self.usage_key)
        if row is None:
            row = self.tokens = table[self.usage_key] = [0, 0, 0, 0, 0]
        return row


def _row_in(table: dict[tuple[str, ...], list[float]], key: tuple[str, ...], bounds: tuple[float, ...]) -> list[float]:
    """``table``'s histogram row under ``key``, made empty if there is none."""
    row = table.get(key)
    if row is None:
        row = table[key] = _row(bounds)
    return row


def _inc(table: dict[tuple[str, ...], float], key: tuple[str, ...], amount: float = 1) -> None:
    table[key] = table.get(key, 0) + amount


def _cumulative(row: list[float], bounds: tuple[float, ...]) -> list[tuple[str, float]]:
    out, running = [], 0.0
    for bound, count in zip(bounds, row, strict=False):
        running += count
        out.append((repr(float(bound)), running))
    out.append(("+Inf", running + row[len(bounds)]))
    return out


class _Collector:
    """The metrics as prometheus-client sees them (a custom collector)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        return self.metrics.families()

    def describe(self) -> list[Any]:
        return []  # nothing to check up front: the names are fixed, no clash possible
