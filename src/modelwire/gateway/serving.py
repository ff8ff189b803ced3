"""The gateway's one serving path: a handler turns a :class:`Request` into a
:class:`Reply`, and :func:`serve` writes that reply onto a :class:`Sink`.

Two sinks exist: the connection of the gateway's own HTTP/1.1 protocol
(:mod:`.h1server`, what ``modelwire serve`` runs) and an ASGI server's ``send``
(:mod:`.asgi`, for uvicorn's own protocol or any other ASGI server). Everything else
is here, once: the response head (:meth:`Reply.head`), a client that leaves before its
request body arrived (:class:`ClientGone`), and a client that leaves mid-stream (the
sink cancels the serving task; :func:`serve` ends the stream, which closes the upstream
connection and releases the credential lease).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol

from ..transport.headers import LazyHeaders, header_lines

__all__ = ["ClientGone", "Handler", "Headers", "Reply", "Request", "Sink", "serve"]

Receive = Callable[[], Awaitable[dict[str, Any]]]


class ClientGone(Exception):
    """The client disconnected before its request body arrived: nobody to answer."""


class Headers(LazyHeaders):
    """A request's headers by lower-case name (the first of repeated ones wins, as in
    Starlette), from the raw pairs the server gives (names lower-case). A lookup decodes
    only the value asked for; iterating builds the whole str dict."""

    __slots__ = ("_bytes",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._map = None
        self._bytes: dict[bytes, bytes] | None = None

    def _build(self) -> dict[str, str]:
        out = {name.decode("latin-1"): value.decode("latin-1") for name, value in reversed(self._raw)}
        self._map = out
        return out

    def _lookup(self) -> dict[bytes, bytes]:
        found = self._bytes = dict(reversed(self._raw))  # reversed: the first occurrence wins
        return found

    def __getitem__(self, name: str) -> str:
        return ((self._bytes if self._bytes is not None else self._lookup())[name.encode("latin-1")]
                .decode("latin-1"))

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        value = (self._bytes if self._bytes is not None else self._lookup()).get(name.encode("latin-1"))
        return default if value is None else value.decode("latin-1")

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name.encode("latin-1") in (self._bytes if self._bytes is not None else self._lookup())


class Request:
    """What a handler needs of a request: its headers and its body (``receive``, which
    gives ASGI ``http.request`` / ``http.disconnect`` messages). ``scope``: the ASGI
    scope when an ASGI server called (route parameters are there), else ``None``."""

    __slots__ = ("headers", "receive", "scope")

    def __init__(self, scope: dict[str, Any] | None, receive: Receive,
                 raw: list[tuple[bytes, bytes]] | None = None) -> None:
        self.scope = scope
        self.receive = receive
        self.headers = Headers(scope["headers"] if scope is not None else raw or [])

    async def stream(self) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive (the caller bounds the size)."""
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone("the client disconnected while sending its request")
            chunk = message.get("body", b"")
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                return


class Reply:
    """A response: bytes, or an async iterator of SSE bytes (``stream``)."""

    __slots__ = ("body", "content_type", "headers", "status", "stream")

    def __init__(self, status: int, body: bytes = b"", headers: Mapping[str, str] | None = None,
                 content_type: str = "application/json",
                 stream: AsyncIterator[bytes] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.content_type = content_type
        self.stream = stream

    def head(self) -> tuple[bytes, bool]:
        """The header lines (``name: value\\r\\n`` each, names lower-case, values made
        wire-safe), and ``sized``: whether they hold a content-length (a whole body that
        may be sent; a stream's framing is the server's)."""
        headers = self.headers
        try:
            probe = "".join(headers) + "".join(headers.values())
        except TypeError:  # a value that is not a string (a count...): as text
            headers = {str(k): str(v) for k, v in headers.items()}
            probe = "".join(headers) + "".join(headers.values())
        if not (probe.isascii() and probe.isprintable()):  # one check for all; _safe looks at each if needed
            headers = _safe(headers)
        lines = header_lines(headers)
        sized = self.stream is None and self.status >= 200 and self.status not in (204, 304)
        if sized:
            text = f"content-length: {len(self.body)}\r\ncontent-type: {self.content_type}\r\n{lines}"
        else:
            text = f"content-type: {self.content_type}\r\n{lines}"
        return text.encode("ascii"), sized


Handler = Callable[[Request], Awaitable[Reply]]


class Sink(Protocol):
    """Where a reply goes: one response of one connection."""

    @property
    def disconnected(self) -> bool:
        """The client is gone."""
        ...

    def start(self, status: int, head: bytes, sized: bool) -> None:
        """The status and header lines (:meth:`Reply.head`): sent with the first body."""
        ...

    async def send_body(self, body: bytes, more: bool) -> None:
        """A piece of the body (the last has ``more`` false); waits while the client
        reads slower than the reply is written."""
        ...

    def watch(self, task: asyncio.Task[Any] | None) -> None:
        """Until called again with ``None``: cancel ``task`` if the client leaves."""
        ...


async def serve(handler: Handler, request: Request, sink: Sink) -> None:
    """``handler``'s reply to ``request``, written onto ``sink``."""
    try:
        reply = await handler(request)
    except ClientGone:
        return
    head, sized = reply.head()
    sink.start(reply.status, head, sized)
    if reply.stream is None:
        await sink.send_body(reply.body, False)
        return
    await _stream(reply.stream, sink)


async def _stream(chunks: AsyncIterator[bytes], sink: Sink) -> None:
    """The stream's pieces as they come; a client that leaves cancels this task (through
    the sink), which ends the stream quietly: nobody is left to tell."""
    task = asyncio.current_task()
    assert task is not None  # serve runs in the task that serves the connection
    watching = True
    sink.watch(task)
    try:
        async for chunk in chunks:
            await sink.send_body(chunk, True)
        watching = False
        sink.watch(None)
        await sink.send_body(b"", False)
    except asyncio.CancelledError:
        if not (watching and sink.disconnected):
            raise
        task.uncancel()  # the sink's cancellation: the client left
    finally:
        if watching:
            sink.watch(None)
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


def _safe(headers: Mapping[str, str]) -> Mapping[str, str]:
    """``headers`` fit for the wire: a value is printable ASCII or it is percent-encoded
    (values carry what an upstream said, e.g. its model name, and a CR or LF there would
    add headers to the answer; a non-Latin-1 one made the reply fail)."""
    if all(_printable(k) and _printable(v) for k, v in headers.items()):
        return headers
    from urllib.parse import quote

    return {quote(k, safe=""): v if _printable(v) else quote(v, safe=" !\"#$&'()*+,/:;<=>?@[]^`{|}~")
            for k, v in headers.items()}


def _printable(text: str) -> bool:
    return text.isascii() and text.isprintable()
