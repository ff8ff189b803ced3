"""The gateway's HTTP/1.1 protocol bounds what a client can hold: a whole head within
``header_timeout``, a body byte at least every ``body_timeout``, an idle connection for
``keep_alive_timeout``, at most ``max_connections`` at once; what it answers itself
(timeouts, bad bytes, the cap) is JSON in the door's error shape."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from modelwire.gateway.h1server import GatewayHTTP
from modelwire.gateway.limits import Limits, default_max_connections

LIMITS = Limits(max_connections=3, header_timeout=0.5, body_timeout=0.4, keep_alive_timeout=0.6)


class _App:
    """Echoes the body's length; ``limits`` is what GatewayHTTP reads from the gateway."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/early":  # answers before the body arrives (as a 404 or 413 does)
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no"})
            return
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"%d" % size})


@contextlib.asynccontextmanager
async def _serving(limits: Limits = LIMITS) -> AsyncIterator[int]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(_App(limits), host="127.0.0.1", port=port, http=GatewayHTTP, lifespan="off",
                            log_level="critical", access_log=False)
    srv = uvicorn.Server(config)
    srv.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    task = asyncio.ensure_future(srv.serve())
    for _ in range(500):
        if srv.started:
            break
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        srv.should_exit = True
        await asyncio.wait_for(task, 10)


async def _answer(reader: asyncio.StreamReader, within: float) -> tuple[int, dict[str, str], bytes]:
    """The one answer before the server closes (status, headers, body)."""
    data = await asyncio.wait_for(reader.read(), within)  # read() returns at the close
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


async def _elapsed_answer(writer_data: list[bytes], pause: float, within: float,
                          port: int) -> tuple[float, tuple[int, dict[str, str], bytes]]:
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    start = loop.time()
    answer = asyncio.ensure_future(_answer(reader, within))
    for piece in writer_data:
        if answer.done():
            break
        writer.write(piece)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(answer), pause)
    result = await answer
    writer.close()
    return loop.time() - start, result


async def test_a_head_that_never_ends_gets_a_408_in_the_anthropic_shape():
    async with _serving() as port:
        took, (status, headers, body) = await _elapsed_answer(
            [b"POST /v1/messages HTTP/1.1\r\nhost: t\r\nx-half: "], 0.05, 5, port)
    assert status == 408 and headers["connection"] == "close"
    error = json.loads(body)
    assert error["type"] == "error" and "gateway.header_timeout" in error["error"]["message"]
    assert 0.4 <= took < 2.5


async def test_a_head_trickled_a_byte_at_a_time_is_timed_whole_not_per_byte():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: t\r\nx-slow: " + b"a" * 200
    async with _serving() as port:
        took, (status, _, body) = await _elapsed_answer([head[i:i + 1] for i in range(len(head))], 0.05, 5, port)
    assert status == 408 and json.loads(body)["error"]["code"] == "request_timeout"
    assert took < 2.5  # 200 bytes at 0.05 s would be 10 s: the head's deadline is whole


async def test_a_body_that_stops_gets_a_408_and_a_trickled_one_is_served():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: t\r\ncontent-length: 8\r\n\r\n"
    async with _serving() as port:
        took, (status, _, body) = await _elapsed_answer([head + b"12"], 0.05, 5, port)
        assert status == 408 and "gateway.body_timeout" in json.loads(body)["error"]["message"]
        assert 0.3 <= took < 2.5
        # a byte every 0.2 s (under the 0.4 s): each one re-arms the body's timeout
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head)
        for byte in b"12345678":
            await asyncio.sleep(0.2)
            writer.write(bytes([byte]))
        line = await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)
        assert line.startswith(b"HTTP/1.1 200")
        writer.close()


async def test_a_body_that_stops_after_an_early_answer_is_closed_not_held():
    loop = asyncio.get_running_loop()
    async with _serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /early HTTP/1.1\r\nhost: t\r\ncontent-length: 100\r\n\r\n12")
        head = await asyncio.wait_for(reader.readuntil(b"no"), 5)
        assert head.startswith(b"HTTP/1.1 404")
        writer.write(b"34")  # more of the body after the answer, then nothing
        start = loop.time()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, not held open
        assert loop.time() - start < 2.5
        writer.close()


async def test_a_chunked_body_that_never_ends_gets_a_408():
    async with _serving() as port:
        _, (status, _, _) = await _elapsed_answer(
            [b"POST /v1/responses HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n"],
            0.05, 5, port)
    assert status == 408


async def test_an_idle_connection_closes_after_the_keep_alive_timeout_without_an_answer():
    loop = asyncio.get_running_loop()
    async with _serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        start = loop.time()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, nothing written
        assert 0.5 <= loop.time() - start < 2.5
        writer.close()


async def test_connections_past_the_cap_get_a_503_and_a_close():
    async with _serving() as port:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        for _, writer in held:
            writer.write(b"GET /x HTTP/1.1\r\nhost: t\r\n\r\n")  # the server has seen all three
        for reader, _ in held:
            assert (await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)).startswith(b"HTTP/1.1 200")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        status, headers, body = await _answer(reader, 5)
        assert status == 503 and headers["retry-after"] == "1"
        assert "gateway.max_connections" in json.loads(body)["error"]["message"]
        for _, w in [*held, (reader, writer)]:
            w.close()


@pytest.mark.parametrize("path,anthropic", [(b"/v1/messages", True), (b"/v1/chat/completions", False)])
async def test_bytes_that_are_not_http_get_a_json_400_in_the_doors_shape(path: bytes, anthropic: bool):
    async with _serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST " + path + b" HTTP/1.1\r\nho st: t\r\n\r\n")
        status, headers, body = await _answer(reader, 5)
        writer.close()
    error = json.loads(body)
    assert status == 400 and headers["content-type"] == "application/json"
    assert (error.get("type") == "error") is anthropic and "Invalid HTTP request" in json.dumps(error)


def test_the_default_connection_cap_leaves_room_for_upstream_connections():
    assert default_max_connections(1024) == 480
    assert default_max_connections(40) == 16  # a floor, however small the limit
