"""Interrupts and cancellation: the connection closes at once, the partial result stays."""

from __future__ import annotations

import asyncio
import threading

import pytest
from client._client_fake import Reply

from modelwire import AsyncClient, Client
from modelwire.events import TextDelta

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
LONG = " ".join(f"w{i}" for i in range(60))


def _kw(fake):
    return {"base_url": fake.base_url + "/v1", "api_mode": "chat_completions", "api_key": KEY}


def _text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_threading_event_interrupt_closes_the_connection_and_keeps_the_partial(fake):
    fake.push(Reply(text=LONG, gap=0.02))
    stop = threading.Event()
    seen = []
    with Client("custom/fake-1", **_kw(fake)) as client:
        stream = client.stream(HI, interrupt=stop)
        for event in stream:
            seen.append(event)
            if len(seen) == 3:
                stop.set()
    done = stream.completion
    assert done.interrupted is True
    assert done.text == _text(seen) == "w0 w1 w2"
    assert [a.outcome for a in done.attempts] == ["interrupted"]
    assert fake.wait_for(lambda: fake.disconnects == 1)  # the server saw us hang up


def test_closing_the_stream_early_is_an_interrupt(fake):
    fake.push(Reply(text=LONG, gap=0.02))
    with Client("custom/fake-1", **_kw(fake)) as client, client.stream(HI) as stream:
        first = next(iter(stream))
    assert first == TextDelta("w0")
    assert stream.completion.interrupted and stream.completion.text == "w0"
    assert fake.wait_for(lambda: fake.disconnects == 1)


def test_interrupt_set_before_streaming_sends_nothing_to_the_caller(fake):
    stop = threading.Event()
    stop.set()
    with Client("custom/fake-1", **_kw(fake)) as client:
        stream = client.stream(HI, interrupt=stop)
        assert list(stream) == []
    assert stream.completion.interrupted and stream.completion.text == ""
    assert fake.requests == []  # checked before the attempt: nothing was sent


async def test_cancelled_task_reraises_and_keeps_the_partial(fake):
    fake.push(Reply(text=LONG, gap=0.02))
    got_two = asyncio.Event()
    async with AsyncClient("custom/fake-1", **_kw(fake)) as client:
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
    assert done.text.startswith("w0 w1")
    assert await asyncio.to_thread(fake.wait_for, lambda: fake.disconnects == 1)


async def test_asyncio_event_interrupt_ends_the_stream(fake):
    fake.push(Reply(text=LONG, gap=0.02))
    stop = asyncio.Event()
    seen = []
    async with AsyncClient("custom/fake-1", **_kw(fake)) as client:
        stream = client.stream(HI, interrupt=stop)
        async for event in stream:
            seen.append(event)
            if len(seen) == 2:
                stop.set()
    assert stream.completion.interrupted
    assert stream.completion.text == _text(seen) == "w0 w1"
    assert await asyncio.to_thread(fake.wait_for, lambda: fake.disconnects == 1)


def test_abort_from_another_thread_cuts_a_stalled_stream(fake):
    fake.push(Reply("stall", after=2))  # two events, then silence
    two_seen = threading.Event()
    seen = []
    with Client("custom/fake-1", **_kw(fake)) as client:
        stream = client.stream(HI)
        aborter = threading.Thread(target=lambda: (two_seen.wait(5), stream.abort()))
        aborter.start()
        for event in stream:
            seen.append(event)
            if len(seen) == 2:
                two_seen.set()
        aborter.join(5)
    done = stream.completion
    assert done.interrupted and done.text == _text(seen) == "Hello from"
    assert len(fake.requests) == 1
