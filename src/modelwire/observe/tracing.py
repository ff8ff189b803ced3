"""OpenTelemetry traces: :class:`Tracer`, an :class:`~modelwire.observe.Observer` that
makes one span per Client call and a child span per attempt, and the gateway's request
spans.

Needs ``opentelemetry-api`` (and an SDK to export: ``pip install 'modelwire[otel]'``);
imported only when tracing is on. Attributes follow the OpenTelemetry GenAI semantic
conventions (``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.response.model``, ``gen_ai.usage.*``,
``error.type``); what modelwire adds is under ``modelwire.*`` (an attempt's outcome and
the ladder's decision). Message content (``gen_ai.input.messages``,
``gen_ai.output.messages``) only with ``content=True``.

Trace context goes upstream (a W3C ``traceparent`` header) only to the chain entries
named in ``internal``: a third-party provider never sees the caller's trace ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..types import JSONValue
from .reports import AttemptReport, BaseObserver, CallReport, CallStart

__all__ = ["DECISIONS", "Tracer"]

# an attempt's outcome -> the ladder's decision after it
DECISIONS = {"ok": "none", "retried": "retry", "rotated": "rotate", "refreshed": "refresh",
             "fell_back": "fallback", "failed": "raise", "interrupted": "none", "skipped": "skip"}
_W3C = TraceContextTextMapPropagator()


class Tracer(BaseObserver):
    """Spans for a Client's calls (``Client(..., observer=Tracer())``) and, in the
    gateway, for its requests. ``tracer_provider``: where spans go (default: the
    process's global provider, as OpenTelemetry's own setup leaves it)."""

    def __init__(self, *, tracer_provider: Any = None, internal: Iterable[str] = (),
                 content: bool = False) -> None:
        from .. import __version__

        self.tracer = trace.get_tracer("modelwire", __version__, tracer_provider=tracer_provider)
        self.internal = frozenset(internal)
        self.content = content

    # ----------------------------------------------------- Client reports
    def call_started(self, call: CallStart) -> Any:
        span = self.tracer.start_span(
            f"chat {call.model}", kind=SpanKind.CLIENT, start_time=call.started_ns,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": call.model,
                        "modelwire.stream": call.stream})
        if self.content:
            span.set_attribute("gen_ai.input.messages", _json(call.messages))
        return span

    def attempt_ended(self, span: Any, attempt: AttemptReport) -> None:
        child = self.tracer.start_span(
            f"chat {attempt.model_id}", context=trace.set_span_in_context(span), kind=SpanKind.CLIENT,
            start_time=attempt.started_ns, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": attempt.provider,
                "gen_ai.request.model": attempt.model_id, "modelwire.model": attempt.model,
                "modelwire.attempt.outcome": attempt.outcome,
                "modelwire.attempt.decision": DECISIONS.get(attempt.outcome, "none")})
        if attempt.error_type is not None:
            child.set_attribute("error.type", attempt.error_type)
            child.set_status(Status(StatusCode.ERROR))
        if attempt.failure is not None:
            child.set_attribute("modelwire.failure.kind", attempt.failure)
        if attempt.status is not None:
            child.set_attribute("http.response.status_code", attempt.status)
        if attempt.credential is not None:
            child.set_attribute("modelwire.credential", attempt.credential)  # a label, never a key
        child.end(end_time=attempt.ended_ns)

    def call_ended(self, span: Any, call: CallReport) -> None:
        attrs: dict[str, Any] = {"modelwire.attempts": call.attempts}
        if call.provider:
            attrs["gen_ai.provider.name"] = call.provider
        if call.model_id:
            attrs["gen_ai.response.model"] = call.model_id
        if call.response_id:
            attrs["gen_ai.response.id"] = call.response_id
        if call.finish_reason:
            attrs["gen_ai.response.finish_reasons"] = (call.finish_reason,)
        usage = call.usage
        if usage:
            attrs["gen_ai.usage.input_tokens"] = int(usage.get("prompt_tokens") or 0)
            attrs["gen_ai.usage.output_tokens"] = int(usage.get("completion_tokens") or 0)
        if call.cost is not None:
            attrs["modelwire.cost_usd"] = call.cost
        if call.interrupted:
            attrs["modelwire.interrupted"] = True
        if self.content and call.message is not None:
            attrs["gen_ai.output.messages"] = _json([call.message])
        span.set_attributes(attrs)
        if call.error_type is not None:
            span.set_attribute("error.type", call.error_type)
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=call.ended_ns)

    def upstream_headers(self, span: Any, model: str) -> Mapping[str, str]:
        if model not in self.internal or span is None:
            return {}
        carrier: dict[str, str] = {}
        _W3C.inject(carrier, context=trace.set_span_in_context(span))
        return carrier

    # ---------------------------------------------------- gateway requests
    def request_started(self, door: str, path: str, headers: Mapping[str, str]) -> tuple[Any, Any]:
        """A gateway request's span (the caller's ``traceparent`` as its parent) made the
        current one; returns it and the token :meth:`detach` takes."""
        carrier = {}
        for name in ("traceparent", "tracestate"):
            value = headers.get(name)
            if value:
                carrier[name] = value
        parent = _W3C.extract(carrier) if carrier else None
        span = self.tracer.start_span(
            f"POST {path}", context=parent, kind=SpanKind.SERVER,
            attributes={"http.request.method": "POST", "url.path": path, "modelwire.door": door})
        token = otel_context.attach(trace.set_span_in_context(span))
        return span, token

    @staticmethod
    def detach(token: Any) -> None:
        otel_context.detach(token)

    @staticmethod
    def request_ended(span: Any, model: str | None, upstream: str | None, status: int,
                      lane: bool) -> None:
        span.set_attribute("http.response.status_code", status)
        if model:
            span.set_attribute("gen_ai.request.model", model)
        if upstream and upstream != "-":
            span.set_attribute("modelwire.upstream", upstream)
        span.set_attribute("modelwire.lane", "passthrough" if lane else "translate")
        if status >= 500:
            span.set_attribute("error.type", str(status))
            span.set_status(Status(StatusCode.ERROR))
        span.end()


def _json(value: JSONValue) -> str:
    return orjson.dumps(value, default=str).decode()
