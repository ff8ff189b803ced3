"""The gateway's observation: metrics and traces for each request, and the observer
its Clients report to. Built from ``gateway.metrics`` and ``gateway.tracing``; with both
off it is never made, and nothing of prometheus-client or OpenTelemetry is imported.

Per request the gateway calls :meth:`GatewayObserver.started` (with a tracer: the span,
current while the Client runs), ``finished`` (when the answer's last byte is out: the
request counters and histograms, the span's end) and :meth:`~GatewayObserver.detach`
(as the handler returns, when the request has a span). What it reads of a request is
:class:`RequestFacts`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ..errors import ConfigError
from .reports import Observer, Observers

__all__ = ["GatewayObserver", "RequestFacts", "metrics_wanted"]

log = logging.getLogger("modelwire.observe")


class RequestFacts(Protocol):
    """What the observer reads of one gateway request (the handlers' request books)."""

    door: str
    model: str  # the configured name it resolved to ("-" before that)
    upstream: str  # "provider/model-id" that served it ("-": none)
    status: int
    lane: bool
    started: float  # perf_counter at arrival
    overhead: float | None  # seconds the gateway itself spent (None: unknown)
    first_token: float | None  # perf_counter of a stream's first event
    completion: Any  # what answered it: its usage and cost (None: an error, or nobody counts usage)
    span: Any
    span_token: Any


def metrics_wanted(metrics_config: Any, loopback: bool, keys: Iterable[object]) -> bool:
    """``gateway.metrics.enabled``; unset: on when the gateway is bound to loopback or
    ``/metrics`` has keys of its own."""
    enabled = getattr(metrics_config, "enabled", None)
    if enabled is not None:
        return bool(enabled)
    return loopback or any(keys)


class GatewayObserver:
    def __init__(self, *, metrics: Any = None, tracer: Any = None, provider: Any = None) -> None:
        self.metrics = metrics
        self.tracer = tracer
        self.provider = provider  # a TracerProvider made for the gateway: flushed at close
        self.timer: Any = None  # a worker's next write of its counts (--workers N)
        parts: list[Observer] = [p for p in (metrics, tracer) if p is not None]
        self.client_observer: Observer | None = (
            parts[0] if len(parts) == 1 else Observers(*parts) if parts else None)
        # a request's end: its counters and histograms, its span's end (metrics alone: no
        # call between the two)
        self.finished: Callable[[RequestFacts], None] = (
            metrics.request if tracer is None and metrics is not None else self._finished)

    @classmethod
    def from_config(cls, config: Any, *, loopback: bool, metrics_keys: Iterable[object],
                    credentials: Callable[[], Iterable[tuple[str, str, int]]]) -> GatewayObserver | None:
        gw = getattr(config, "gateway", None)
        metrics = tracer = provider = None
        if metrics_wanted(getattr(gw, "metrics", None), loopback, metrics_keys):
            metrics = _metrics(config, explicit=getattr(getattr(gw, "metrics", None), "enabled", None))
            if metrics is not None:
                metrics.watch_credentials(credentials)
        tracing = getattr(gw, "tracing", None)
        if tracing is not None and tracing.enabled:
            tracer, provider = _tracer(tracing)
        if metrics is None and tracer is None:
            return None
        return cls(metrics=metrics, tracer=tracer, provider=provider)

    # ------------------------------------------------------------ requests
    def started(self, ctx: RequestFacts, path: str, headers: Any) -> None:
        """The request's span (called only with a tracer)."""
        ctx.span, ctx.span_token = self.tracer.request_started(ctx.door, path, headers)

    def detach(self, ctx: RequestFacts) -> None:
        """The handler returns: its span stops being the current one (a stream's span
        ends later, with the stream). Called only when ``ctx`` has a span token."""
        token = ctx.span_token
        if token is not None:
            ctx.span_token = None
            self.tracer.detach(token)

    def _finished(self, ctx: RequestFacts) -> None:
        if self.metrics is not None:
            self.metrics.request(ctx)
        span = ctx.span
        if span is not None:
            ctx.span = None
            self.tracer.request_ended(span, ctx.model, ctx.upstream, ctx.status, ctx.lane)

    def stream_opened(self) -> None:
        if self.metrics is not None:
            self.metrics.gauge("modelwire_open_streams", 1)

    def stream_closed(self) -> None:
        if self.metrics is not None:
            self.metrics.gauge("modelwire_open_streams", -1)

    def connection_opened(self) -> None:
        self.metrics.gauge("modelwire_open_connections", 1)

    def connection_closed(self) -> None:
        self.metrics.gauge("modelwire_open_connections", -1)

    def start(self, loop: Any) -> None:
        """In a worker of ``--workers N``: write its counts for the others to read, every
        second."""
        from .metrics import multiprocess_dir

        if self.metrics is None or multiprocess_dir() is None:
            return

        def tick() -> None:
            self.metrics.write()
            self.timer = loop.call_later(1.0, tick)

        self.timer = loop.call_later(1.0, tick)

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.provider is not None:
            self.provider.shutdown()  # the batch of spans not yet exported goes out now
        if self.metrics is not None:
            self.metrics.write(final=True)


def _metrics(config: Any, *, explicit: bool | None) -> Any:
    try:
        from .metrics import Metrics
    except ImportError as exc:
        if explicit:
            raise ConfigError("gateway.metrics.enabled needs prometheus-client: "
                              "pip install 'prometheus-client>=0.20'") from exc
        log.info("prometheus-client is not installed: /metrics is off")
        return None
    from ..providers.catalog import CATALOG

    models = set(getattr(config, "models", {}) or {})
    gw = getattr(config, "gateway", None)
    aliases = getattr(gw, "aliases", {}) or {}
    models.update(aliases.values())
    for name in (getattr(config, "default_model", None), *getattr(config, "fallback", ())):
        if name:
            models.add(name)
    served = {entry.model for entry in (getattr(config, "models", {}) or {}).values()}
    # provider/model strings the config names (fallbacks, aliases): their ids too
    for name in list(models):
        provider, sep, model_id = name.partition("/")
        if sep and provider in CATALOG:
            served.add(model_id)
    return Metrics(models=models, served_models=served, providers=CATALOG, calls=False)


def _tracer(tracing: Any) -> tuple[Any, Any]:
    try:
        from .tracing import Tracer
    except ImportError as exc:
        raise ConfigError("gateway.tracing.enabled needs OpenTelemetry: "
                          "pip install 'modelwire[otel]'") from exc
    provider = None
    if tracing.otlp_endpoint:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as exc:
            raise ConfigError("gateway.tracing.otlp_endpoint needs the OpenTelemetry SDK and its "
                              "OTLP/HTTP exporter: pip install 'modelwire[otel]'") from exc
        provider = TracerProvider(resource=Resource.create({"service.name": tracing.service_name}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=tracing.otlp_endpoint)))
    tracer = Tracer(tracer_provider=provider, internal=tracing.internal_models, content=tracing.content)
    return tracer, provider
