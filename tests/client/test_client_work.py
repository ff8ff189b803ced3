"""The async Client's own work per call (``Completion.timing``, ``AsyncStream.work``),
which the gateway reports in x-modelwire-overhead-ms: preparing, encoding and decoding
count; waiting on the upstream and on backoffs does not."""

from __future__ import annotations

import asyncio
import time

from modelwire import AsyncClient
from modelwire.errors import StreamInterruptedError
from modelwire.transport import Response

ANSWER = (b'{"id": "c1", "object": "chat.completion", "created": 1, "model": "emulator-1", "choices": '
          b'[{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}], '
          b'"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}')


class SlowUpstream:
    """A transport (the Client's documented injection point) whose upstream answers after
    ``seconds``; the first ``failures`` answers are 503s with Retry-After: 0.2."""

    def __init__(self, seconds: float, failures: int = 0, drops: int = 0) -> None:
        self.seconds = seconds
        self.failures = failures
        self.drops = drops  # exchanges that wait, then fail in the transport

    async def send(self, request, base_url, timeouts):
        await asyncio.sleep(self.seconds)
        if self.drops:
            self.drops -= 1
            raise StreamInterruptedError("connection closed before the response")
        if self.failures:
            self.failures -= 1
            return Response(503, {"retry-after": "0.2", "content-type": "application/json"},
                            b'{"error": {"message": "busy", "type": "server_error"}}')
        return Response(200, {"content-type": "application/json"}, ANSWER)

    async def aclose(self):
        pass


def _client(transport) -> AsyncClient:
    return AsyncClient("emulator/emulator-1", transport=transport)


async def test_work_counts_the_clients_own_time_not_the_upstreams_wait():
    client = _client(SlowUpstream(0.3))
    # a long conversation: its preparation and encoding take measurable time
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 20}
                for i in range(3001)]

    started = time.perf_counter()
    timing = (await client.complete(messages)).timing
    elapsed = time.perf_counter() - started
    assert elapsed >= 0.3
    assert 0 < timing.work < 0.3  # the wait is not work
    assert timing.work <= elapsed - 0.3 + 0.005  # the rest of the call is
    assert 0.3 <= timing.waited <= elapsed


async def test_backoff_waits_are_not_work():
    client = _client(SlowUpstream(0.05, failures=1))  # one 503, a 0.2 s backoff, then the answer

    async def call() -> tuple[float, float]:
        started = time.perf_counter()
        completion = await client.complete([{"role": "user", "content": "hi"}])
        assert len(completion.attempts) == 2
        return time.perf_counter() - started, completion.timing.work

    elapsed, work = await asyncio.create_task(call())
    assert elapsed >= 0.3 and 0 < work < 0.1


async def test_a_failed_exchanges_wait_is_not_work():
    client = _client(SlowUpstream(0.3, drops=1))  # waits 0.3 s, the connection drops, then again

    async def call() -> tuple[float, float]:
        started = time.perf_counter()
        completion = await client.complete([{"role": "user", "content": "hi"}])
        assert [a.outcome for a in completion.attempts][-1] == "ok" and len(completion.attempts) == 2
        return time.perf_counter() - started, completion.timing.work

    elapsed, work = await asyncio.create_task(call())
    assert elapsed >= 0.6 and 0 < work < 0.1


async def test_a_streams_preparation_is_work_and_its_wait_is_not(wire):
    # the real emulator, its first event held back 0.3 s
    wire.fault("hang", seconds=0.3)
    kw = {"base_url": wire.base_url("chat_completions"), "api_mode": "chat_completions",
          "api_key": "sk-test-0123456789abcdef"}

    async def call() -> tuple[float, float, float]:
        async with AsyncClient(f"custom/{wire.model}", **kw) as client:
            started = time.perf_counter()
            stream = client.stream([{"role": "user", "content": "hi"}])
            prepared = stream.work  # the turn's preparation
            async for _ in stream:
                break
            first = time.perf_counter() - started
            await stream.aclose()
            return prepared, stream.work, first

    prepared, work, first = await asyncio.create_task(call())
    assert first >= 0.3
    assert 0 < prepared <= work < 0.3  # the encode added, the wait for the first event not
