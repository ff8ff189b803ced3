"""The gateway's HTTP/1.1 protocol for uvicorn: httptools parsing, ASGI 3 to the app.

uvicorn runs the server (sockets, workers, signals, lifespan, graceful shutdown, the
``date`` header); this class replaces only its per-connection protocol
(``uvicorn.Config(http=GatewayHTTP)``, a documented option), for the gateway's
latency (figures: docs/performance, "Why the code is as it is"):

* a response's head waits for its first body and both leave in one write; a body that
  is complete at once gets a ``content-length`` instead of chunks;
* the gateway's own endpoints (the app's ``direct`` table: exact path and method) are
  served through :func:`.serving.serve` with the request's :class:`_Cycle` as the sink,
  without ASGI's scope and message dicts; a stream's pieces written in one go leave in
  one write. Every other request, and any app without the table, is served through
  ASGI.

What it keeps from uvicorn's behaviour: keep-alive with the configured timeout,
pipelined requests answered in order, ``Expect: 100-continue``, read back-pressure
(reading pauses while more than 64 KiB of body waits for the app), write
back-pressure (``send`` waits while the socket's buffer is full), ``http.disconnect``
once the client is gone, 400 for bytes that are not HTTP/1.1, a 500 when the app
fails before answering, ``limit_concurrency``'s 503, graceful shutdown. What it adds:
the gateway's limits (:mod:`.limits`, read from the app): a whole head within
``header_timeout``, a body byte at least every ``body_timeout``, idle connections
closed after ``keep_alive_timeout``, at most ``max_connections``; what the server
answers itself (400, 408, the cap's 503) is JSON in the door's error shape. What it does
not do: WebSocket or h2c upgrades (never asked of the gateway; served as plain
HTTP/1.1), uvicorn's access log (the gateway writes its own).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from operator import itemgetter
from typing import Any
from urllib.parse import unquote

import httptools
import orjson

from .errors import HttpError, error_body
from .limits import Limits, default_max_connections
from .serving import Request, serve

__all__ = ["GatewayHTTP"]

log = logging.getLogger("uvicorn.error")

_HIGH = 64 * 1024  # unread request body above which reading pauses
_REASONS = {
    200: b"OK", 201: b"Created", 204: b"No Content", 304: b"Not Modified", 400: b"Bad Request",
    401: b"Unauthorized", 403: b"Forbidden", 404: b"Not Found", 405: b"Method Not Allowed",
    408: b"Request Timeout", 409: b"Conflict", 413: b"Content Too Large", 415: b"Unsupported Media Type",
    422: b"Unprocessable Content", 429: b"Too Many Requests", 500: b"Internal Server Error",
    502: b"Bad Gateway", 503: b"Service Unavailable", 504: b"Gateway Timeout",
}
_STATUS = {code: b"HTTP/1.1 %d %s\r\n" % (code, reason) for code, reason in _REASONS.items()}
_ASGI = {"version": "3.0", "spec_version": "2.3"}
_NAME = itemgetter(0)
_TASK_NAME = "modelwire-request"


def _status_line(code: int) -> bytes:
    line = _STATUS.get(code)
    return line if line is not None else b"HTTP/1.1 %d \r\n" % code


def _plain(code: int, text: str, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    body = text.encode()
    head = b"".join(b"%s: %s\r\n" % kv for kv in default_headers)
    return (_status_line(code) + head + b"content-type: text/plain; charset=utf-8\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))


def _json(code: int, text: str, error_code: str, path: bytes, default_headers: list[tuple[bytes, bytes]],
          extra: bytes = b"") -> bytes:
    """An answer the server gives itself (a bad request line, a timeout, the connection
    cap) in the error shape of the door the path names: Anthropic's under /v1/messages,
    else OpenAI's (the Chat Completions and Responses doors share it). Closes."""
    from .request import request_id  # the app's id scheme

    rid = request_id()
    door = "anthropic_messages" if path.startswith(b"/v1/messages") else "chat_completions"
    body = orjson.dumps(error_body(HttpError(code, text, error_code), door, rid))
    head = b"".join(b"%s: %s\r\n" % kv for kv in default_headers)
    return (_status_line(code) + head + b"content-type: application/json\r\nx-request-id: %s\r\n%s"
            b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (rid.encode(), extra, len(body), body))


class _Cycle:
    """One request and its response; for the gateway's own handlers, the
    :class:`~.serving.Sink` its reply is served onto."""

    __slots__ = (
        "body", "chunked", "complete", "continue_", "disconnected", "handler", "head", "head_only",
        "keep_alive", "last_sent", "more_body", "proto", "raw", "scope", "size", "started", "task", "waiter",
    )

    def __init__(self, proto: GatewayHTTP, scope: dict[str, Any] | None, keep_alive: bool, continue_: bool,
                 head_only: bool) -> None:
        self.proto = proto
        self.scope = scope  # None: a direct call of the gateway's handler (``handler``, ``raw``)
        self.handler: Any = None
        self.raw: list[tuple[bytes, bytes]] = []  # the header pairs, for a direct call
        self.task: asyncio.Task[Any] | None = None  # a direct stream's task: a disconnect cancels it
        self.keep_alive = keep_alive
        self.continue_ = continue_  # Expect: 100-continue not yet answered
        self.head_only = head_only
        self.body: list[bytes] = []
        self.size = 0
        self.more_body = True
        self.last_sent = False  # the last http.request message went to the app
        self.disconnected = False
        self.started = False  # http.response.start seen
        self.head: bytes | None = None  # the response head, until the first body goes with it
        self.chunked: bool | None = False  # None: decided by the first body message
        self.complete = False
        self.waiter: asyncio.Future[None] | None = None

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def receive(self) -> dict[str, Any]:
        if self.continue_:
            self.continue_ = False
            if not self.disconnected and not self.started:
                self.proto.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        while True:
            if self.disconnected:
                return {"type": "http.disconnect"}
            if self.body or (not self.more_body and not self.last_sent):
                body = self.body[0] if len(self.body) == 1 else b"".join(self.body)
                self.body = []
                self.size = 0
                more = self.more_body
                self.last_sent = not more
                self.proto.resume_reading()
                return {"type": "http.request", "body": body, "more_body": more}
            if self.last_sent and self.complete:
                return {"type": "http.disconnect"}  # the response is over: nothing more comes
            self.waiter = self.proto.loop.create_future()
            await self.waiter

    async def send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "http.response.body":
            if not self.started or self.complete:
                raise RuntimeError("http.response.body sent before http.response.start or after the end")
            more = message.get("more_body", False)
            self.write(message.get("body", b""), more)
            if more and self.proto.write_paused and not self.disconnected:
                await self.proto.drain()
            return
        if kind == "http.response.start":
            if self.started:
                raise RuntimeError("http.response.start sent twice")
            self.begin(message["status"], None, False, message.get("headers", ()))
            return
        raise RuntimeError(f"unexpected ASGI message {kind!r}")

    # the Sink of a direct call (gateway.serving.serve)
    async def send_body(self, body: bytes, more: bool) -> None:
        if not more:
            self.write(body, False)
            return
        self.write(body, True, soon=True)
        if self.proto.write_paused and not self.disconnected:
            await self.proto.drain()

    def watch(self, task: asyncio.Task[Any] | None) -> None:
        self.task = task  # connection_lost cancels it

    def begin(self, status: int, head: bytes | None, sized: bool, headers: Any = ()) -> None:
        """The response's head, kept until the first body goes with it: ``head``, the header
        lines of a direct call's reply (``sized``: they hold a content-length), or else an
        ASGI app's ``headers`` pairs."""
        self.started = True
        proto = self.proto
        parts = [_status_line(status), proto.default_head()]
        if head is not None:
            parts.append(head)
            self.chunked = False if sized or status < 200 or status in (204, 304) else None
        else:
            self._headers(status, headers, parts)
        if not self.keep_alive or proto.closing:
            self.keep_alive = False
            parts.append(b"connection: close\r\n")
        self.head = b"".join(parts)

    start = begin  # the Sink's name for it: the status and a direct call's header lines

    def write(self, body: bytes, more: bool, soon: bool = False) -> None:
        """A piece of the response's body (the head with the first); the last has
        ``more`` false. The caller waits for ``proto.drain`` while writing is paused.
        ``soon``: written once the task running the app next waits (``GatewayHTTP.pending``),
        together with whatever else it writes before then."""
        proto = self.proto
        head = self.head
        if head is not None:
            self.head = None
            if self.chunked is None:  # no length from the app: decide now
                if more:
                    self.chunked = True
                    head += b"transfer-encoding: chunked\r\n"
                else:
                    self.chunked = False
                    head += b"content-length: %d\r\n" % len(body)
            head += b"\r\n"
        else:
            head = b""
        if self.head_only:
            body = b""
        elif self.chunked and body:
            body = b"%x\r\n%s\r\n" % (len(body), body)
        if not more:
            if self.chunked and not self.head_only:
                body += b"0\r\n\r\n"
            self.complete = True
        data = head + body if head else body
        if self.disconnected or not data:
            pass
        elif soon and more:
            if not proto.pending:
                proto.loop.call_soon(proto.flush)
            proto.pending.append(data)
        elif proto.pending:
            proto.pending.append(data)
            proto.flush()
        else:
            proto.transport.write(data)
        if not more:
            proto.response_done(self)

    def _headers(self, status: int, headers: Any, parts: list[bytes]) -> None:
        """The app's header pairs into ``parts``; the framing (length or chunks) is ours."""
        length = None
        for name, value in headers:
            low = name.lower()
            if low == b"content-length":
                length = value
                continue
            if low == b"transfer-encoding":
                continue  # framing is ours
            elif low == b"connection" and value.lower() == b"close":
                self.keep_alive = False
                continue
            parts.append(b"%s: %s\r\n" % (name, value))
        if status < 200 or status in (204, 304):
            self.chunked = False
        elif length is not None:
            parts.append(b"content-length: %s\r\n" % length)
            self.chunked = False
        else:
            self.chunked = None


class GatewayHTTP(asyncio.Protocol):
    """One client connection (uvicorn calls it with its config and server state)."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        if not config.loaded:
            config.load()
        self.app = config.loaded_app
        # the gateway's own endpoints, (path, method) -> handler(Request) -> Reply
        # (gateway.app.FrontDoors.direct), called without ASGI's scope and messages; not when
        # uvicorn wrapped the app (its middlewares must see every request) or under a root path
        direct = getattr(self.app, "direct", None)
        self.direct: dict[tuple[str, str], Any] | None = direct if direct and not config.root_path else None
        self._default_src: Any = None  # server_state.default_headers, as last formatted
        self._default_head = b""
        # a stream's pieces written by the app in one go (its last event, the end of the SSE
        # stream, the chunked terminator) leave in one write: flushed when the app waits
        self.pending: list[bytes] = []
        self.loop = _loop or asyncio.get_event_loop()
        self.state = server_state
        self.app_state = app_state
        self.root_path: str = config.root_path
        # the gateway's limits (gateway.header_timeout...); any other app: uvicorn's
        # keep-alive timeout and the defaults
        limits = _limits_of(self.app)
        if limits is None:
            limits = Limits(max_connections=default_max_connections(), keep_alive_timeout=config.timeout_keep_alive)
        self.limits = limits
        self.observe = _metered(self.app)  # the open-connections gauge (None: metrics off)
        self.keep_alive_s: float = limits.keep_alive_timeout
        self.limit: int | None = config.limit_concurrency
        self.parser = httptools.HttpRequestParser(self)
        self.transport: Any = None
        self.server: Any = None
        self.client: Any = None
        self.scheme = "http"
        self.cycle: _Cycle | None = None  # the request being answered
        self.waiting: deque[_Cycle] = deque()  # pipelined requests, in order
        # keep-alive: one timer per connection, re-armed when it fires rather than
        # cancelled and made again per request
        self.timer: Any = None
        self.idle_since: float | None = None  # when the last response ended; None: busy
        self.head_since: float | None = None  # when a request's head began to arrive
        self.last_read = 0.0  # when the last bytes arrived (a body's timeout counts from it)
        self.read_paused = False
        self.write_paused = False
        self.drained: asyncio.Future[None] | None = None
        self.closing = False
        self.url = b""
        self.path = b""  # the last request's path (which door's shape an error takes)
        self.headers: list[tuple[bytes, bytes]] = []
        self.parsing: _Cycle | None = None  # the request whose bytes are arriving

    # ----------------------------------------------------------- connection
    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        self.state.connections.add(self)
        if self.observe is not None:
            self.observe.connection_opened()
        self.transport = transport
        self.server = _addr(transport.get_extra_info("sockname"))
        self.client = _addr(transport.get_extra_info("peername"))
        if transport.get_extra_info("sslcontext") is not None:
            self.scheme = "https"
        if len(self.state.connections) > self.limits.max_connections:
            self._over_capacity()
            return
        self.idle_since = self.last_read = self.loop.time()
        self.timer = self.loop.call_later(self.keep_alive_s, self._on_timer)

    def _over_capacity(self) -> None:
        """One connection past ``gateway.max_connections``: a 503 and a close, before
        reading anything (the descriptors left are the upstreams')."""
        log.warning("connection refused: %d open, gateway.max_connections is %d",
                    len(self.state.connections) - 1, self.limits.max_connections)
        self.transport.write(_json(
            503, f"the gateway has {self.limits.max_connections} connections open, its limit "
            "(gateway.max_connections); retry shortly", "too_many_connections", b"",
            self.state.default_headers, b"retry-after: 1\r\n"))
        self.closing = True
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.connections.discard(self)
        if self.observe is not None:
            self.observe.connection_closed()
        self.closing = True
        self.pending.clear()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        for cycle in (self.cycle, self.parsing, *self.waiting):
            if cycle is not None and not cycle.complete:
                cycle.disconnected = True
                cycle.wake()
                if cycle.task is not None:
                    cycle.task.cancel("the client disconnected")
        self.resume_writing()

    def eof_received(self) -> None:
        return None  # close once the current response is written (connection_lost follows)

    def data_received(self, data: bytes) -> None:
        self.idle_since = None  # bytes came: not idle until the next response ends
        now = self.last_read = self.loop.time()
        if self.parsing is None and self.head_since is None:
            self.head_since = now  # a new request's head: gateway.header_timeout from here
            self._arm(now + self.limits.header_timeout)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass  # an Upgrade the gateway does not do (h2c, websocket): plain HTTP/1.1 it is
        except httptools.HttpParserError as exc:
            self._reject(400, f"Invalid HTTP request received: {exc}", "invalid_http")

    def _reject(self, code: int, text: str, error_code: str) -> None:
        """An error the server answers itself, in the door's JSON shape, then a close."""
        if self.cycle is None or not self.cycle.started:
            self.transport.write(_json(code, text, error_code, self.url or self._path(), self.state.default_headers))
        self.closing = True
        self.transport.close()

    def _path(self) -> bytes:
        return self.path  # the last request's: its door frames the error

    def _arm(self, due: float) -> None:
        """The connection's one timer, moved earlier when ``due`` comes before it."""
        timer = self.timer
        if timer is not None:
            if timer.when() <= due:
                return
            timer.cancel()
        self.timer = self.loop.call_at(due, self._on_timer)

    def _on_timer(self) -> None:
        """Which deadline applies now, and whether it passed: an idle connection's
        keep-alive, a head's ``header_timeout`` (whole), a body's ``body_timeout``
        (since its last byte). While the app answers, none: the answer re-arms it."""
        self.timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        parsing, limits = self.parsing, self.limits
        if parsing is not None:  # a body still arriving (perhaps for an answer already given)
            if self.read_paused and not parsing.complete:  # the app has not read what came
                self._arm(now + limits.body_timeout)
                return
            due = self.last_read + limits.body_timeout
            if now < due:
                self._arm(due)
            elif parsing.complete:
                self.transport.close()  # answered early (a 404, a 413): nothing more to say
            else:
                self._timed_out(f"no byte of the request body for {limits.body_timeout:g} s "
                                "(gateway.body_timeout)")
        elif self.cycle is not None:
            return  # busy: response_done re-arms
        elif self.head_since is not None:
            due = self.head_since + limits.header_timeout
            if now >= due:
                self._timed_out(f"the request head did not arrive within {limits.header_timeout:g} s "
                                "(gateway.header_timeout)")
            else:
                self._arm(due)
        elif self.idle_since is not None:
            due = self.idle_since + self.keep_alive_s
            if now >= due:
                self.transport.close()
            else:
                self._arm(due)

    def _timed_out(self, text: str) -> None:
        log.info("request timed out: %s", text)
        if self.cycle is not None:
            self.cycle.disconnected = True  # its app sees the client gone, not a 500 to answer
            self.cycle.wake()
        self._reject(408, text, "request_timeout")

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: idle connections close now, busy ones after
        their response (which then says ``connection: close``)."""
        self.closing = True
        if self.cycle is None:
            self.transport.close()
        else:
            self.cycle.keep_alive = False

    # ---------------------------------------------------------------- flow
    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    async def drain(self) -> None:
        if self.drained is None:
            self.drained = self.loop.create_future()
        await self.drained

    def resume_reading(self) -> None:
        if self.read_paused and not self.waiting:
            self.read_paused = False
            self.transport.resume_reading()

    # ------------------------------------------------------------- httptools
    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))  # Expect is looked for once, at the end

    def on_headers_complete(self) -> None:
        parser = self.parser
        url = self.url
        if url[:1] == b"/":
            raw_path, _, query = url.partition(b"?")
        else:  # absolute form (a proxy-style request line)
            parsed = httptools.parse_url(url)
            raw_path, query = parsed.path or b"/", parsed.query or b""
        self.path = raw_path
        path = raw_path.decode("latin-1")
        if "%" in path:
            path = unquote(path)
        version = parser.get_http_version()
        method = parser.get_method().decode("ascii")
        headers = self.headers
        keep_alive = version != "1.0" and parser.should_keep_alive() and not self.closing
        # the values only when an Expect is there
        continue_ = b"expect" in map(_NAME, headers) and any(
            value.lower() == b"100-continue" for name, value in headers if name == b"expect")
        handler = self.direct.get((path, method)) if self.direct is not None else None
        if handler is None:
            scope = {
                "type": "http", "asgi": _ASGI, "http_version": version, "server": self.server,
                "client": self.client, "scheme": self.scheme, "method": method,
                "root_path": self.root_path, "path": self.root_path + path,
                "raw_path": self.root_path.encode() + raw_path, "query_string": query,
                "headers": headers, "state": self.app_state.copy(),
            }
            cycle = self.parsing = _Cycle(self, scope, keep_alive, continue_, method == "HEAD")
        else:
            cycle = self.parsing = _Cycle(self, None, keep_alive, continue_, False)
            cycle.handler = handler
            cycle.raw = headers
        # ready for the next message (here, not in an on_message_begin: one callback less)
        self.url = b""
        self.headers = []
        self.head_since = None
        self._arm(self.last_read + self.limits.body_timeout)  # moved only if sooner
        if self.cycle is None:
            self._start(cycle)
        else:  # pipelined: answered after the ones before it
            self.waiting.append(cycle)
            if not self.read_paused:
                self.read_paused = True
                self.transport.pause_reading()

    def on_body(self, body: bytes) -> None:
        cycle = self.parsing
        if cycle is None or cycle.complete or cycle.disconnected:
            return
        cycle.body.append(body)
        cycle.size += len(body)
        if cycle.size > _HIGH and not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()
        cycle.wake()

    def on_message_complete(self) -> None:
        cycle, self.parsing = self.parsing, None
        if cycle is not None:
            cycle.more_body = False
            cycle.wake()

    # ------------------------------------------------------------- the app
    def _start(self, cycle: _Cycle) -> None:
        self.cycle = cycle
        if self.limit is not None and (len(self.state.connections) > self.limit or len(self.state.tasks) >= self.limit):
            task = self.loop.create_task(self._unavailable(cycle))
        elif self.loop.get_task_factory() is None:
            # what create_task would make, named: an unnamed one formats "Task-<n>" per request
            task = asyncio.Task(self._run(cycle), loop=self.loop, name=_TASK_NAME)
        else:
            task = self.loop.create_task(self._run(cycle))
        self.state.tasks.add(task)
        task.add_done_callback(self.state.tasks.discard)

    async def _unavailable(self, cycle: _Cycle) -> None:
        log.warning("Exceeded concurrency limit.")
        await cycle.send({"type": "http.response.start", "status": 503,
                          "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
        await cycle.send({"type": "http.response.body", "body": b"Service Unavailable"})

    async def _run(self, cycle: _Cycle) -> None:
        try:
            if cycle.handler is None:
                await self.app(cycle.scope, cycle.receive, cycle.send)
            else:
                await self._direct(cycle)
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                log.error("Exception in ASGI application", exc_info=exc)
            self._failed(cycle)
            if not isinstance(exc, Exception):
                raise
            return
        if not cycle.complete:
            if cycle.started:
                log.error("ASGI callable returned without completing response.")
            self._failed(cycle)

    async def _direct(self, cycle: _Cycle) -> None:
        """The gateway's handler, served onto the cycle (no scope, no message dicts)."""
        await serve(cycle.handler, Request(None, cycle.receive, cycle.raw), cycle)

    def flush(self) -> None:
        """Write what :meth:`_Cycle.write` held (``soon``), in one ``write``."""
        pending = self.pending
        if pending:
            data = pending[0] if len(pending) == 1 else b"".join(pending)
            pending.clear()
            if not self.transport.is_closing():
                self.transport.write(data)

    def default_head(self) -> bytes:
        """uvicorn's default header lines (date, server), formatted once per change."""
        src = self.state.default_headers
        if src is not self._default_src:
            self._default_src = src
            self._default_head = b"".join([b"%s: %s\r\n" % kv for kv in src])
        return self._default_head

    def _failed(self, cycle: _Cycle) -> None:
        if cycle.complete:
            return
        if not cycle.started and not cycle.disconnected:
            self.transport.write(_plain(500, "Internal Server Error", self.state.default_headers))
        cycle.complete = True
        cycle.keep_alive = False
        self.response_done(cycle)

    def response_done(self, cycle: _Cycle) -> None:
        if self.pending:  # an answer cut short (the app failed mid-stream): what it wrote first
            self.flush()
        self.state.total_requests += 1
        cycle.wake()  # a receive() waiting for the end returns http.disconnect
        if self.cycle is cycle:
            self.cycle = None
        # an answer given before the whole request body arrived (a 413) keeps the
        # connection: llhttp knows where that body ends and the rest is dropped unread
        if not cycle.keep_alive:
            self.closing = True
            self.transport.close()
            return
        if self.transport.is_closing():
            return
        if self.waiting:
            self._start(self.waiting.popleft())
            if not self.waiting:
                self.resume_reading()
            return
        self.resume_reading()
        self.idle_since = self.loop.time()
        if self.timer is None:
            self.timer = self.loop.call_later(self.keep_alive_s, self._on_timer)


def _metered(app: Any) -> Any:
    """The gateway's observer when its metrics are on, else ``None`` (off, or not the
    gateway's app)."""
    gateway = getattr(getattr(app, "state", None), "gateway", None)
    observe = getattr(gateway, "observe", None)
    return observe if getattr(observe, "metrics", None) is not None else None


def _limits_of(app: Any) -> Limits | None:
    """The gateway's limits, under whatever uvicorn wrapped around it (its proxy-headers
    middleware keeps the app as ``.app``)."""
    for _ in range(4):  # uvicorn stacks at most a few middlewares
        limits = getattr(app, "limits", None)
        if isinstance(limits, Limits):
            return limits
        app = getattr(app, "app", None)
        if app is None:
            return None
    return None


def _addr(info: Any) -> tuple[str, int] | None:
    if isinstance(info, tuple) and len(info) >= 2:
        return str(info[0]), int(info[1])
    return None
