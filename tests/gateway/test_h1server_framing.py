"""GatewayHTTP's request framing, however the bytes are cut: whatever the split of a
stream of pipelined requests into reads (plain, large, empty, chunked, long-headed), the
app sees the same requests (method, path, headers, body), in order, each answered once;
bytes that are not HTTP/1.1 (request smuggling attempts among them) get a 400."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelwire.gateway.h1server import GatewayHTTP


def _post(path: str, body: bytes, *extra: bytes) -> bytes:
    return (b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
            % (path.encode(), len(body), b"".join(e + b"\r\n" for e in extra), body))


def _chunked(path: str, body: bytes) -> bytes:
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7]) for i in range(0, len(body), 7))
    return b"POST %s HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n%s0\r\n\r\n" % (path.encode(), chunks)


# (request bytes, what the app must see: method, path, query, body, a header it must carry)
REQUESTS: list[tuple[bytes, tuple[str, str, bytes, bytes, tuple[bytes, bytes]]]] = [
    (_post("/a", b'{"x": 1}'), ("POST", "/a", b"", b'{"x": 1}', (b"content-type", b"application/json"))),
    (b"GET /b?q=1 HTTP/1.1\r\nHost: t\r\nX-Key:   v  v\r\n\r\n", ("GET", "/b", b"q=1", b"", (b"x-key", b"v  v"))),
    (_post("/c%20d", b"y" * 70_000), ("POST", "/c d", b"", b"y" * 70_000, (b"host", b"t"))),
    (_post("/e", b""), ("POST", "/e", b"", b"", (b"content-length", b"0"))),
    (_chunked("/f", b"chunked body, framed by llhttp"),
     ("POST", "/f", b"", b"chunked body, framed by llhttp", (b"transfer-encoding", b"chunked"))),
    (_post("/g", b"{}", b"Authorization: Bearer k", b"x-long: " + b"z" * 3000),
     ("POST", "/g", b"", b"{}", (b"authorization", b"Bearer k"))),
    (_post("/h", b"{}", b"X-Trailing: v "), ("POST", "/h", b"", b"{}", (b"x-trailing", b"v "))),  # as llhttp has it
]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    scope["app_state"].append((scope["method"], scope["path"], scope["query_string"], body,
                               list(scope["headers"])))
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"%d" % len(body)})


class _Wire:
    """The transport side of one connection (no socket): records what is written."""

    def __init__(self) -> None:
        self.data = b""
        self.closed = False

    def write(self, data: bytes) -> None:
        self.data += data

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 1) if name in ("sockname", "peername") else None

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _proto(seen: list[Any]) -> tuple[GatewayHTTP, _Wire]:
    import uvicorn
    from uvicorn.server import ServerState

    async def with_state(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["app_state"] = seen
        await app(scope, receive, send)

    config = uvicorn.Config(with_state, http=GatewayHTTP, lifespan="off", log_level="critical")
    config.load()
    proto = GatewayHTTP(config, ServerState(), {}, asyncio.get_running_loop())
    wire = _Wire()
    proto.connection_made(wire)  # type: ignore[arg-type]
    return proto, wire


async def _feed(pieces: list[bytes], answers: int) -> tuple[list[Any], _Wire, GatewayHTTP]:
    seen: list[Any] = []
    proto, wire = _proto(seen)
    for piece in pieces:
        proto.data_received(piece)
        await asyncio.sleep(0)
    for _ in range(2000):
        if wire.data.count(b"HTTP/1.1 ") >= answers and proto.cycle is None:
            break
        await asyncio.sleep(0.001)
    proto.connection_lost(None)
    return seen, wire, proto


def _check(seen: list[Any], wire: _Wire, chosen: list[int]) -> None:
    assert len(seen) == len(chosen)
    for (method, path, query, body, headers), i in zip(seen, chosen):
        want_method, want_path, want_query, want_body, header = REQUESTS[i][1]
        assert (method, path, query, body) == (want_method, want_path, want_query, want_body)
        assert header in headers
    answers = wire.data.split(b"HTTP/1.1 200 OK\r\n")[1:]
    assert [a.rsplit(b"\r\n\r\n", 1)[1] for a in answers] == [b"%d" % len(REQUESTS[i][1][3]) for i in chosen]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, len(REQUESTS) - 1), min_size=1, max_size=5), st.data())
def test_pipelined_requests_in_any_split_reach_the_app_whole_and_in_order(chosen: list[int], data: Any) -> None:
    stream = b"".join(REQUESTS[i][0] for i in chosen)
    cuts = sorted(data.draw(st.lists(st.integers(1, len(stream) - 1), max_size=12, unique=True)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    seen, wire, _ = asyncio.run(_feed(pieces, len(chosen)))
    _check(seen, wire, chosen)


async def test_a_head_sent_a_byte_at_a_time_is_framed_once_whole():
    request = _post("/a", b'{"x": 1}')
    seen, wire, _ = await _feed([request[i:i + 1] for i in range(len(request))], 1)
    _check(seen, wire, [0])


@pytest.mark.parametrize("bad", [
    b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",  # request smuggling
    b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST /a HTTP/1.1\r\nHo st: t\r\n\r\n",
    b"POST /a HTTP/1.1\r\nHost: t\x00\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",  # TLS to a plain port
])
async def test_bytes_llhttp_refuses_still_get_its_400(bad: bytes):
    seen, wire, _ = await _feed([bad], 1)
    assert seen == []
    assert wire.data.startswith(b"HTTP/1.1 400 Bad Request\r\n") and wire.closed

