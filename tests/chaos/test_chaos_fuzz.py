"""A raw-socket fuzzer against the gateway: invalid JSON and UTF-8, deep nesting, huge and
lying Content-Length, chunked abuse, CR/LF tricks, pipelining, slow heads and bodies.
No 5xx for any of it, every connection answered or closed within the configured
timeouts, and memory and descriptors back within a bound afterwards."""

from __future__ import annotations

import asyncio
import gc
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from .conftest import LIMITS, UPSTREAM_KEY, fd_count, report, rss_kib, scale

PATHS = (b"/v1/chat/completions", b"/v1/messages", b"/v1/responses", b"/v1/messages/count_tokens",
         b"/v1/models", b"/health", b"/v1/chat/completions/", b"/nope")
GOOD = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "input": "hi"}'
# the longest any case may take: a slow head or body is cut at its timeout, plus slack
# for a loaded machine (2 cores shared by several test runs)
BOUND = LIMITS["header_timeout"] + LIMITS["body_timeout"] + 4.0


@dataclass(frozen=True)
class Case:
    kind: str
    pieces: tuple[bytes, ...]  # written in order
    pause: float = 0.0  # between pieces (slow clients)


def _request(path: bytes, body: bytes, *headers: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    extra = b"".join(h + b"\r\n" for h in headers)
    return (b"POST " + path + b" HTTP/1.1\r\nhost: chaos\r\ncontent-type: application/json\r\n"
            + extra + b"content-length: %d\r\n\r\n" % size + body)


def _mutate(rng: random.Random, body: bytes) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(4)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            del data[at:at + rng.randint(1, 8)]
        elif op == 1:
            data[at:at] = bytes(rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"{", b"]", b'"', b"\\u")))
        elif op == 2 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        else:
            data[at:at] = rng.choice((b"[" * 300, b'{"a":' * 200, b"1e999999", b"-", b"null"))
    return bytes(data)


def _deep(levels: int) -> bytes:
    return b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "x": ' + \
        b"[" * levels + b"]" * levels + b"}"


MAKERS: dict[str, Callable[[random.Random, bytes], Case]] = {
    "invalid_json": lambda r, p: Case("invalid_json", (_request(p, _mutate(r, GOOD)),)),
    "invalid_utf8": lambda r, p: Case("invalid_utf8", (_request(p, GOOD.replace(b"hi", b"h\xff\xfe")),)),
    "deep": lambda r, p: Case("deep", (_request(p, _deep(r.choice((129, 300, 1023, 5000)))),)),
    "huge_length": lambda r, p: Case("huge_length", (_request(p, b"{}", length=10**12),)),
    "lying_short": lambda r, p: Case("lying_short", (_request(p, GOOD, length=len(GOOD) + 500),)),
    "lying_long": lambda r, p: Case("lying_long", (_request(p, GOOD + b"garbage\r\n\r\n", length=len(GOOD)),)),
    "chunked_bad": lambda r, p: Case("chunked_bad", (
        b"POST " + p + b" HTTP/1.1\r\nhost: c\r\ntransfer-encoding: chunked\r\n\r\n"
        + r.choice((b"zz\r\nxx\r\n0\r\n\r\n", b"-5\r\nhello\r\n", b"5;ext=\x01\r\nhello\r\n0\r\n\r\n",
                    b"ffffffffffffffff\r\n", b"2\r\n{}\r\n0\r\nx-trailer: " + b"a" * 9000 + b"\r\n\r\n")),)),
    "chunked_endless": lambda r, p: Case("chunked_endless", (
        b"POST " + p + b" HTTP/1.1\r\nhost: c\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n",)),
    "crlf": lambda r, p: Case("crlf", (r.choice((
        b"POST " + p + b" HTTP/1.1\nhost: c\ncontent-length: 2\n\n{}",
        b"POST " + p + b" HTTP/1.1\r\nhost: c\r\nx-a: b\rinjected: 1\r\ncontent-length: 2\r\n\r\n{}",
        b"POST " + p + b" HTTP/1.1\r\nhost: c\r\n folded: x\r\ncontent-length: 2\r\n\r\n{}",
        b"POST " + p + b"\r\n HTTP/1.1\r\n\r\n",
        b"GET " + p + b"?q=\r\nx HTTP/1.1\r\nhost: c\r\n\r\n")),)),
    "pipelined": lambda r, p: Case("pipelined", (
        _request(p, GOOD) + _request(b"/v1/messages", _mutate(r, GOOD)) + b"GET /health HTTP/1.1\r\nhost: c\r\n\r\n"
        + r.choice((b"", b"NOT HTTP\r\n\r\n", b"POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\n")),)),
    "slow_head": lambda r, p: Case("slow_head", tuple(
        bytes([b]) for b in b"POST " + p + b" HTTP/1.1\r\nhost: c\r\nx-slow: " + b"a" * 60), pause=0.05),
    "slow_body": lambda r, p: Case("slow_body", (_request(p, GOOD)[:-len(GOOD)],) + tuple(
        GOOD[i:i + 4] for i in range(0, 24, 4)), pause=0.3),
    "half_head": lambda r, p: Case("half_head", (b"POST " + p + b" HTTP/1.1\r\nhost: c\r\nx-h",)),
}

STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


async def _run(case: Case, port: int) -> tuple[str, list[int], float, bytes]:
    loop = asyncio.get_running_loop()
    started = loop.time()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    received = b""
    try:
        for piece in case.pieces:
            if reader.at_eof() or writer.is_closing():
                break  # the server has answered (408) or closed: a slow client stops here
            writer.write(piece)
            if case.pause:
                await asyncio.sleep(case.pause)
        with_eof = case.kind not in ("slow_head", "slow_body", "half_head", "lying_short", "chunked_endless")
        if with_eof:
            writer.write_eof()  # the client is done: the server answers what it got, then closes
        while loop.time() - started < BOUND:
            chunk = await asyncio.wait_for(reader.read(65536), BOUND)
            if not chunk:
                break
            received += chunk
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    except TimeoutError:
        received += b"<hung>"
    finally:
        writer.close()
    statuses = [int(m) for m in STATUS.findall(received)]
    return case.kind, statuses, loop.time() - started, received


async def _fuzz(port: int, cases: list[Case], concurrency: int) -> list[tuple[str, list[int], float, bytes]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> tuple[str, list[int], float, bytes]:
        async with gate:
            return await _run(case, port)

    return await asyncio.gather(*(one(c) for c in cases))


@pytest.mark.timeout(1200)  # the full run's phases take minutes
def test_hostile_bytes_never_get_a_5xx_nor_hang(chaos_gateway) -> None:
    rng = random.Random(26)
    count = scale(260, 5200)
    kinds = sorted(MAKERS)
    cases = [MAKERS[kinds[i % len(kinds)]](rng, rng.choice(PATHS)) for i in range(count)]
    gc.collect()
    rss0, fds0 = rss_kib(), fd_count()
    wall = time.monotonic()
    results = asyncio.run(_fuzz(chaos_gateway.port, cases, concurrency=scale(32, 64)))
    wall = time.monotonic() - wall
    fives = [(k, s, body[:300]) for k, s, _, body in results if any(code >= 500 for code in s)]
    slowest = max(t for _, _, t, _ in results)
    slow_kinds = sorted({k for k, _, t, _ in results if t > slowest * 0.8})
    answered = sum(1 for _, s, _, _ in results if s)
    unanswered = sorted({k for k, s, _, _ in results if not s})
    leaked = [k for k, _, _, body in results if UPSTREAM_KEY.encode() in body]
    hung = [(k, body[-200:]) for k, _, _, body in results if body.endswith(b"<hung>")]
    # what the gateway holds after the phase: its sockets closed, its memory back
    deadline = time.monotonic() + 10
    while fd_count() > fds0 + 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    gc.collect()
    rss1, fds1 = rss_kib(), fd_count()
    by_status: dict[int, int] = {}
    for _, statuses, _, _ in results:
        for code in statuses:
            by_status[code] = by_status.get(code, 0) + 1
    report("fuzz", requests=count, answered=answered, closed_unanswered=count - answered, unanswered_kinds=unanswered,
           fivexx=len(fives), hung=len(hung), slowest_s=round(slowest, 2), slowest_kinds=slow_kinds, wall_s=round(wall, 1),
           statuses=dict(sorted(by_status.items())), rss_delta_kib=rss1 - rss0, fd_delta=fds1 - fds0)
    assert not hung, hung[:5]
    assert not fives, fives[:5]
    assert not leaked
    assert slowest < BOUND
    assert fds1 <= fds0 + 8
    assert rss1 - rss0 < 64 * 1024  # KiB
