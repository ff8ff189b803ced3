"""The status page's memory of recent requests: a bounded ring of small records (no
content: no messages, no bodies, no keys) and requests per minute over the last hour.

The gateway makes one :class:`RecentRequests` only when the status page is on (admin
keys set); each request's books (:class:`~.request.Ctx`) call :meth:`~RecentRequests.record`
once, as the access-log line is written. What is kept per request is a tuple of facts
the books already hold; counts, costs and percentiles are worked out when the page asks.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MINUTES", "RecentRequest", "RecentRequests", "percentiles"]

MINUTES = 60  # the usage chart's span


@dataclass(frozen=True, slots=True)
class RecentRequest:
    """One request as the status page lists it."""

    time: float  # Unix seconds when it ended
    door: str  # chat_completions | anthropic_messages | responses | embeddings
    asked: str  # the model id the client sent ("-": none)
    model: str  # the configured name it resolved to ("-": none)
    served: str  # "provider/model-id" that answered ("-": none)
    status: int
    latency_ms: float
    overhead_ms: float | None  # the gateway's own time (None: unknown)
    attempts: int
    cost_usd: float | None  # None: no known price, or not known on this path
    lane: bool  # relayed as bytes (the same-protocol lane)

    @property
    def provider(self) -> str:
        return self.served.partition("/")[0] if self.served != "-" else "-"

    def as_dict(self) -> dict[str, Any]:
        return {"time": self.time, "door": self.door, "asked": self.asked, "model": self.model,
                "served": self.served, "provider": self.provider, "status": self.status,
                "latency_ms": round(self.latency_ms, 3),
                "overhead_ms": None if self.overhead_ms is None else round(self.overhead_ms, 3),
                "attempts": self.attempts, "cost_usd": self.cost_usd, "lane": self.lane}


class RecentRequests:
    """The last ``size`` requests, and requests and errors per minute for an hour."""

    __slots__ = ("_minutes", "_ring", "_wall", "size")

    def __init__(self, size: int = 200, *, clock: Any = time.time) -> None:
        if size < 1:
            raise ValueError("size: at least 1")
        self.size = size
        self._wall = clock
        # (ended, door, asked, model, served, status, seconds, overhead, lane, lane tries,
        # attempts, usage, price): the completion's small parts, never its message
        self._ring: deque[tuple[Any, ...]] = deque(maxlen=size)
        self._minutes: deque[list[int]] = deque(maxlen=MINUTES)  # [minute, requests, errors]

    def record(self, ctx: Any) -> None:
        """One request's facts, from its books (:class:`~.request.Ctx`), as it ends."""
        now = self._wall()
        done = ctx.completion
        if done is None:
            self._ring.append((now, ctx.door, ctx.raw_model, ctx.model, ctx.upstream, ctx.status,
                               time.perf_counter() - ctx.started, ctx.overhead, ctx.lane,
                               ctx.lane_tries, (), None, None))
        else:
            self._ring.append((now, ctx.door, ctx.raw_model, ctx.model, ctx.upstream, ctx.status,
                               time.perf_counter() - ctx.started, ctx.overhead, ctx.lane,
                               ctx.lane_tries, done.attempts, done.usage, done.price))
        minute = int(now) // 60
        minutes = self._minutes
        if not minutes or minutes[-1][0] != minute:
            minutes.append([minute, 0, 0])
        row = minutes[-1]
        row[1] += 1
        if ctx.status >= 400:
            row[2] += 1

    def __len__(self) -> int:
        return len(self._ring)

    def requests(self) -> list[RecentRequest]:
        """The kept requests, newest first."""
        return [_view(entry) for entry in reversed(self._ring)]

    def per_minute(self, now: float | None = None) -> list[tuple[int, int, int]]:
        """``(minute start, requests, errors)`` for each of the last :data:`MINUTES`
        minutes, oldest first, the current one last (minutes without requests are 0)."""
        current = int(self._wall() if now is None else now) // 60
        seen = {row[0]: row for row in self._minutes}
        out = []
        for minute in range(current - MINUTES + 1, current + 1):
            row = seen.get(minute)
            out.append((minute * 60, row[1], row[2]) if row else (minute * 60, 0, 0))
        return out


def _view(entry: tuple[Any, ...]) -> RecentRequest:
    (ended, door, asked, model, served, status, seconds, overhead, lane, lane_tries,
     attempts, usage, price) = entry
    tried = sum(a.outcome != "skipped" for a in attempts) if attempts else 1
    cost = None if usage is None or price is None else round(price.cost(usage), 8)
    return RecentRequest(
        time=ended, door=door, asked=asked if isinstance(asked, str) and asked else "-",
        model=model, served=served, status=status, latency_ms=seconds * 1000,
        overhead_ms=None if overhead is None else overhead * 1000,
        attempts=tried + lane_tries, cost_usd=cost, lane=lane)


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 90, 99)) -> dict[str, float | None]:
    """``{"p50": ..., "p90": ..., "p99": ...}`` of ``values`` by the nearest-rank method
    (``None`` each when there are none)."""
    ordered = sorted(values)
    out: dict[str, float | None] = {}
    for p in points:
        if not ordered:
            out[f"p{p}"] = None
            continue
        rank = max(1, math.ceil(p / 100 * len(ordered)))
        out[f"p{p}"] = ordered[rank - 1]
    return out
