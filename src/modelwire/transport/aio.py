"""The async transport: :class:`AsyncHTTPTransport`, direct origins through
:mod:`modelwire.transport.h1`, origins behind a proxy through aiohttp."""


from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self

from ..errors import ConnectError, ReadTimeoutError, StreamInterruptedError, TransportError, redact
from .base import (
    _PROXIED,
    AsyncStreamResponse,
    Response,
    Timeouts,
    _join,
    _ssl_context,
    _where,
    env_proxy,
)
from .headers import header_lines

if TYPE_CHECKING:
    import asyncio

    from ..transport.h1 import H1Pool, Origin
    from ..wire import EncodedRequest
    from .h1 import H1Closed

__all__ = ["AsyncHTTPTransport"]


# ----------------------------------------------------------------------- aiohttp
@contextlib.contextmanager
def _aiohttp_errors(where: str, started: bool = False) -> Iterator[None]:
    """The one seam where aiohttp and socket exceptions become modelwire errors.

    ``started``: the response headers arrived, so a drop is mid-stream.
    """
    import aiohttp

    try:
        yield
    except aiohttp.ConnectionTimeoutError as exc:  # before the generic timeout: it subclasses it
        raise ConnectError(f"timed out connecting: {where}") from exc
    except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
        raise ReadTimeoutError(f"no data within the read timeout: {where}") from exc
    except aiohttp.ClientConnectorError as exc:
        raise ConnectError(f"cannot connect: {where}: {exc.os_error}") from exc
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError) as exc:
        when = "mid-stream" if started else "before the response"
        raise StreamInterruptedError(f"connection closed {when}: {where}") from exc
    except (aiohttp.ClientOSError, ConnectionError) as exc:
        when = "mid-stream" if started else "before the response"
        raise StreamInterruptedError(f"connection lost {when}: {where}: {exc}") from exc
    except aiohttp.ClientError as exc:
        raise TransportError(f"{type(exc).__name__}: {where}: {exc}") from exc


class _AiohttpStream:
    """A streaming aiohttp response: chunks as they arrive, errors mapped."""

    __slots__ = ("_resp", "_where", "headers", "status")

    def __init__(self, resp: Any, where: str) -> None:
        self._resp = resp
        self._where = where
        self.status: int = resp.status
        self.headers: Mapping[str, str] = {k.lower(): v for k, v in resp.headers.items()}

    async def read(self) -> bytes:
        with _aiohttp_errors(self._where, started=True):
            return await self._resp.read()

    async def aiter_chunks(self) -> AsyncIterator[bytes]:
        content = self._resp.content
        with _aiohttp_errors(self._where, started=True):
            while True:
                chunk = await content.readany()
                if not chunk:
                    return
                yield chunk

    def close(self) -> None:
        """Drop the connection now (a stream cut short is never returned to the pool)."""
        self._resp.close()


class AsyncHTTPTransport:
    """The async transport: direct origins through :mod:`modelwire.transport.h1` (HTTP/1.1 on
    asyncio + httptools), origins behind an environment proxy through aiohttp.

    Why two: aiohttp costs the gateway more latency and CPU per request than its whole
    budget (bench/gateway.py's floor columns); but it knows proxies (CONNECT tunnels,
    proxy auth), so proxied origins keep it. Connections and sessions belong to the event loop that made them,
    and a library client may be used from ``asyncio.run`` after ``asyncio.run``; so
    pools and sessions are kept per loop (weakly: a finished loop frees its entry).
    """

    def __init__(self, *, limit_per_host: int = 100, trust_env: bool = True) -> None:
        # asyncio is imported here, not at module level: the sync Client imports this
        # module too and never needs asyncio (a long import)
        import asyncio

        from . import h1 as _h1

        self._h1 = _h1
        self._running_loop = asyncio.get_running_loop
        self._limit_per_host = limit_per_host
        self._trust_env = trust_env
        self._proxies: dict[str, str | None] = {}  # origin -> proxy URL from the environment
        self._origins: dict[str, tuple[Any, str]] = {}  # base URL -> (Origin, path prefix)
        # base URL -> (pool, path prefix) of a directly reached origin in the loop that
        # used it last, or _PROXIED: one lookup per request instead of six calls
        self._routes: dict[str, Any] = {}
        # the environment's proxy variables, read once now as httpx.Client does, not on
        # the first request
        self._env_proxies: dict[str, str] | None = None
        if trust_env:
            import urllib.request

            self._env_proxies = urllib.request.getproxies_environment()
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        _ssl_context()  # the CA certificates load now

    # ------------------------------------------------------------- direct (h1)
    def _origin(self, base_url: str) -> tuple[Any, str]:
        found = self._origins.get(base_url)
        if found is None:
            from urllib.parse import urlsplit

            parts = urlsplit(base_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise TransportError(f"not an http(s) base URL: {redact(base_url)}")
            found = (self._h1.Origin(parts.scheme, parts.hostname, parts.port), parts.path.rstrip("/"))
            self._origins[base_url] = found
        return found

    def _route(self, base_url: str) -> Any:
        """``(pool, path prefix)`` for a base URL reached directly from the running loop,
        or ``_PROXIED`` when the environment routes its origin through a proxy."""
        route = self._routes.get(base_url)
        loop = self._running_loop()
        if route is None or (route is not _PROXIED and route[0]._loop is not loop):
            if self._trust_env and self._proxy(_join(base_url, "/")) is not None:
                route = _PROXIED
            else:
                origin, prefix = self._origin(base_url)
                route = (self._pool(origin), prefix)
            self._routes[base_url] = route
        return route

    def _pool(self, origin: Origin) -> H1Pool:
        loop = self._running_loop()
        pools = self._pools.get(loop)
        if pools is None:
            pools = self._pools[loop] = {}
        pool = pools.get(origin.key)
        if pool is None:
            pool = pools[origin.key] = self._h1.H1Pool(loop, origin, self._limit_per_host, _ssl_context())
        return pool

    @staticmethod
    def _message(request: EncodedRequest, origin: Origin, prefix: str) -> bytes:
        """Request line, headers and body as one buffer: one ``write``, one segment.

        Framing is ours: a caller's ``content-length`` / ``transfer-encoding`` is
        replaced by the body's real length; a caller's ``host`` replaces the origin's."""
        body = request.body
        headers = request.headers
        # the names lower-cased at once, to find the caller's framing headers
        given = set("\n".join(headers).lower().split("\n")) if headers else set()
        if not given.isdisjoint(_FRAMING):
            headers = {k: v for k, v in headers.items() if k.lower() not in _FRAMING}
            given -= _FRAMING
        lines = [f"{request.method} {prefix}{request.path} HTTP/1.1\r\n", header_lines(headers)]
        if "host" not in given:
            lines.append(f"host: {origin.host_header}\r\n")
        if "user-agent" not in given:
            lines.append(_USER_AGENT)
        if "accept-encoding" not in given:
            lines.append("accept-encoding: gzip, deflate\r\n")
        if body or request.method in ("POST", "PUT", "PATCH"):
            lines.append(f"content-length: {len(body)}\r\n")
        lines.append("\r\n")
        head = "".join(lines)
        # a CR or LF inside a header name or value (or the path) would smuggle a header
        # or a request: each line holds exactly one of each (the caller's headers are
        # one item of `lines` holding len(headers) lines)
        breaks = len(lines) - 1 + len(headers)
        if head.count("\n") != breaks or head.count("\r") != breaks:
            raise TransportError("a request header name or value contains a line break")
        return head.encode() + body

    async def _exchange(self, request: EncodedRequest, route: Any, wait: float, timeouts: Timeouts,
                        where: str) -> tuple[Any, Any]:
        """Send the request; return (pool, connection) once the response head is in."""
        pool, prefix = route
        data = self._message(request, pool._origin, prefix)
        h1 = self._h1
        for attempt in (0, 1):
            conn = pool.take_idle()  # no coroutine when a kept-alive one is free
            reused = conn is not None
            try:
                if conn is None:
                    conn, reused = await pool.acquire(timeouts.connect)
            except TimeoutError as exc:
                raise ConnectError(f"timed out connecting: {where}") from exc
            except OSError as exc:  # refused, unreachable, DNS, TLS (ssl.SSLError is an OSError)
                raise ConnectError(f"cannot connect: {where}: {exc}") from exc
            conn.begin(data)
            try:
                await conn.head(wait)
            except h1.H1Closed as exc:
                pool.release(conn)
                # a kept-alive connection the server had already dropped: the request
                # was never read, so it goes once more on a new connection
                if reused and not exc.any_bytes and attempt == 0:
                    continue
                raise _closed_error(exc, where) from exc
            except BaseException as exc:
                pool.release(conn)
                err = _h1_error(exc, where)
                if err is None:
                    raise
                raise err from exc
            return pool, conn
        raise AssertionError("unreachable")  # pragma: no cover

    async def send(self, request: EncodedRequest, base_url: str, timeouts: Timeouts) -> Response:
        route = self._route(base_url)
        where = f"{request.method} {base_url.rstrip('/')}{request.path}"  # for errors: _where(_join())
        if route is _PROXIED:
            return await self._aio_send(request, _join(base_url, request.path), where, timeouts)
        if timeouts.total is None:
            return await self._send(request, route, timeouts, where)
        import asyncio

        try:
            async with asyncio.timeout(timeouts.total):
                return await self._send(request, route, timeouts, where)
        except TimeoutError as exc:
            raise _deadline_error(timeouts, where) from exc

    async def _send(self, request: EncodedRequest, route: Any, timeouts: Timeouts,
                    where: str) -> Response:
        pool, conn = await self._exchange(request, route, timeouts.read, timeouts, where)
        try:
            headers = conn.decoded_headers()
            parts: list[bytes] = []
            while chunk := await conn.next_chunk(timeouts.read):
                parts.append(chunk)
        except BaseException as exc:
            pool.release(conn)
            err = _h1_error(exc, where, started=True)
            if err is None:
                raise
            raise err from exc
        pool.release(conn)
        return Response(conn.status, headers, parts[0] if len(parts) == 1 else b"".join(parts))

    def stream(
        self, request: EncodedRequest, base_url: str, timeouts: Timeouts
    ) -> contextlib.AbstractAsyncContextManager[AsyncStreamResponse]:
        url = _join(base_url, request.path)
        where = _where(request.method, url)
        route = self._route(base_url)
        if route is _PROXIED:
            return self._aio_stream(request, url, where, timeouts)
        return _H1Stream(self, request, route, timeouts, where)

    def warm(self, request: EncodedRequest, base_url: str) -> None:
        """Pay the per-origin first-use work now, offline (pools and connections still
        wait for a running loop and the first request): the origin's proxy decision,
        the base URL's parse, the request head's formatting, and the ``idna`` codec
        lookup that resolving a host name makes (``getaddrinfo`` in a worker thread)."""
        import codecs

        codecs.lookup("idna")
        url = _join(base_url, request.path)
        if self._proxy(url) is not None:
            import aiohttp  # noqa: F401  (proxied origins go through it)
            import yarl

            yarl.URL(url)
            return
        origin, prefix = self._origin(base_url)
        self._message(request, origin, prefix)

    async def aclose(self) -> None:
        """Close this loop's connections and session (other, finished loops' are dropped)."""
        try:
            loop = self._running_loop()
        except RuntimeError:
            return
        for pool in (self._pools.pop(loop, None) or {}).values():
            pool.close()
        for base_url, route in list(self._routes.items()):
            if route is not _PROXIED and route[0]._loop is loop:
                del self._routes[base_url]
        session = self._sessions.pop(loop, None)
        if session is not None and not session.closed:
            await session.close()

    # ------------------------------------------------------------ proxied (aiohttp)
    def _session(self) -> Any:
        loop = self._running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            import aiohttp

            connector = aiohttp.TCPConnector(
                ssl=_ssl_context(), limit=0, limit_per_host=self._limit_per_host
            )
            # Proxies come from the environment like httpx's (HTTPS_PROXY, NO_PROXY...),
            # but resolved once per origin here (_proxy): aiohttp's trust_env=True looks
            # them up (and ~/.netrc) in a worker thread on every request.
            session = aiohttp.ClientSession(
                connector=connector, trust_env=False, auto_decompress=True
            )
            self._sessions[loop] = session
        return session

    def _proxy(self, url: str) -> str | None:
        origin = url.split("/", 3)
        key = "/".join(origin[:3])
        if key not in self._proxies:
            self._proxies[key] = env_proxy(key, self._env_proxies) if self._trust_env else None
        return self._proxies[key]

    @staticmethod
    def _timeout(timeouts: Timeouts, gap: float) -> Any:
        import aiohttp

        return aiohttp.ClientTimeout(
            total=timeouts.total, sock_connect=timeouts.connect, sock_read=gap
        )

    async def _aio_send(self, request: EncodedRequest, url: str, where: str,
                        timeouts: Timeouts) -> Response:
        session = self._session()
        with _aiohttp_errors(where):
            resp = await session.request(
                request.method, url, data=request.body, headers=request.headers,
                timeout=self._timeout(timeouts, timeouts.read), proxy=self._proxy(url),
            )
        try:
            with _aiohttp_errors(where, started=True):
                body = await resp.read()
        finally:
            resp.release()
        return Response(resp.status, {k.lower(): v for k, v in resp.headers.items()}, body)

    @contextlib.asynccontextmanager
    async def _aio_stream(
        self, request: EncodedRequest, url: str, where: str, timeouts: Timeouts
    ) -> AsyncIterator[_AiohttpStream]:
        session = self._session()
        with _aiohttp_errors(where):
            resp = await session.request(
                request.method, url, data=request.body, headers=request.headers,
                timeout=self._timeout(timeouts, timeouts.stream_gap), proxy=self._proxy(url),
            )
        try:
            yield _AiohttpStream(resp, where)
        finally:
            # close(), not release(): a stream left early (interrupt, cancellation,
            # error) must not hand a half-read connection back to the pool. After
            # a body read to EOF, aiohttp already released it and this is a no-op.
            resp.close()


def _user_agent() -> str:
    from .. import __version__

    return f"user-agent: modelwire/{__version__}\r\n"


_USER_AGENT = _user_agent()
_FRAMING = frozenset({"content-length", "transfer-encoding"})


def _deadline_error(timeouts: Timeouts, where: str) -> ReadTimeoutError:
    return ReadTimeoutError(f"the total deadline of {timeouts.total:g} s passed: {where}")


def _closed_error(exc: H1Closed, where: str, started: bool = False) -> StreamInterruptedError:
    when = "mid-stream" if exc.started or started else "before the response"
    return StreamInterruptedError(f"connection closed {when}: {where}")


def _h1_error(exc: BaseException, where: str, started: bool = False) -> TransportError | None:
    """The one seam where :mod:`modelwire.transport.h1`'s failures become modelwire errors
    (``None``: not a transport failure, e.g. a cancellation, to be re-raised as is)."""
    from . import h1 as _h1

    if isinstance(exc, _h1.H1Closed):
        return _closed_error(exc, where, started)
    if isinstance(exc, TimeoutError):
        return ReadTimeoutError(f"no data within the read timeout: {where}")
    if isinstance(exc, _h1.H1Error):
        return TransportError(f"{exc}: {where}")
    if isinstance(exc, OSError):
        when = "mid-stream" if started else "before the response"
        return StreamInterruptedError(f"connection lost {when}: {where}: {exc}")
    if isinstance(exc, TransportError):
        return exc
    return None


class _H1Stream:
    """``async with transport.stream(...) as resp``: the response head on entry, its body
    chunk by chunk, the connection back to the pool on exit (closed if the body was not
    read to its end: a stream cut short never goes back)."""

    __slots__ = ("_conn", "_deadline", "_pool", "_request", "_route", "_transport", "_where",
                 "headers", "status", "timeouts")

    def __init__(self, transport: AsyncHTTPTransport, request: EncodedRequest, route: Any,
                 timeouts: Timeouts, where: str) -> None:
        self._transport = transport
        self._request = request
        self._route = route
        self.timeouts = timeouts
        self._where = where
        self._conn: Any = None
        self._pool: Any = None
        self._deadline: float | None = None
        self.status = 0
        self.headers: Mapping[str, str] = {}

    async def __aenter__(self) -> Self:
        timeouts = self.timeouts
        gap = timeouts.stream_gap
        if timeouts.total is not None:
            self._deadline = self._transport._running_loop().time() + timeouts.total
            gap = min(gap, timeouts.total)
        self._pool, self._conn = await self._transport._exchange(
            self._request, self._route, gap, timeouts, self._where)
        self.status = self._conn.status
        self.headers = self._conn.decoded_headers()
        return self

    async def __aexit__(self, *exc: object) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool.release(conn)

    def _gap(self) -> float:
        gap = self.timeouts.stream_gap
        if self._deadline is None:
            return gap
        left = self._deadline - self._transport._running_loop().time()
        if left <= 0:
            raise _deadline_error(self.timeouts, self._where)
        return min(gap, left)

    async def read(self) -> bytes:
        parts = [chunk async for chunk in self.aiter_chunks()]
        return b"".join(parts)

    async def aiter_chunks(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            return
        while True:
            try:
                chunk = await conn.next_chunk(self._gap())
            except BaseException as exc:
                conn.close()
                err = _h1_error(exc, self._where, started=True)
                if err is None:
                    raise
                if isinstance(exc, TimeoutError) and self._deadline is not None and (
                        self._transport._running_loop().time() >= self._deadline):
                    err = _deadline_error(self.timeouts, self._where)
                if err is exc:
                    raise
                raise err from exc
            if not chunk:
                return
            yield chunk

    def close(self) -> None:
        """Drop the connection now (a stream cut short is never returned to the pool)."""
        if self._conn is not None:
            self._conn.close()
