"""Interrupts and cancellation: the connection closes at once, the partial result stays.

The emulator streams a long scripted answer slowly (``slow_chunks``) and its log shows
when the client hung up (``disconnected``)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from modelwire import AsyncClient, Client
from modelwire.events import TextDelta

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
LONG = " ".join(f"w{i}" for i in range(60))


def _kw(wire):
    return {"base_url": wire.base_url("chat_completions"), "api_mode": "chat_completions",
            "api_key": KEY}


def _slow(wire):
    wire.script({"text": LONG})
    wire.fault("slow_chunks", seconds=0.02)


def _hung_up(wire):
    """The emulator saw the client close the connection before the answer's end."""
    return wire.wait_for(lambda: [r["disconnected"] for r in wire.requests()] == [True])


def _partial(text):
    return bool(text) and LONG.startswith(text) and text != LONG


def _text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_threading_event_interrupt_closes_the_connection_and_keeps_the_partial(wire):
    _slow(wire)
    stop = threading.Event()
    seen = []
    with Client(f"custom/{wire.model}", **_kw(wire)) as client:
        stream = client.stream(HI, interrupt=stop)
        for event in stream:
            seen.append(event)
            if len(seen) == 3:
                stop.set()
    done = stream.completion
    assert done.interrupted is True
    assert done.text == _text(seen) and _partial(done.text)
    assert [a.outcome for a in done.attempts] == ["interrupted"]
    assert _hung_up(wire)  # the server saw us hang up


def test_closing_the_stream_early_is_an_interrupt(wire):
    _slow(wire)
    with Client(f"custom/{wire.model}", **_kw(wire)) as client, client.stream(HI) as stream:
        first = next(iter(stream))
    assert isinstance(first, TextDelta) and _partial(first.text)
    assert stream.completion.interrupted and stream.completion.text == first.text
    assert _hung_up(wire)


def test_interrupt_set_before_streaming_sends_nothing_to_the_caller(wire):
    stop = threading.Event()
    stop.set()
    with Client(f"custom/{wire.model}", **_kw(wire)) as client:
        stream = client.stream(HI, interrupt=stop)
        assert list(stream) == []
    assert stream.completion.interrupted and stream.completion.text == ""
    assert wire.requests() == []  # checked before the attempt: nothing was sent


async def test_cancelled_task_reraises_and_keeps_the_partial(wire):
    _slow(wire)
    got_two = asyncio.Event()
    async with AsyncClient(f"custom/{wire.model}", **_kw(wire)) as client:
        stream = client.stream(HI)

        async def consume():
            n = 0
            async for _ in stream:
                n += 1
                if n == 2:
                    got_two.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(got_two.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    done = stream.completion
    assert done is not None and done.interrupted
    assert _partial(done.text)
    assert await asyncio.to_thread(_hung_up, wire)


async def test_asyncio_event_interrupt_ends_the_stream(wire):
    _slow(wire)
    stop = asyncio.Event()
    seen = []
    async with AsyncClient(f"custom/{wire.model}", **_kw(wire)) as client:
        stream = client.stream(HI, interrupt=stop)
        async for event in stream:
            seen.append(event)
            if len(seen) == 2:
                stop.set()
    assert stream.completion.interrupted
    assert stream.completion.text == _text(seen) and _partial(stream.completion.text)
    assert await asyncio.to_thread(_hung_up, wire)


def test_abort_from_another_thread_cuts_a_stalled_stream(wire):
    wire.script({"text": LONG})
    wire.fault("stall", after=3, seconds=2)  # the role chunk and two text chunks, then silence
    two_seen = threading.Event()
    seen = []
    with Client(f"custom/{wire.model}", **_kw(wire)) as client:
        stream = client.stream(HI)
        aborter = threading.Thread(target=lambda: (two_seen.wait(5), stream.abort()))
        aborter.start()
        for event in stream:
            seen.append(event)
            if len(seen) == 2:
                two_seen.set()
        aborter.join(5)
    done = stream.completion
    assert done.interrupted and done.text == _text(seen) and _partial(done.text)
    assert wire.wait_for(lambda: any(r["disconnected"] or r.get("aborted_by_fault")
                                     for r in wire.requests()))
    (entry,) = wire.requests()
    # cut by the client during the silence, not ended by the server after it
    assert entry["disconnected"] and not entry.get("aborted_by_fault")


def test_batches_group_events_as_they_arrived_and_match_plain_iteration(wire):
    import asyncio

    from modelwire import AsyncClient

    async def go(batched: bool):
        async with AsyncClient(f"custom/{wire.model}", **_kw(wire)) as client:
            stream = client.stream(HI)
            if batched:
                groups = [list(b) async for b in stream.batches()]
                return groups, stream.completion
            return [[e] async for e in stream], stream.completion

    groups, done = asyncio.run(go(True))
    flat, done_plain = asyncio.run(go(False))
    assert all(isinstance(g, list) and g for g in groups)
    assert [e for g in groups for e in g] == [e for g in flat for e in g]
    assert done.message == done_plain.message
