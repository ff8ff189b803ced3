"""Load with faults: a flood of made-up model names (memory and descriptors stay bounded),
and 64 concurrent streams per door while the upstream cuts, breaks and stalls streams:
every stream ends with its protocol's terminator or error event, within a bound."""

from __future__ import annotations

import asyncio
import gc
import logging
import time

import httpx
import pytest

from .conftest import FULL, LIMITS, UPSTREAM_KEY, fd_count, report, rss_kib, scale

ASK = {"max_tokens": 16, "messages": [{"role": "user", "content": "tell me a story"}], "input": "tell me a story"}
DOORS = {"chat": ("/v1/chat/completions", "m"), "anthropic": ("/v1/messages", "a"), "responses": ("/v1/responses", "r")}


def _ended(door: str, text: str) -> bool:
    """Whether a stream's text ends with its protocol's terminator or an error event."""
    if door == "chat":
        return "data: [DONE]" in text or '"error"' in text
    if door == "anthropic":
        return "event: message_stop" in text or "event: error" in text
    return any(e in text for e in ("response.completed", "response.failed", "response.incomplete",
                                   "event: error"))


async def _flood(base: str, names: int) -> list[int]:
    gate = asyncio.Semaphore(16)
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        async def one(i: int) -> int:
            async with gate:
                r = await http.post("/v1/chat/completions", json={**ASK, "model": f"emulator/flood-{i}"})
                return r.status_code

        return await asyncio.gather(*(one(i) for i in range(names)))


@pytest.mark.timeout(1200)  # the full run's phases take minutes
def test_a_flood_of_model_names_leaves_memory_and_descriptors_bounded(chaos_gateway, caplog) -> None:
    names = scale(300, 5000)
    # pytest keeps every log record of a test for its report: 5,000 requests' access-log
    # and httpx lines are ~10 MB a thousand, memory the gateway does not hold
    for name in ("modelwire.gateway.access", "httpx"):
        caplog.set_level(logging.WARNING, logger=name)
    asyncio.run(_flood(chaos_gateway.base_url, 20))  # warm: the in-process emulator, pools
    gc.collect()
    rss0, fds0 = rss_kib(), fd_count()
    started = time.monotonic()
    statuses = asyncio.run(_flood(chaos_gateway.base_url, names))
    took = time.monotonic() - started
    deadline = time.monotonic() + 10
    while fd_count() > fds0 + 40 and time.monotonic() < deadline:
        time.sleep(0.05)
    gc.collect()
    rss1, fds1 = rss_kib(), fd_count()
    cache = chaos_gateway.gateway._clients
    report("model_flood", names=names, fivexx=sum(s >= 500 for s in statuses), wall_s=round(took, 1),
           adhoc_clients=cache.adhoc_count, rss_delta_kib=rss1 - rss0, fd_delta=fds1 - fds0)
    assert all(s < 500 for s in statuses)
    assert cache.adhoc_count <= LIMITS["max_adhoc_clients"]
    assert fds1 <= fds0 + 40  # the cache's clients' pooled connections at most
    assert rss1 - rss0 < 48 * 1024  # KiB: the cache is bounded, so memory is too


FAULTS = [
    {"fault": "close_mid_stream", "rate": 0.2, "after": 2},
    {"fault": "stream_error", "rate": 0.15, "after": 1},
    {"fault": "malformed_sse", "rate": 0.1, "after": 2},
    {"fault": "stall", "rate": 0.05, "after": 1, "seconds": 1.0},
    {"fault": "slow_chunks", "rate": 0.1, "seconds": 0.05},
]
# the short pass (make test): faults that end a stream without the retry ladder's backoff
# (a fault before the client's first event is retried with 3, 4, 8, 16 s waits)
SHORT_FAULTS = [{"fault": "close_mid_stream", "rate": 0.3, "after": 2},
                {"fault": "slow_chunks", "rate": 0.2, "seconds": 0.02}]
# the retry ladder's longest run before a stream's first byte, plus slack: past it, a hang
STREAM_BOUND = 60.0


async def _streams(base: str, door: str, count: int) -> list[tuple[int, bool, float, str]]:
    path, model = DOORS[door]
    async with httpx.AsyncClient(base_url=base, timeout=STREAM_BOUND,
                                 limits=httpx.Limits(max_connections=count)) as http:
        async def one() -> tuple[int, bool, float, str]:
            started = time.monotonic()
            try:
                async with http.stream("POST", path, json={**ASK, "model": model, "stream": True}) as r:
                    text = (await r.aread()).decode("utf-8", "replace")
                    return r.status_code, r.status_code >= 400 or _ended(door, text), time.monotonic() - started, text
            except httpx.HTTPError as exc:
                return 0, False, time.monotonic() - started, repr(exc)

        return await asyncio.gather(*(one() for _ in range(count)))


@pytest.mark.timeout(1200)  # the full run's phases take minutes
def test_streams_under_upstream_faults_all_end_properly(chaos_gateway, upstream) -> None:
    concurrent = 64
    rounds = scale(1, 5)
    doors = list(DOORS) if FULL else ["chat"]
    faults = FAULTS if FULL else SHORT_FAULTS
    upstream.set_faults(faults)
    try:
        results = []
        gc.collect()
        rss0, fds0 = rss_kib(), fd_count()
        started = time.monotonic()
        for _ in range(rounds):
            for door in doors:
                results += [(door, *r) for r in asyncio.run(_streams(chaos_gateway.base_url, door, concurrent))]
        took = time.monotonic() - started
    finally:
        upstream.clear_faults()
    deadline = time.monotonic() + 10
    while fd_count() > fds0 + 2 * concurrent + 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    rss1, fds1 = rss_kib(), fd_count()
    unended = [(d, s, t[-200:]) for d, s, ok, _, t in results if not ok]
    client_errors = [(d, s) for d, s, *_ in results if 400 <= s < 500]
    slowest = max(t for *_, t, _ in results)
    statuses: dict[int, int] = {}
    for _, s, *_ in results:
        statuses[s] = statuses.get(s, 0) + 1
    report("upstream_faults", streams=len(results), concurrency=concurrent, faults=[f["fault"] for f in faults], doors=doors,
           unended=len(unended), statuses=dict(sorted(statuses.items())), slowest_s=round(slowest, 2),
           wall_s=round(took, 1), rss_delta_kib=rss1 - rss0, fd_delta=fds1 - fds0)
    assert not unended, unended[:3]
    assert not client_errors, client_errors[:3]  # an upstream fault is never the client's fault
    assert not any(UPSTREAM_KEY in t for *_, t in results)
    assert slowest < STREAM_BOUND
    assert fds1 <= fds0 + 2 * concurrent + 8  # pooled keep-alive connections, both ends in-process
