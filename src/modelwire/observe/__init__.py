"""Seeing what a Client and the gateway do: the :class:`Observer` hook, Prometheus
metrics (:mod:`.metrics`) and OpenTelemetry traces (:mod:`.tracing`).

Owns the reports a Client makes per attempt and per call, and what is made of them.
Imports only the bottom floor and :mod:`modelwire.resilience` (to classify a failure);
prometheus-client and OpenTelemetry only in :mod:`.metrics` and :mod:`.tracing`, which
load when asked for (``from modelwire.observe import Metrics`` imports the first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .reports import AttemptReport, BaseObserver, CallReport, CallStart, Observer, Observers

if TYPE_CHECKING:
    from .metrics import Metrics
    from .tracing import Tracer

__all__ = ["AttemptReport", "BaseObserver", "CallReport", "CallStart", "Metrics", "Observer",
           "Observers", "Tracer"]


def __getattr__(name: str) -> Any:
    if name == "Metrics":
        from .metrics import Metrics

        return Metrics
    if name == "Tracer":
        from .tracing import Tracer

        return Tracer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
