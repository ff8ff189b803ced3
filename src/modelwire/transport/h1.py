"""A lean HTTP/1.1 client on asyncio + httptools: the async transport's direct path.

Why not aiohttp for everything: a gateway hop through this client adds well under half
of what one through aiohttp does (figures: docs/performance, "Why the code is as it
is"). Here a request is one ``write``, a response is parsed by httptools (llhttp) as it
arrives, and a timer is armed only while the caller actually waits.

What it does: HTTP/1.1 keep-alive connections pooled per origin (LIFO, idle ones
dropped after :data:`KEEPALIVE_S`, at most ``limit`` busy at once with FIFO
waiters), TLS through the shared SSL context, content-length / chunked /
until-close bodies, gzip and deflate, 1xx responses skipped, read back-pressure
(reading pauses while more than :data:`_HIGH` bytes wait for the consumer), a
read timeout per wait and an optional total deadline, and one transparent retry
when a reused keep-alive connection turns out to be closed before a single byte
of the answer arrived (the server dropped it while idle: the request was never
read). What it leaves to aiohttp: origins reached through a proxy (the caller
routes those there), HTTP/2, and anything not HTTP/1.1.

Errors are raised as :mod:`asyncio`/:mod:`OSError`/:class:`H1Error` values; the
transport maps them to modelwire errors at its one seam.
"""

from __future__ import annotations

import asyncio
import zlib
from collections import deque
from typing import TYPE_CHECKING, Any, TypedDict

import httptools

from .headers import LazyHeaders

if TYPE_CHECKING:
    from ssl import SSLContext


__all__ = ["KEEPALIVE_S", "H1Closed", "H1Conn", "H1Error", "H1Pool", "Origin"]

KEEPALIVE_S = 15.0  # an idle connection older than this is not reused (aiohttp's default)
_HIGH = 256 * 1024  # pause reading above this many unread body bytes ...
_LOW = 64 * 1024  # ... and resume below this


class H1Error(Exception):
    """The server's bytes are not valid HTTP/1.1 (or an upgrade we did not ask for)."""


class H1Closed(ConnectionError):
    """The connection closed before the response was complete.

    ``started``: the response head had arrived. ``any_bytes``: anything at all had.
    """

    def __init__(self, started: bool, any_bytes: bool, cause: BaseException | None) -> None:
        super().__init__("connection closed " + ("mid-body" if started else "before the response"))
        self.started = started
        self.any_bytes = any_bytes
        self.cause = cause


class Origin:
    """Where connections go: ``scheme://host:port``, parsed once per base URL."""

    __slots__ = ("host", "host_header", "key", "port", "tls")

    def __init__(self, scheme: str, host: str, port: int | None) -> None:
        self.tls = scheme == "https"
        default = 443 if self.tls else 80
        self.port = port or default
        self.host = host.strip("[]")
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = shown if self.port == default else f"{shown}:{self.port}"
        self.key = (scheme, self.host, self.port)


class ResponseHeaders(LazyHeaders):
    """Response headers, names lowercased, repeated ones joined with ", ", decoded on the
    first read: a successful answer's are rarely asked for (errors, a stream's type)."""

    __slots__ = ()

    def _build(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in self._raw:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            out[key] = f"{out[key]}, {text}" if key in out else text
        self._map = out
        return out


class H1Conn(asyncio.Protocol):
    """One HTTP/1.1 connection, one exchange at a time; httptools calls the ``on_*``."""

    __slots__ = (
        "_buffered", "_deadline", "_decoder", "_interim", "_lost", "_paused", "_spare", "_timer",
        "_waiter", "any_bytes", "chunks", "done", "error", "head_done", "headers", "idle_since",
        "keep_alive", "loop", "parser", "status", "transport", "until_close",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: Any = None
        self.parser: Any = None
        self._lost = False
        self._waiter: asyncio.Future[None] | None = None
        # the read deadline: one timer per connection, re-armed when it fires early
        # rather than made and cancelled around every wait
        self._timer: Any = None
        self._deadline = 0.0
        self._spare: Any = None  # the parser of the last clean exchange, for the next one
        self.idle_since = 0.0
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: deque[bytes] = deque()
        self._buffered = 0
        self._paused = False
        self._interim = False
        self._decoder: Any = None
        self.head_done = False
        self.done = False
        self.keep_alive = False
        self.until_close = False
        self.any_bytes = False
        self.error: BaseException | None = None

    # ----------------------------------------------------------- asyncio side
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.any_bytes = True
        parser = self.parser
        if parser is None:  # bytes while idle: the server is confused; never reuse this
            self._lost = True
            self.transport.close()
            return
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(H1Error("the server switched protocols, which was not asked for"))
        except httptools.HttpParserError as exc:
            self._fail(H1Error(f"malformed HTTP response: {exc}"))

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._stop_timer()
        if self.parser is not None and not self.done and self.error is None:
            if self.head_done and self.until_close:
                self.done = True  # a body without length ends when the server closes
            else:
                self.error = H1Closed(self.head_done, self.any_bytes, exc)
        self._wake()

    def _fail(self, err: BaseException) -> None:
        if self.error is None:
            self.error = err
        self._lost = True
        self.transport.abort()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # ---------------------------------------------------------- httptools side
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if status < 200:  # 100 Continue, 103 Early Hints: the real answer follows
            self._interim = True
            self.headers = []
            return
        self.status = status
        self.head_done = True
        chunked = length = False
        for name, value in self.headers:
            low = name.lower()
            if low == b"content-length":
                length = True
            elif low == b"transfer-encoding" and value.lower().find(b"chunked") >= 0:  # not `in`: see seal.may_hold_envelope
                chunked = True
            elif low == b"content-encoding":
                coding = value.strip().lower()
                if coding in (b"gzip", b"x-gzip"):
                    self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
                elif coding == b"deflate":
                    self._decoder = _Deflate()
        # 204 and 304 have no body whatever the headers say (llhttp knows this too)
        self.until_close = not (length or chunked or status in (204, 304))
        self._wake()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _HIGH and not self._paused:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
            return
        self.done = True
        self.keep_alive = self.parser.should_keep_alive()
        self._wake()

    # ----------------------------------------------------------- caller side
    @property
    def reusable(self) -> bool:
        return self.done and self.keep_alive and not self._lost and not self.chunks

    def usable(self, now: float) -> bool:
        return not self._lost and not self.transport.is_closing() and now - self.idle_since < KEEPALIVE_S

    def begin(self, data: bytes) -> None:
        """Send one request (head and body already joined) on this connection."""
        self._reset()
        # llhttp reads one response after another on a kept-alive connection
        self.parser = self._spare or httptools.HttpResponseParser(self)
        self._spare = None
        self.transport.write(data)

    async def wait(self, timeout: float) -> None:
        """Until the protocol side has something new; ``TimeoutError`` after ``timeout``."""
        loop = self.loop
        waiter = self._waiter = loop.create_future()
        deadline = self._deadline = loop.time() + timeout
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._check_deadline)
        try:
            await waiter
        finally:
            self._waiter = None

    def _check_deadline(self) -> None:
        self._timer = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return  # nothing waits: the next wait arms a timer again
        if self._deadline - self.loop.time() > 0.0005:  # armed for an earlier wait
            self._timer = self.loop.call_at(self._deadline, self._check_deadline)
        else:
            waiter.set_exception(TimeoutError())

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def head(self, timeout: float) -> None:
        while not self.head_done:
            if self.error is not None:
                raise self.error
            await self.wait(timeout)

    def decoded_headers(self) -> ResponseHeaders:
        """The response headers (decoded when first read: a good answer's seldom are)."""
        return ResponseHeaders(self.headers)

    def take(self) -> bytes:
        """Every body byte received so far (decompressed), or ``b""``."""
        chunks = self.chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._buffered = 0
        if self._paused:
            self._paused = False
            self.transport.resume_reading()
        decoder = self._decoder
        if decoder is not None:
            data = decoder.decompress(data)
            if self.done:
                data += decoder.flush()
                self._decoder = None  # flushed: nothing more may go through it
        return data

    async def next_chunk(self, timeout: float) -> bytes:
        """The next body bytes, ``b""`` at the end of the body."""
        while True:
            if self.chunks:
                data = self.take()
                if data:
                    return data
                continue
            if self.done:
                return self.take() if self._decoder is not None else b""  # the flush
            if self.error is not None:
                raise self.error
            await self.wait(timeout)

    def close(self) -> None:
        self._lost = True
        self._stop_timer()
        if self.transport is not None:
            self.transport.abort()


class _Deflate:
    """``Content-Encoding: deflate`` is zlib-wrapped by the RFC, raw in some servers."""

    __slots__ = ("_inner",)

    def __init__(self) -> None:
        self._inner: Any = None

    def decompress(self, data: bytes) -> bytes:
        if self._inner is None:
            raw = not data or (data[0] & 0x0F) != 8  # a zlib stream starts with method 8
            self._inner = zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
        return self._inner.decompress(data)  # type: ignore[no-any-return]

    def flush(self) -> bytes:
        return self._inner.flush() if self._inner is not None else b""


class _Eyeballs(TypedDict, total=False):
    happy_eyeballs_delay: float


class H1Pool:
    """The connections to one origin in one event loop."""

    __slots__ = ("_busy", "_closed", "_eyeballs", "_idle", "_limit", "_loop", "_origin", "_ssl", "_waiters")

    def __init__(self, loop: asyncio.AbstractEventLoop, origin: Origin, limit: int, ssl: SSLContext | None) -> None:
        self._loop = loop
        self._origin = origin
        self._limit = limit
        self._ssl = ssl if origin.tls else None
        self._idle: list[H1Conn] = []
        self._busy = 0
        self._closed = False  # closed: a connection that comes back is closed, not kept
        self._waiters: deque[asyncio.Future[None]] = deque()
        # Happy Eyeballs (RFC 8305): a host with a broken IPv6 route must not cost a whole
        # connect timeout. asyncio's loop does it; uvloop's create_connection has no such
        # argument and tries the addresses one after another.
        self._eyeballs: _Eyeballs = (
            {"happy_eyeballs_delay": 0.25} if isinstance(loop, asyncio.BaseEventLoop) else {})

    def take_idle(self) -> H1Conn | None:
        """A kept-alive connection for one exchange, without waiting, or ``None`` (then
        :meth:`acquire`): the usual case on a busy origin, with no coroutine to run."""
        if self._busy >= self._limit or self._waiters:
            return None
        now = self._loop.time()
        idle = self._idle
        while idle:
            conn = idle.pop()
            if conn.usable(now):
                self._busy += 1
                return conn
            conn.close()
        return None

    async def acquire(self, connect_timeout: float) -> tuple[H1Conn, bool]:
        """A connection for one exchange, and whether it was used before."""
        while self._busy >= self._limit:
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._wake_one()  # pass the turn we were given on
                raise
        self._busy += 1
        now = self._loop.time()
        idle = self._idle
        while idle:
            conn = idle.pop()
            if conn.usable(now):
                return conn, True
            conn.close()
        conn = H1Conn(self._loop)
        origin = self._origin
        try:
            async with asyncio.timeout(connect_timeout):
                await self._loop.create_connection(
                    lambda: conn, origin.host, origin.port, ssl=self._ssl,
                    server_hostname=origin.host if self._ssl is not None else None,
                    **self._eyeballs,
                )
        except BaseException:
            self._busy -= 1
            self._wake_one()
            conn.close()
            raise
        return conn, False

    def release(self, conn: H1Conn) -> None:
        """Back to the pool when the exchange finished cleanly, else closed."""
        self._busy -= 1
        if conn.reusable and not self._closed:
            conn._spare, conn.parser = conn.parser, None
            conn.idle_since = self._loop.time()
            self._idle.append(conn)
        else:
            conn.close()
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def close(self) -> None:
        """Close the idle connections now; the busy ones close when their exchange ends
        (a pool dropped while a stream runs, e.g. an evicted gateway client)."""
        self._closed = True
        for conn in self._idle:
            conn.close()
        self._idle.clear()
