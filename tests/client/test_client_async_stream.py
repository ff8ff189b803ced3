"""AsyncStream's two ways of consumption: iteration gives events, ``batches()`` gives the
events of each upstream read as one list; the completion holds what reached the caller.

The transport here answers a whole SSE stream in one read, so every event is in one batch."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from modelwire import AsyncClient
from modelwire.events import Finish, TextDelta

HI = [{"role": "user", "content": "hi"}]


def _sse(*texts: str) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return b"data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1,
                                       "model": "m", "choices": [{"index": 0, "delta": delta,
                                                                  "finish_reason": finish}]}).encode() + b"\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"content": t}) for t in texts]
    return b"".join([*parts, chunk({}, "stop"), b"data: [DONE]\n\n"])


class _OneRead:
    def __init__(self, body: bytes) -> None:
        self.status = 200
        self.headers = {"content-type": "text/event-stream"}
        self.body = body

    async def read(self) -> bytes:
        return self.body

    async def aiter_chunks(self) -> AsyncIterator[bytes]:
        yield self.body

    def close(self) -> None:
        pass


class _Transport:
    """An AsyncTransport whose every stream is ``body`` in one read."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def send(self, request: Any, base_url: str, timeouts: Any) -> Any:
        raise AssertionError("only streams here")

    @contextlib.asynccontextmanager
    async def _stream(self) -> AsyncIterator[_OneRead]:
        yield _OneRead(self.body)

    def stream(self, request: Any, base_url: str, timeouts: Any) -> Any:
        return self._stream()

    async def aclose(self) -> None:
        pass


def _client(*texts: str) -> AsyncClient:
    return AsyncClient("custom/m", base_url="http://127.0.0.1:9/v1", api_mode="chat_completions",
                       api_key="sk-" + "test", transport=_Transport(_sse(*texts)))


def test_iteration_gives_events_and_batches_give_one_list_per_read() -> None:
    async def go() -> tuple[list[Any], list[list[Any]]]:
        async with _client("a", "b", "c") as client:
            events = [e async for e in client.stream(HI)]
            batches = [b async for b in client.stream(HI).batches()]
        return events, batches

    events, batches = asyncio.run(go())
    assert [e.text for e in events if type(e) is TextDelta] == ["a", "b", "c"]
    assert type(events[-1]) is Finish
    assert len(batches) == 1 and batches[0] == events  # one read: one list, the same events


def test_a_stream_left_mid_read_completes_with_only_what_the_caller_saw() -> None:
    async def go() -> Any:
        async with _client("a", "b", "c") as client:
            stream = client.stream(HI)
            async for event in stream:
                if type(event) is TextDelta:
                    break  # "b" and "c" arrived in the same read, unseen
            await stream.aclose()
            return stream.completion

    done = asyncio.run(go())
    assert done.interrupted is True and done.text == "a"


def test_a_stream_is_consumed_one_way_only() -> None:
    async def go() -> None:
        async with _client("a") as client:
            stream = client.stream(HI)
            await stream.__anext__()
            with pytest.raises(RuntimeError, match="batches"):
                stream.batches()
            await stream.aclose()
            batched = client.stream(HI)
            batched.batches()
            with pytest.raises(RuntimeError, match="batches"):
                await batched.__anext__()
            await batched.aclose()

    asyncio.run(go())
