"""What the Client tells an observer: one report per attempt and per call, and the
:class:`Observer` Protocol that receives them.

Reports are named tuples: immutable, and cheap to make once per call and attempt.
They carry facts only (names, outcomes, times, token counts, the error's class):
never a credential's secret, and never message content (a tracer that records content
reads it from :attr:`CallStart.messages` itself, and only when its user turned it on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol, TypeAlias, runtime_checkable

__all__ = ["AttemptReport", "BaseObserver", "CallReport", "CallStart", "Observer", "Observers", "Reports"]

Reports: TypeAlias = Literal["all", "ends", "failures"]
_REPORTS: tuple[Reports, ...] = ("all", "ends", "failures")  # widest first


class CallStart(NamedTuple):
    """A ``complete``/``stream`` call begins. ``messages``: the prepared conversation,
    for observers that record content when asked to (the metrics never read it)."""

    model: str  # the model string the Client was made with (a config name, provider/model)
    stream: bool
    started_ns: int  # time.time_ns() at the start
    messages: Sequence[Any] = ()


class AttemptReport(NamedTuple):
    """One try at one upstream, and the ladder's decision when it failed.

    ``outcome``: ``ok``, ``retried``, ``rotated`` (another credential), ``refreshed``
    (an OAuth token), ``fell_back`` (the next model), ``failed`` (the error went to the
    caller), ``interrupted``, ``skipped`` (a recent fallback: not tried).
    ``failure``: the classified kind (``rate_limit``, ``overloaded``, ``server``...,
    :data:`modelwire.resilience.FailureKind`), ``None`` when the attempt succeeded."""

    model: str  # the chain entry's name (the Client's model or a fallback)
    provider: str
    model_id: str  # the id sent upstream
    outcome: str
    started_ns: int
    ended_ns: int
    failure: str | None = None
    error_type: str | None = None  # the error's class name, never its text
    status: int | None = None  # the upstream's HTTP status, when it answered
    credential: str | None = None  # the credential's label, never its secret


class CallReport(NamedTuple):
    """A call ended: with a completion (``error_type`` None) or an error."""

    model: str
    stream: bool
    started_ns: int
    ended_ns: int
    attempts: int  # attempts made (skipped ones not counted)
    provider: str | None = None  # who served it (None: nobody)
    model_id: str | None = None  # the upstream's model id
    finish_reason: str | None = None
    response_id: str | None = None
    usage: Mapping[str, Any] | None = None  # the completion's Usage
    cost: float | None = None  # USD, when the price is known
    error_type: str | None = None
    interrupted: bool = False
    message: Mapping[str, Any] | None = None  # the answer, for content recording only


@runtime_checkable
class Observer(Protocol):
    """Receives a Client's reports (``Client(..., observer=...)``). ``call_started``
    returns a handle (anything, ``None`` too) that the call's later reports come with.
    Called on the Client's own path: keep each call short and never raise (an exception
    is logged and the call goes on)."""

    # what the observer hears of (each narrower one is less work on every call):
    # "all" (a tracer): call_started at each call's start, upstream_headers per attempt,
    # every attempt, the call's end. "ends" (metrics): failed attempts and each call's
    # end, with a handle of None. "failures": failed attempts only (the gateway's metrics,
    # which count the rest from its own requests)
    reports: Reports

    def call_started(self, call: CallStart) -> Any: ...

    def attempt_ended(self, handle: object, attempt: AttemptReport) -> None: ...

    def call_ended(self, handle: object, call: CallReport) -> None: ...

    def upstream_headers(self, handle: object, model: str) -> Mapping[str, str]:
        """Headers to add to an attempt's request to chain entry ``model`` (a tracer's
        ``traceparent``, for the upstreams its configuration marks internal)."""
        ...


class BaseObserver:
    """An :class:`Observer` that does nothing: subclass it and override what you need."""

    reports: Reports = "all"

    def call_started(self, call: CallStart) -> Any:
        return None

    def attempt_ended(self, handle: object, attempt: AttemptReport) -> None:
        return None

    def call_ended(self, handle: object, call: CallReport) -> None:
        return None

    def upstream_headers(self, handle: object, model: str) -> Mapping[str, str]:
        return {}


class Observers(BaseObserver):
    """Several observers as one (the gateway's metrics and tracer); each keeps its own
    handle."""

    def __init__(self, *observers: Observer) -> None:
        self.observers = tuple(observers)
        widest = min(_REPORTS.index(getattr(o, "reports", "all")) for o in self.observers)
        self.reports: Reports = _REPORTS[widest]

    def call_started(self, call: CallStart) -> Any:
        return tuple(o.call_started(call) for o in self.observers)

    def attempt_ended(self, handle: Any, attempt: AttemptReport) -> None:
        for o, h in zip(self.observers, handle, strict=True):
            o.attempt_ended(h, attempt)

    def call_ended(self, handle: Any, call: CallReport) -> None:
        for o, h in zip(self.observers, handle, strict=True):
            o.call_ended(h, call)

    def upstream_headers(self, handle: Any, model: str) -> Mapping[str, str]:
        out: dict[str, str] = {}
        for o, h in zip(self.observers, handle, strict=True):
            out.update(o.upstream_headers(h, model))
        return out
