"""The Client's side of the hook: :class:`CallWatch` turns what a call's books see
(an attempt began, an attempt ended with an outcome, the call ended) into reports for
its :class:`~modelwire.observe.Observer`. One per call, made only when the Client has
an observer; an observer that raises is logged and never breaks the call."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .reports import AttemptReport, CallReport, CallStart, Observer

if TYPE_CHECKING:
    from ..completion import Completion
    from ..providers.profile import ProviderProfile


__all__ = ["CallWatch"]

log = logging.getLogger("modelwire.observe")

_NO_HEADERS: tuple[tuple[str, str], ...] = ()


class CallWatch:
    __slots__ = ("attempt_started", "ends", "handle", "live", "model", "observer", "started", "stream",
                 "tried")

    def __init__(self, observer: Observer, model: str, stream: bool, messages: Sequence[Any]) -> None:
        self.observer = observer
        self.model = model
        self.stream = stream
        self.started = self.attempt_started = time.time_ns()
        self.tried = 0
        self.handle = None
        # an observer that does not follow calls live (metrics) hears of failed attempts
        # (and of the call's end, unless it asked for failures only)
        reports = getattr(observer, "reports", "all")
        self.live = reports == "all"
        self.ends = reports != "failures"
        if self.live:
            try:
                self.handle = observer.call_started(CallStart(model, stream, self.started, messages))
            except Exception:
                log.exception("observer failed in call_started")

    def attempt_began(self) -> None:
        self.attempt_started = time.time_ns()

    def headers(self, model: str) -> tuple[tuple[str, str], ...]:
        """What the observer adds to an attempt's request to chain entry ``model``."""
        if not self.live:
            return _NO_HEADERS
        try:
            extra = self.observer.upstream_headers(self.handle, model)
        except Exception:
            log.exception("observer failed in upstream_headers")
            return _NO_HEADERS
        return tuple(extra.items()) if extra else _NO_HEADERS

    def attempt(self, model: str, profile: ProviderProfile, model_id: str, outcome: str,
                error: BaseException | None, credential: str | None) -> None:
        self.tried += 1
        if error is None and not self.live:
            return
        failure = None
        if error is not None:
            from ..resilience import classify

            failure = classify(error, profile).kind
        report = AttemptReport(
            model=model, provider=profile.name, model_id=model_id, outcome=outcome,
            started_ns=self.attempt_started, ended_ns=time.time_ns(), failure=failure,
            error_type=type(error).__name__ if error is not None else None,
            status=getattr(error, "status", None) if error is not None else None,
            credential=credential)
        try:
            self.observer.attempt_ended(self.handle, report)
        except Exception:
            log.exception("observer failed in attempt_ended")

    def ended(self, completion: Completion) -> None:
        """The call served ``completion``."""
        self._end(CallReport(
            model=self.model, stream=self.stream, started_ns=self.started,
            ended_ns=time.time_ns(), attempts=self.tried, provider=completion.provider,
            model_id=completion.model, finish_reason=completion.finish_reason,
            response_id=completion.id, usage=completion.usage, cost=completion.cost,
            interrupted=bool(completion.interrupted), message=completion.message))

    def failed(self, error: BaseException, partial: Completion | None = None) -> None:
        """The call raised ``error`` (``partial``: what reached the caller first)."""
        self._end(CallReport(
            model=self.model, stream=self.stream, started_ns=self.started,
            ended_ns=time.time_ns(), attempts=self.tried,
            provider=getattr(partial, "provider", None), model_id=getattr(partial, "model", None),
            usage=getattr(partial, "usage", None), error_type=type(error).__name__))

    def _end(self, report: CallReport) -> None:
        if not self.ends:
            return
        try:
            self.observer.call_ended(self.handle, report)
        except Exception:
            log.exception("observer failed in call_ended")
