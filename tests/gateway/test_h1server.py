"""The gateway's HTTP/1.1 protocol (modelwire.gateway.h1server) under uvicorn, on a real
socket, with a small ASGI app and raw clients: framing, keep-alive, pipelining,
100-continue, bad requests, app failures, disconnects, back-pressure, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from modelwire.gateway.h1server import GatewayHTTP

SEEN: dict[str, Any] = {}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    body = b""
    if path != "/early":
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
    SEEN["scope"] = scope
    if path == "/json":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b'{"got": %d}' % len(body)})
    elif path == "/sized":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"5"), (b"transfer-encoding", b"chunked")]})
        await send({"type": "http.response.body", "body": b"hello"})
    elif path == "/stream":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for i in range(3):
            await send({"type": "http.response.body", "body": b"data: %d\n\n" % i, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    elif path == "/forever":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"data: first\n\n", "more_body": True})
        SEEN["after_body"] = await receive()  # blocks until the client goes
    elif path == "/empty":
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
    elif path == "/early":  # answers without reading the body (what a 413 does)
        await send({"type": "http.response.start", "status": 413, "headers": []})
        await send({"type": "http.response.body", "body": b"too big"})
    elif path == "/boom":
        raise RuntimeError("the app failed")
    elif path == "/boom-late":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        raise RuntimeError("the app failed mid-answer")
    else:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"no"})


class _WithDirect:
    """``app``, plus a direct handler for ``/ready`` (as gateway.app.FrontDoors has): its
    header lines come ready-made from the gateway's Reply."""

    def __init__(self) -> None:
        self.direct = {("/ready", "POST"): self.ready}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await app(scope, receive, send)

    async def ready(self, request: Any) -> Any:
        from modelwire.gateway.serving import Reply

        async for _ in request.stream():
            pass
        return Reply(200, b"{}")


async def _serving(keep_alive: float = 2, direct: bool = False) -> tuple[Any, asyncio.Future[None], int]:
    """uvicorn with GatewayHTTP on a free port, started: (server, its task, port)."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # direct: not wrapped in uvicorn's proxy-headers middleware, which turns direct calls off
    config = uvicorn.Config(_WithDirect() if direct else app, host="127.0.0.1", port=port,
                            http=GatewayHTTP, lifespan="off", proxy_headers=not direct,
                            log_level="critical", access_log=False, timeout_keep_alive=keep_alive)
    srv = uvicorn.Server(config)
    # uvicorn would take SIGINT/SIGTERM in this (main) thread while serving: leave them alone
    srv.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    task = asyncio.ensure_future(srv.serve())
    for _ in range(500):
        if srv.started:
            break
        await asyncio.sleep(0.01)
    SEEN.clear()
    return srv, task, port


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, int]]:
    srv, task, port = await _serving()
    yield "127.0.0.1", port
    srv.should_exit = True
    await asyncio.wait_for(task, 10)


async def _read_response(reader: asyncio.StreamReader) -> tuple[bytes, dict[bytes, list[bytes]], bytes]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    lines = head[:-4].split(b"\r\n")
    headers: dict[bytes, list[bytes]] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers.setdefault(name.lower(), []).append(value.strip())
    if b"content-length" in headers:
        body = await reader.readexactly(int(headers[b"content-length"][0]))
    elif headers.get(b"transfer-encoding") == [b"chunked"]:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2], 16)
            data = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += data[:-2]
    else:
        body = b""
    return lines[0], headers, body


def _post(path: str, body: bytes = b"{}", *extra: bytes) -> bytes:
    return (b"POST %s HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: %d\r\n%s\r\n%s"
            % (path.encode(), len(body), b"".join(e + b"\r\n" for e in extra), body))


async def test_a_whole_answer_gets_one_content_length_and_keep_alive(server):
    reader, writer = await asyncio.open_connection(*server)
    for n in (2, 30):
        writer.write(_post("/json", b"x" * n))
        status, headers, body = await _read_response(reader)
        assert status == b"HTTP/1.1 200 OK"
        assert headers[b"content-length"] == [b"%d" % len(body)]  # exactly one
        assert b"transfer-encoding" not in headers and b"connection" not in headers
        assert body == b'{"got": %d}' % n
    scope = SEEN["scope"]
    assert scope["method"] == "POST" and scope["path"] == "/json" and scope["http_version"] == "1.1"
    assert (b"content-type", b"application/json") in scope["headers"]
    assert scope["client"][0] == "127.0.0.1" and scope["server"][1] == server[1]
    writer.close()


async def test_the_apps_length_is_used_and_its_framing_headers_are_not(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/sized"))
    _, headers, body = await _read_response(reader)
    assert headers[b"content-length"] == [b"5"] and b"transfer-encoding" not in headers and body == b"hello"
    writer.close()


async def test_a_streamed_answer_is_chunked_and_ends(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/stream"))
    _, headers, body = await _read_response(reader)
    assert headers[b"transfer-encoding"] == [b"chunked"] and b"content-length" not in headers
    assert body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    writer.write(_post("/json"))  # the connection is still good
    assert (await _read_response(reader))[2] == b'{"got": 2}'
    writer.close()


async def test_pipelined_requests_are_answered_in_order(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/stream") + _post("/json", b"abc") + _post("/nope"))
    first, second, third = [await _read_response(reader) for _ in range(3)]
    assert first[2].startswith(b"data: 0") and second[2] == b'{"got": 3}' and third[0].startswith(b"HTTP/1.1 404")
    writer.close()


async def test_connection_close_and_http_1_0_close_after_the_answer(server):
    for request in (_post("/json", b"{}", b"connection: close"),
                    b"POST /json HTTP/1.0\r\ncontent-length: 2\r\n\r\n{}"):
        reader, writer = await asyncio.open_connection(*server)
        writer.write(request)
        _, headers, body = await _read_response(reader)
        assert headers[b"connection"] == [b"close"] and body == b'{"got": 2}'
        assert await asyncio.wait_for(reader.read(), 5) == b""  # the server closed it
        writer.close()


async def test_expect_100_continue_is_answered_before_the_body(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(b"POST /json HTTP/1.1\r\nhost: t\r\ncontent-length: 4\r\nexpect: 100-continue\r\n\r\n")
    interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    writer.write(b"abcd")
    assert (await _read_response(reader))[2] == b'{"got": 4}'
    writer.close()


async def test_bytes_that_are_not_http_get_a_400_and_the_connection_closes(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(b"THIS IS NOT HTTP\r\n\r\n")
    status, headers, body = await _read_response(reader)
    assert status.startswith(b"HTTP/1.1 400") and headers[b"connection"] == [b"close"]
    assert b"Invalid HTTP request" in body
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()


async def test_an_app_failure_is_a_500_before_the_answer_and_a_cut_after(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/boom"))
    status, _, body = await _read_response(reader)
    assert status.startswith(b"HTTP/1.1 500") and body == b"Internal Server Error"
    writer.close()
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/boom-late"))
    with pytest.raises(asyncio.IncompleteReadError):  # no terminating chunk: not a whole answer
        await _read_response(reader)
    writer.close()


async def test_a_client_that_leaves_mid_stream_is_seen_as_a_disconnect(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/forever"))
    await asyncio.wait_for(reader.readuntil(b"data: first\n\n"), 5)
    writer.close()
    for _ in range(500):
        if "after_body" in SEEN:
            break
        await asyncio.sleep(0.01)
    assert SEEN["after_body"] == {"type": "http.disconnect"}


async def test_a_large_body_arrives_whole(server):
    reader, writer = await asyncio.open_connection(*server)
    payload = bytes(range(256)) * 4096  # 1 MiB: reading pauses and resumes on the way
    writer.write(_post("/json", payload))
    assert (await _read_response(reader))[2] == b'{"got": %d}' % len(payload)
    writer.close()


async def test_an_answer_before_the_body_keeps_the_connection_usable(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/early", b"z" * 200_000))
    status, _, body = await _read_response(reader)
    assert status.startswith(b"HTTP/1.1 413") and body == b"too big"
    writer.write(_post("/json", b"ok"))  # the unread body was skipped, not taken as a request
    assert (await _read_response(reader))[2] == b'{"got": 2}'
    writer.close()


async def test_no_body_for_204_and_head(server):
    reader, writer = await asyncio.open_connection(*server)
    writer.write(_post("/empty"))
    status, headers, body = await _read_response(reader)
    assert status.startswith(b"HTTP/1.1 204") and b"content-length" not in headers and body == b""
    writer.write(b"HEAD /json HTTP/1.1\r\nhost: t\r\n\r\n")
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert b"content-length: 10" in head  # the length a GET would have had ...
    writer.write(_post("/json"))  # ... and no body bytes before the next answer
    assert (await _read_response(reader))[0] == b"HTTP/1.1 200 OK"
    writer.close()


async def test_shutdown_closes_idle_connections():
    srv, task, port = await _serving()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_post("/json"))
    await _read_response(reader)
    srv.should_exit = True
    assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the shutdown
    await asyncio.wait_for(task, 10)
    writer.close()


async def test_a_direct_replys_header_lines_are_framed_like_any_answer():
    srv, task, port = await _serving(direct=True)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(2):  # kept alive: the second answer on the same connection
        writer.write(_post("/ready"))
        status, headers, body = await _read_response(reader)
        assert status == b"HTTP/1.1 200 OK" and body == b"{}"
        assert headers[b"content-length"] == [b"2"] and b"transfer-encoding" not in headers
        assert b"date" in headers and b"connection" not in headers
    writer.write(_post("/ready", b"{}", b"connection: close"))
    status, headers, body = await _read_response(reader)
    assert headers[b"connection"] == [b"close"] and body == b"{}"
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
    srv.should_exit = True
    await asyncio.wait_for(task, 10)


async def test_keep_alive_counts_from_the_last_answer_not_the_first():
    # one timer per connection, re-armed when it fires: a connection in use for longer
    # than the timeout stays open; idle for longer than it, it closes
    srv, task, port = await _serving(keep_alive=0.4)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(5):  # 1 s of use, never idle for 0.4 s
        writer.write(_post("/json"))
        status, _, _ = await _read_response(reader)
        assert status == b"HTTP/1.1 200 OK"
        await asyncio.sleep(0.2)
    loop = asyncio.get_running_loop()
    idle_from = loop.time()
    assert await asyncio.wait_for(reader.read(), 5) == b""  # closed once idle
    assert 0.15 <= loop.time() - idle_from <= 1.5  # 0.4 s after the last answer, less the 0.2 s slept
    writer.close()
    srv.should_exit = True
    await asyncio.wait_for(task, 10)


class _Recording:
    """The transport side of one connection, recording each write (no socket)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 1) if name in ("sockname", "peername") else None

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def test_a_whole_answer_leaves_in_one_write_a_stream_in_one_per_piece():
    # the reason this protocol exists: uvicorn's writes the head and the body apart
    import uvicorn
    from uvicorn.server import ServerState

    config = uvicorn.Config(app, http=GatewayHTTP, lifespan="off", log_level="critical")
    config.load()
    for path, writes in (("/json", 1), ("/stream", 4)):  # /stream: 3 pieces, then the end
        proto = GatewayHTTP(config, ServerState(), {}, asyncio.get_running_loop())
        wire = _Recording()
        proto.connection_made(wire)
        proto.data_received(_post(path))
        for _ in range(500):
            if proto.cycle is None and wire.writes:
                break
            await asyncio.sleep(0.001)
        proto.connection_lost(None)
        assert len(wire.writes) == writes, wire.writes
        assert wire.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"\r\n\r\n" in wire.writes[0] and not wire.writes[0].endswith(b"\r\n\r\n")  # body too


class _DirectApp:
    """An app with ``direct`` handlers, as gateway.app.FrontDoors has: called without ASGI."""

    def __init__(self) -> None:
        self.upstream: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.direct = {("/events", "POST"): self.events}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise AssertionError("the direct handler should have been called")

    async def events(self, request: Any) -> Any:
        from modelwire.gateway.serving import Reply

        upstream = self.upstream

        async def body() -> AsyncIterator[bytes]:
            while (piece := await upstream.get()) is not None:
                yield piece
            yield b"data: [DONE]\n\n"  # the end, as the gateway's streams write it

        return Reply(200, headers={"x-request-id": "r1"}, content_type="text/event-stream", stream=body())


async def test_a_direct_stream_writes_once_per_upstream_read_and_ends_in_one_write():
    # each piece that arrived from the upstream leaves in one write; the last one, the
    # stream's end event and the chunked terminator leave together
    import uvicorn
    from uvicorn.server import ServerState

    app = _DirectApp()
    config = uvicorn.Config(app, http=GatewayHTTP, lifespan="off", log_level="critical", proxy_headers=False)
    config.load()
    proto = GatewayHTTP(config, ServerState(), {}, asyncio.get_running_loop())
    wire = _Recording()
    proto.connection_made(wire)
    proto.data_received(_post("/events"))

    async def settle() -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    for piece in (b"data: 1\n\n", b"data: 2\n\n"):
        app.upstream.put_nowait(piece)
        await settle()
    assert len(wire.writes) == 2 and wire.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert wire.writes[0].endswith(b"9\r\ndata: 1\n\n\r\n") and wire.writes[1] == b"9\r\ndata: 2\n\n\r\n"
    app.upstream.put_nowait(b"data: 3\n\n")
    app.upstream.put_nowait(None)  # the upstream's last read held its end too
    await settle()
    assert wire.writes[2:] == [b"9\r\ndata: 3\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"]
    assert proto.cycle is None and not proto.pending
    proto.connection_lost(None)


async def test_request_tasks_are_named_and_a_loops_task_factory_is_still_used():
    # without a factory the protocol makes the task itself, named (an unnamed task formats
    # "Task-<n>" per request); with one, the loop's factory makes it, as create_task would
    import uvicorn
    from uvicorn.server import ServerState

    loop = asyncio.get_running_loop()
    made: list[str] = []

    def factory(loop: Any, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        made.append(coro.__qualname__)
        return asyncio.Task(coro, loop=loop, **kwargs)

    config = uvicorn.Config(app, http=GatewayHTTP, lifespan="off", log_level="critical")
    config.load()
    for use_factory in (False, True):
        loop.set_task_factory(factory if use_factory else None)
        try:
            state = ServerState()
            proto = GatewayHTTP(config, state, {}, loop)
            wire = _Recording()
            proto.connection_made(wire)
            proto.data_received(_post("/json"))
            names = [t.get_name() for t in state.tasks]
            for _ in range(500):
                if proto.cycle is None and wire.writes:
                    break
                await asyncio.sleep(0.001)
            proto.connection_lost(None)
        finally:
            loop.set_task_factory(None)
        assert wire.writes and wire.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
        if use_factory:
            assert made == ["GatewayHTTP._run"] and names != ["modelwire-request"]
        else:
            assert made == [] and names == ["modelwire-request"]
