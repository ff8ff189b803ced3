"""The async transport's own HTTP/1.1 client (modelwire.transport.h1) against scripted servers.

Each test runs a raw asyncio server on 127.0.0.1 that records the bytes it receives and
answers with exactly the bytes the test scripts, so framing, keep-alive, timeouts and
failures are the real thing on a real socket.
"""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import Callable
from typing import Self

import pytest

from modelwire import ConnectError
from modelwire.codecs import EncodedRequest
from modelwire.errors import ReadTimeoutError, StreamInterruptedError, TransportError
from modelwire.transport import AsyncHTTPTransport, Timeouts
from modelwire.transport.h1 import Origin

KEY = "sk-test-0123456789abcdef"
BODY = b'{"model": "m", "messages": []}'


def _request(headers: dict[str, str] | None = None, body: bytes = BODY) -> EncodedRequest:
    return EncodedRequest("POST", "/chat/completions",
                          headers or {"content-type": "application/json", "authorization": f"Bearer {KEY}"},
                          body)


def _ok(body: bytes, *extra: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n" % len(body)
    return head + b"".join(h + b"\r\n" for h in extra) + b"\r\n" + body


def _chunked(*pieces: bytes) -> bytes:
    out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    for p in pieces:
        out += b"%x\r\n%s\r\n" % (len(p), p)
    return out + b"0\r\n\r\n"


def _trickle(events: int, gap: float) -> Callable[[asyncio.StreamWriter], object]:
    """An answer that streams ``events`` SSE events, ``gap`` seconds apart."""

    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for _ in range(events):
            writer.write(b"9\r\ndata: x\n\n\r\n")
            await writer.drain()
            await asyncio.sleep(gap)

    return answer


class Scripted:
    """A server that answers the n-th request on a connection with ``answer(conn_no, n)``:
    bytes to write, or a coroutine function taking the writer (for stalls and drops)."""

    def __init__(self, answer: Callable[[int, int], object]) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []
        self.closed_by_peer = asyncio.Event()
        self.server: asyncio.Server | None = None
        self.base_url = ""

    async def __aenter__(self) -> Self:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.base_url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        conn_no = self.connections
        n = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                n += 1
                answer = self.answer(conn_no, n)
                if callable(answer):
                    await answer(writer)
                else:
                    writer.write(answer)  # type: ignore[arg-type]
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed_by_peer.set()
        finally:
            writer.close()


async def test_request_is_one_well_formed_message():
    async with Scripted(lambda c, n: _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        resp = await t.send(_request(), srv.base_url, Timeouts())
        await t.aclose()
    assert resp.status == 200 and resp.body == b"{}" and resp.headers["content-type"] == "application/json"
    raw = srv.requests[0]
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions HTTP/1.1"
    port = srv.base_url.split(":")[2].split("/")[0]
    assert f"host: 127.0.0.1:{port}".encode() in lines
    assert b"content-length: %d" % len(BODY) in lines
    assert f"authorization: Bearer {KEY}".encode() in lines
    assert any(line.startswith(b"user-agent: modelwire/") for line in lines)
    assert body == BODY


async def test_framing_is_ours_and_a_callers_host_replaces_the_origins():
    async with Scripted(lambda c, n: _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        headers = {"content-type": "application/json", "Host": "api.example.test",
                   "Content-Length": "999", "transfer-encoding": "chunked"}
        assert (await t.send(_request(headers), srv.base_url, Timeouts())).status == 200
        await t.aclose()
    head = srv.requests[0].partition(b"\r\n\r\n")[0].lower().split(b"\r\n")
    assert [h for h in head if h.startswith(b"host:")] == [b"host: api.example.test"]
    assert [h for h in head if h.startswith(b"content-length:")] == [b"content-length: %d" % len(BODY)]
    assert not any(h.startswith(b"transfer-encoding") for h in head)


async def test_keep_alive_reuses_one_connection_and_connection_close_does_not():
    async with Scripted(lambda c, n: _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        for _ in range(3):
            assert (await t.send(_request(), srv.base_url, Timeouts())).status == 200
        assert srv.connections == 1
    async with Scripted(lambda c, n: _ok(b"{}", b"connection: close")) as srv:
        for _ in range(2):
            assert (await t.send(_request(), srv.base_url, Timeouts())).status == 200
        assert srv.connections == 2
    await t.aclose()


async def test_a_kept_alive_connection_the_server_dropped_is_retried_once_on_a_new_one():
    async def answer_then_hang_up(writer: asyncio.StreamWriter) -> None:
        writer.write(_ok(b'{"n": 1}'))  # keep-alive by default, then the server drops it
        await writer.drain()
        writer.close()

    async with Scripted(lambda c, n: answer_then_hang_up) as srv:
        t = AsyncHTTPTransport()
        assert (await t.send(_request(), srv.base_url, Timeouts())).body == b'{"n": 1}'
        await asyncio.sleep(0)  # the close may or may not have been seen: both must work
        assert (await t.send(_request(), srv.base_url, Timeouts())).body == b'{"n": 1}'
        await t.aclose()
    assert srv.connections == 2 and len(srv.requests) == 2  # no duplicate request


async def test_the_retry_happens_only_for_a_reused_connection_that_sent_nothing_back():
    async def hang_up(writer: asyncio.StreamWriter) -> None:
        writer.close()

    # connection 1: answers, then closes on the next request unanswered (what a server's
    # idle timeout looks like from here); connection 2 answers
    async with Scripted(lambda c, n: _ok(b"{}") if (c, n) != (1, 2) else hang_up) as srv:
        t = AsyncHTTPTransport()
        assert (await t.send(_request(), srv.base_url, Timeouts())).status == 200
        assert (await t.send(_request(), srv.base_url, Timeouts())).status == 200
        await t.aclose()
    assert srv.connections == 2 and len(srv.requests) == 3


async def test_a_new_connection_closed_before_the_answer_is_an_interrupted_stream():
    async def hang_up(writer: asyncio.StreamWriter) -> None:
        writer.close()

    async with Scripted(lambda c, n: hang_up) as srv:
        t = AsyncHTTPTransport()
        with pytest.raises(StreamInterruptedError, match="before the response") as info:
            await t.send(_request(), srv.base_url, Timeouts())
        await t.aclose()
    assert srv.connections == 1  # a fresh connection is never retried here (the ladder decides)
    assert KEY not in str(info.value) and "/v1/chat/completions" in str(info.value)


async def test_bodies_by_length_chunks_and_close_and_interim_responses():
    async def until_close(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it")
        await writer.drain()
        writer.close()  # no length, no chunks: the body ends when the server closes

    script = {1: _chunked(b"data: a\n\n", b"data: b\n\n"),
              2: b"HTTP/1.1 100 Continue\r\n\r\n" + _ok(b'{"after": "continue"}'),
              3: until_close}
    async with Scripted(lambda c, n: script[n]) as srv:
        t = AsyncHTTPTransport()
        async with t.stream(_request(), srv.base_url, Timeouts()) as resp:
            assert resp.status == 200 and resp.headers["transfer-encoding"] == "chunked"
            assert b"".join([c async for c in resp.aiter_chunks()]) == b"data: a\n\ndata: b\n\n"
        assert (await t.send(_request(), srv.base_url, Timeouts())).body == b'{"after": "continue"}'
        resp3 = await t.send(_request(), srv.base_url, Timeouts())
        assert resp3.body == b"all of it"
        await t.aclose()
    assert srv.connections == 1  # chunked and interim answers kept the connection


@pytest.mark.parametrize("encoding", ["gzip", "deflate-zlib", "deflate-raw"])
async def test_compressed_bodies_are_decoded(encoding):
    text = b'{"content": "' + b"compressible " * 500 + b'"}'
    if encoding == "gzip":
        packed, name = gzip.compress(text), b"gzip"
    elif encoding == "deflate-zlib":
        packed, name = zlib.compress(text), b"deflate"
    else:
        c = zlib.compressobj(wbits=-15)
        packed, name = c.compress(text) + c.flush(), b"deflate"
    async with Scripted(lambda c, n: _ok(packed, b"content-encoding: " + name)) as srv:
        t = AsyncHTTPTransport()
        resp = await t.send(_request(), srv.base_url, Timeouts())
        async with t.stream(_request(), srv.base_url, Timeouts()) as streamed:
            chunks = [c async for c in streamed.aiter_chunks()]
        await t.aclose()
    assert resp.body == text and b"".join(chunks) == text
    assert b"accept-encoding: gzip, deflate" in srv.requests[0]


async def test_framing_and_coding_headers_are_found_among_many_in_any_case():
    # a provider's answer carries 20 headers or more; only the framing and coding names count,
    # in any case, and a name that merely contains one (x-content-length) does not
    text = b'{"content": "' + b"compressible " * 200 + b'"}'
    packed = gzip.compress(text)
    noise = [b"X-Ratelimit-Remaining-Tokens-%d: %d" % (i, i) for i in range(20)]

    async def decoy(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Content-Length: 3\r\nx-transfer-encoding-x: chunked\r\n\r\nuntil the end")
        await writer.drain()
        writer.close()  # no real length or chunks: the body ends when the server closes

    script = {1: b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                 b"Content-Encoding: GZIP\r\n%s\r\n\r\n%s" % (len(packed), b"\r\n".join(noise), packed),
              2: b"HTTP/1.1 200 OK\r\n%s\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                 % b"\r\n".join(noise),
              3: decoy}
    async with Scripted(lambda c, n: script[n]) as srv:
        t = AsyncHTTPTransport()
        first = await t.send(_request(), srv.base_url, Timeouts())
        second = await t.send(_request(), srv.base_url, Timeouts())
        third = await t.send(_request(), srv.base_url, Timeouts())
        await t.aclose()
    assert first.body == text and first.headers["x-ratelimit-remaining-tokens-19"] == "19"
    assert second.body == b"hello"
    assert third.body == b"until the end"
    assert srv.connections == 1  # kept alive after the sized and the chunked answers


async def test_a_stall_is_a_read_timeout_and_the_connection_is_not_reused():
    async def stall(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        await asyncio.sleep(5)

    async with Scripted(lambda c, n: stall if c == 1 else _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        got = []
        with pytest.raises(ReadTimeoutError):
            async with t.stream(_request(), srv.base_url, Timeouts(stale=0.2)) as resp:
                async for chunk in resp.aiter_chunks():
                    got.append(chunk)
        assert got == [b"hello"]  # what came before the stall was handed out
        assert (await t.send(_request(), srv.base_url, Timeouts())).status == 200
        await t.aclose()
    assert srv.connections == 2


async def test_each_wait_gets_its_own_read_deadline_on_a_kept_alive_connection():
    # the connection keeps one timer across exchanges: an earlier long deadline must not
    # hide a later short one, nor an earlier short one cut a later wait that is in time
    async def stall(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(5)

    async def events(writer: asyncio.StreamWriter) -> None:
        await _trickle(6, 0.1)(writer)  # type: ignore[misc]
        writer.write(b"0\r\n\r\n")

    answers = {1: _ok(b"{}"), 2: events, 3: stall}
    async with Scripted(lambda c, n: answers.get(n, _ok(b"{}")) if c == 1 else _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        assert (await t.send(_request(), srv.base_url, Timeouts())).status == 200  # read: 600 s
        # 0.6 s of events 0.1 s apart under a 0.25 s gap limit: in time throughout
        async with t.stream(_request(), srv.base_url, Timeouts(stale=0.25)) as resp:
            got = [c async for c in resp.aiter_chunks()]
        assert b"".join(got).count(b"data: x") == 6
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(ReadTimeoutError):
            await t.send(_request(), srv.base_url, Timeouts(read=0.2))
        assert loop.time() - start < 2  # its own 0.2 s, not the first exchange's 600 s
        await t.aclose()
    assert srv.connections == 1  # all three on the kept-alive connection


async def test_total_deadline_is_named_in_the_error():
    async def slow(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async with Scripted(lambda c, n: slow) as srv:
        t = AsyncHTTPTransport()
        with pytest.raises(ReadTimeoutError, match="total deadline of 0.2 s"):
            await t.send(_request(), srv.base_url, Timeouts(total=0.2))
        await t.aclose()


async def test_a_streams_total_deadline_ends_it_even_while_bytes_flow():
    async with Scripted(lambda c, n: _trickle(100, 0.05)) as srv:
        t = AsyncHTTPTransport()
        got = []
        with pytest.raises(ReadTimeoutError, match="total deadline of 0.3 s"):
            async with t.stream(_request(), srv.base_url, Timeouts(total=0.3, stale=5)) as resp:
                async for chunk in resp.aiter_chunks():
                    got.append(chunk)
        await t.aclose()
    assert got  # the chunks before the deadline were handed out


async def test_a_drop_mid_body_is_interrupted_mid_stream_with_the_bytes_before_it():
    async def drop(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n9\r\ndata: a\n\n\r\n")
        await writer.drain()
        writer.transport.abort()

    async with Scripted(lambda c, n: drop) as srv:
        t = AsyncHTTPTransport()
        got = []
        with pytest.raises(StreamInterruptedError, match="mid-stream"):
            async with t.stream(_request(), srv.base_url, Timeouts()) as resp:
                async for chunk in resp.aiter_chunks():
                    got.append(chunk)
        await t.aclose()
    assert got == [b"data: a\n\n"]


async def test_malformed_response_is_a_transport_error():
    async with Scripted(lambda c, n: b"HTTP/1.1 abc nonsense\r\n\r\n") as srv:
        t = AsyncHTTPTransport()
        with pytest.raises(TransportError, match="malformed HTTP response"):
            await t.send(_request(), srv.base_url, Timeouts())
        await t.aclose()


@pytest.mark.parametrize("bad", [
    {"content-type": "application/json", "x-note": "a\r\nx-injected: 1"},
    {"x-note": "a\nx-injected: 1"},  # a bare LF
    {"x-note": "a\rx-injected: 1"},  # a bare CR
    {"x-no\r\nte": "a"},  # in a name
    {"content-type": "application/json", "x-a": "1", "x-b": "2\r\n"},  # in the last of several
])
async def test_a_line_break_in_a_header_is_refused_before_anything_is_sent(bad):
    async with Scripted(lambda c, n: _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        with pytest.raises(TransportError, match="line break"):
            await t.send(_request(bad), srv.base_url, Timeouts())
        await t.aclose()
    assert srv.connections == 0


@pytest.mark.parametrize("headers", [{}, {"x-one": "1"}, {"x-one": "1", "x-two": "2", "x-three": "3"}])
async def test_requests_with_no_one_or_several_headers_go_out_whole(headers):
    async with Scripted(lambda c, n: _ok(b"{}")) as srv:
        t = AsyncHTTPTransport()
        resp = await t.send(EncodedRequest("POST", "/chat/completions", headers, BODY), srv.base_url, Timeouts())
        await t.aclose()
    assert resp.status == 200
    head, body = srv.requests[0].split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1" and body == BODY
    assert [line for line in lines if line.startswith("x-")] == [f"{k}: {v}" for k, v in headers.items()]
    assert f"content-length: {len(BODY)}" in lines and any(line.startswith("host: ") for line in lines)


async def test_leaving_a_stream_early_closes_its_connection():
    async with Scripted(lambda c, n: _trickle(200, 0.01)) as srv:
        t = AsyncHTTPTransport()
        async with t.stream(_request(), srv.base_url, Timeouts()) as resp:
            async for _chunk in resp.aiter_chunks():
                break
        await asyncio.wait_for(srv.closed_by_peer.wait(), 5)  # the server saw the connection go
        await t.aclose()


async def test_cancelling_a_request_closes_its_connection():
    async def never(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(10)

    async with Scripted(lambda c, n: never) as srv:
        t = AsyncHTTPTransport()
        task = asyncio.ensure_future(t.send(_request(), srv.base_url, Timeouts()))
        for _ in range(200):  # until the request is in
            if srv.requests:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await t.aclose()


async def test_pool_limit_queues_requests_on_one_connection():
    async def slowish(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.02)
        writer.write(_ok(b"{}"))
        await writer.drain()

    async with Scripted(lambda c, n: slowish) as srv:
        t = AsyncHTTPTransport(limit_per_host=1)
        answers = await asyncio.gather(*[t.send(_request(), srv.base_url, Timeouts()) for _ in range(4)])
        await t.aclose()
    assert [a.status for a in answers] == [200] * 4
    assert srv.connections == 1 and len(srv.requests) == 4


async def test_a_large_streamed_body_arrives_whole():
    piece = bytes(range(256)) * 256  # 64 KiB
    async with Scripted(lambda c, n: _chunked(*[piece] * 64)) as srv:  # 4 MiB
        t = AsyncHTTPTransport()
        async with t.stream(_request(), srv.base_url, Timeouts()) as resp:
            got = []
            async for chunk in resp.aiter_chunks():
                got.append(chunk)
                await asyncio.sleep(0.001)  # a slower reader: reading pauses and resumes
        await t.aclose()
    assert b"".join(got) == piece * 64


async def test_connect_failures_and_bad_urls():
    t = AsyncHTTPTransport()
    with pytest.raises(ConnectError, match="cannot connect"):
        await t.send(_request(), "http://127.0.0.1:9/v1", Timeouts(connect=1.0))
    with pytest.raises(TransportError, match="not an http"):
        await t.send(_request(), "ftp://example.invalid/v1", Timeouts())
    await t.aclose()


def test_origin_host_header_and_ports():
    assert Origin("https", "api.openai.com", None).host_header == "api.openai.com"
    assert Origin("https", "api.openai.com", None).port == 443
    assert Origin("http", "127.0.0.1", 8080).host_header == "127.0.0.1:8080"
    six = Origin("http", "::1", 8080)
    assert six.host == "::1" and six.host_header == "[::1]:8080"


def test_response_headers_read_like_a_dict_of_lowercased_names():
    from modelwire.transport.h1 import ResponseHeaders

    raw = [(b"Content-Type", b"application/json"), (b"Set-Cookie", b"a=1"), (b"set-cookie", b"b=2"),
           (b"X-Caf\xe9", b"\xe9t\xe9")]
    headers = ResponseHeaders(raw)
    assert headers == {"content-type": "application/json", "set-cookie": "a=1, b=2", "x-café": "été"}
    assert headers["content-type"] == "application/json" and headers.get("retry-after") is None
    assert "set-cookie" in headers and "Set-Cookie" not in headers  # names are lowercase
    assert len(headers) == 3 and list(headers) == ["content-type", "set-cookie", "x-café"]
    assert dict(headers.items()) == dict(headers)
    with pytest.raises(KeyError):
        headers["missing"]


def _in_pieces(answer: bytes, how: str) -> Callable[[asyncio.StreamWriter], object]:
    """``answer`` written whole, head and body apart, or a byte at a time."""

    async def write(writer: asyncio.StreamWriter) -> None:
        if how == "whole":
            pieces = [answer]
        elif how == "head|body":
            cut = answer.index(b"\r\n\r\n") + 4
            pieces = [answer[:cut], answer[cut:]]
        else:
            pieces = [answer[i:i + 1] for i in range(len(answer))]
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            if len(pieces) > 1:
                await asyncio.sleep(0.001)  # separate reads on the client's side

    return write


@pytest.mark.parametrize("how", ["whole", "head|body", "bytes"])
async def test_an_answer_reads_the_same_however_its_bytes_arrive(how):
    packed = gzip.compress(b'{"zipped": true}')
    script = {1: _ok(b'{"a": 1}', b"X-Request-Id: r1", b"x-dup: 1", b"X-Dup: 2"),
              2: _ok(packed, b"Content-Encoding: GZIP"),
              3: b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + _ok(b"{}"),
              4: _chunked(b"data: a\n\n"),
              5: b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 2\r\ncontent-length: 2\r\n\r\n{}",
              6: _ok(b"last", b"Connection: close")}
    async with Scripted(lambda c, n: _in_pieces(script[n], how)) as srv:
        t = AsyncHTTPTransport()
        got = [await t.send(_request(), srv.base_url, Timeouts()) for _ in range(6)]
        await t.aclose()
    assert [r.status for r in got] == [200, 200, 200, 200, 429, 200]
    assert [r.body for r in got] == [b'{"a": 1}', b'{"zipped": true}', b"{}", b"data: a\n\n", b"{}", b"last"]
    assert got[0].headers["x-request-id"] == "r1" and got[0].headers["x-dup"] == "1, 2"
    assert got[4].headers["retry-after"] == "2"
    assert srv.connections == 1  # every answer kept the connection; the last one closes it



def test_one_transport_serves_one_loop_after_another():
    # pools belong to a loop: a base URL used from a finished loop gets a new pool in
    # the next one (a route kept from the first would write through a closed loop)
    import threading

    ready = threading.Event()
    box: dict[str, object] = {}

    def serve() -> None:
        async def main() -> None:
            async with Scripted(lambda c, n: _ok(b'{"n": %d}' % n)) as srv:
                box["srv"], box["loop"], box["stop"] = srv, asyncio.get_running_loop(), asyncio.Event()
                ready.set()
                await box["stop"].wait()  # type: ignore[attr-defined]

        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    srv: Scripted = box["srv"]  # type: ignore[assignment]
    t = AsyncHTTPTransport()

    async def once() -> bytes:
        return (await t.send(_request(), srv.base_url, Timeouts(total=10))).body

    try:
        assert asyncio.run(once()) == b'{"n": 1}'
        assert asyncio.run(once()) == b'{"n": 1}'  # a new connection from the new loop
        assert srv.connections == 2
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)  # type: ignore[attr-defined]
        thread.join(10)
