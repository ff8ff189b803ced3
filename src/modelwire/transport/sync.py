"""The sync transport: :class:`SyncHTTPTransport` on httpx (the ``Client``'s)."""


from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ConnectError, ReadTimeoutError, StreamInterruptedError, TransportError
from .base import Response, Timeouts, _join, _ssl_context, _where

if TYPE_CHECKING:
    from ..wire import EncodedRequest

__all__ = ["SyncHTTPTransport"]


# ------------------------------------------------------------------------- httpx
@contextlib.contextmanager
def _httpx_errors(where: str, started: bool = False) -> Iterator[None]:
    """The one seam where httpx exceptions become modelwire errors."""
    import httpx

    try:
        yield
    except httpx.ConnectTimeout as exc:
        raise ConnectError(f"timed out connecting: {where}") from exc
    except httpx.ConnectError as exc:
        raise ConnectError(f"cannot connect: {where}: {exc}") from exc
    except httpx.TimeoutException as exc:  # read, write and pool timeouts
        raise ReadTimeoutError(f"no data within the read timeout: {where}") from exc
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
        when = "mid-stream" if started else "before the response"
        raise StreamInterruptedError(f"connection closed {when}: {where}: {exc}") from exc
    except httpx.HTTPError as exc:
        raise TransportError(f"{type(exc).__name__}: {where}: {exc}") from exc


class _HttpxStream:
    __slots__ = ("_deadline", "_resp", "_where", "headers", "status")

    def __init__(self, resp: Any, where: str, deadline: float | None) -> None:
        self._resp = resp
        self._where = where
        self._deadline = deadline
        self.status: int = resp.status_code
        self.headers = dict(resp.headers.items())  # httpx lowercases already

    def read(self) -> bytes:
        with _httpx_errors(self._where, started=True):
            return self._resp.read()

    def iter_chunks(self) -> Iterator[bytes]:
        deadline = self._deadline
        with _httpx_errors(self._where, started=True):
            for chunk in self._resp.iter_bytes():
                # httpx has no whole-request deadline: check it per chunk
                if deadline is not None and time.monotonic() > deadline:
                    raise ReadTimeoutError(f"total deadline passed: {self._where}")
                yield chunk

    def close(self) -> None:
        # Closing the response alone does not wake a thread blocked reading its socket
        # (Linux keeps recv() waiting): shut the socket down first, so an abort from
        # another thread cuts a stalled stream at once.
        stream = self._resp.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            import socket

            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed
        self._resp.close()


def _loopback_backend_class() -> Any:
    import httpcore

    class LoopbackBackend(httpcore.SyncBackend):
        """A network backend for the offline dry run: every "connection" goes to a
        listener of this process on 127.0.0.1, and the canned answer is written on the
        accepted side before the request is sent, so one thread suffices. The real
        first request then finds the socket path warm: ``socket.create_connection``,
        httpcore's stream reads and writes, timeouts set on a socket. Where binding a
        loopback socket is not allowed, the answer comes from memory instead."""

        def __init__(self, wire: bytes) -> None:
            self._wire = wire
            self._held: list[Any] = []

        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None, socket_options: Any = None) -> Any:
            import socket

            try:
                with socket.socket() as listener:
                    listener.bind(("127.0.0.1", 0))
                    listener.listen(1)
                    stream = super().connect_tcp("127.0.0.1", listener.getsockname()[1], timeout,
                                                 local_address, socket_options)
                    listener.settimeout(timeout)
                    server, _ = listener.accept()  # loopback: connect() completed the handshake
            except OSError:
                return httpcore.MockBackend([self._wire]).connect_tcp(host, port)
            self._held.append(server)  # closed after the exchange (unread bytes would reset it)
            server.sendall(self._wire)
            return stream

        def prime(self) -> bool:
            """The answer for the next request on the kept-alive connection (False: the
            connection is a memory one, which answers once)."""
            if not self._held:
                return False
            self._held[-1].sendall(self._wire)
            return True

        def close(self) -> None:
            for server in self._held:
                server.close()
            self._held.clear()

    return LoopbackBackend


def _loopback_backend(wire: bytes) -> Any:
    """A LoopbackBackend (the class is made on first use: httpcore loads lazily)."""
    global _LOOPBACK
    if _LOOPBACK is None:
        _LOOPBACK = _loopback_backend_class()
    return _LOOPBACK(wire)


_LOOPBACK: Any = None


class SyncHTTPTransport:
    """httpx transport for the sync ``Client``; one ``httpx.Client`` (its pool) per transport."""

    def __init__(self, *, trust_env: bool = True) -> None:
        self._trust_env = trust_env
        self._client: Any = None
        self._urls: dict[str, Any] = {}  # URL string -> httpx.URL (see _url)
        self._http()  # import httpx and load CA certificates now, not on the first request

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.Client(
                verify=_ssl_context(), trust_env=self._trust_env, timeout=None,
                limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
            )
        return self._client

    def warm(self, request: EncodedRequest, base_url: str, timeouts: Timeouts,
             answer: bytes, passes: int = 1) -> bytes:
        """Send ``request`` ``passes`` times through httpx, httpcore and h11 to a
        listener of this process on 127.0.0.1 that answers with ``answer`` (a JSON
        body), on one kept-alive connection; return the body received.

        The upstream is never contacted: the first real request still connects. What
        this pays in advance is the stack's first-use work: the socket path
        (``socket.create_connection``, reads and writes with timeouts), httpx's URL
        and cookie handling (``urlsplit`` caches the URL), h11's first exchange (it
        builds ``typing.Union`` casts at run time), httpcore's lazily built exception
        table, logger level caches, the ``idna`` codec lookup ``socket.getaddrinfo``
        makes for host names, and with ``passes`` > 1 the interpreter's specialization of
        the path (see ``Client.warm``). Only public APIs:
        a throwaway ``httpx.Client`` whose transport hands the request to an
        ``httpcore.ConnectionPool`` on a ``SyncBackend`` subclass; where binding a
        loopback socket is not allowed, one pass answered from memory.
        """
        import codecs

        import httpcore
        import httpx

        codecs.lookup("idna")  # socket.getaddrinfo encodes host names with it
        wire = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                + str(len(answer)).encode() + b"\r\n\r\n" + answer)
        backend = _loopback_backend(wire)
        pool = httpcore.ConnectionPool(network_backend=backend)

        def offline(req: Any) -> Any:
            got = pool.request(req.method, str(req.url), headers=req.headers.raw, content=req.content)
            return httpx.Response(got.status, headers=got.headers, content=got.content)

        url = _join(base_url, request.path)
        body = b""
        try:
            with httpx.Client(transport=httpx.MockTransport(offline), trust_env=False) as dry, \
                    _httpx_errors(_where(request.method, url)):
                for n in range(max(1, passes)):
                    if n and not backend.prime():
                        break  # answered from memory: one pass only
                    resp = dry.request(request.method, self._url(url), content=request.body,
                                       headers=request.headers,
                                       timeout=self._timeout(timeouts, timeouts.read))
                    body = Response(resp.status_code, dict(resp.headers.items()), resp.content).body
            return body
        finally:
            pool.close()
            backend.close()

    def _url(self, url: str) -> Any:
        """The parsed ``httpx.URL`` for ``url``, kept: given a string, httpx parses it
        again on every request, and a Client sends to a handful of URLs."""
        parsed = self._urls.get(url)
        if parsed is None:
            import httpx

            if len(self._urls) >= 64:  # bounded whatever the caller does
                self._urls.clear()
            parsed = self._urls[url] = httpx.URL(url)
        return parsed

    @staticmethod
    def _timeout(timeouts: Timeouts, gap: float) -> Any:
        import httpx

        if timeouts.total is not None:
            gap = min(gap, timeouts.total)
        return httpx.Timeout(connect=timeouts.connect, read=gap, write=gap, pool=timeouts.connect)

    def send(self, request: EncodedRequest, base_url: str, timeouts: Timeouts) -> Response:
        url = _join(base_url, request.path)
        where = _where(request.method, url)
        http = self._http()
        with _httpx_errors(where):
            resp = http.request(
                request.method, self._url(url), content=request.body, headers=request.headers,
                timeout=self._timeout(timeouts, timeouts.read),
            )
        return Response(resp.status_code, dict(resp.headers.items()), resp.content)

    @contextlib.contextmanager
    def stream(
        self, request: EncodedRequest, base_url: str, timeouts: Timeouts
    ) -> Iterator[_HttpxStream]:
        url = _join(base_url, request.path)
        where = _where(request.method, url)
        http = self._http()
        deadline = None if timeouts.total is None else time.monotonic() + timeouts.total
        with _httpx_errors(where):
            req = http.build_request(
                request.method, self._url(url), content=request.body, headers=request.headers,
                timeout=self._timeout(timeouts, timeouts.stream_gap),
            )
            resp = http.send(req, stream=True)
        try:
            yield _HttpxStream(resp, where, deadline)
        finally:
            resp.close()  # an unread body closes the connection instead of pooling it

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
