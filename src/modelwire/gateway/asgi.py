"""The gateway's request and reply objects, on plain ASGI.

Starlette routes the requests (and runs the lifespan); the front-door endpoints are
plain ASGI callables built here, because Starlette's per-request objects were a
measurable part of the gateway's overhead: its ``Request``/``Response`` header
handling, and above all ``StreamingResponse``, which runs every stream inside an
anyio task group only to notice a disconnect. A stream here has one small watcher
task instead: it waits for ``http.disconnect`` and cancels the stream's task, whose
cancellation closes the upstream connection and releases the credential lease.

Under ``modelwire serve`` the gateway's protocol (:mod:`.h1server`) calls the handlers
itself with a :class:`Request` and writes the :class:`Reply` (``Reply.head``); ``Endpoint``
and ``Reply.__call__`` serve the same handlers to any other ASGI server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from ..transport.headers import LazyHeaders, header_lines

__all__ = ["ClientGone", "Endpoint", "Headers", "Reply", "Request"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class ClientGone(Exception):
    """The client disconnected before its request body arrived: nobody to answer."""


class Headers(LazyHeaders):
    """A request's headers by lower-case name (the first of repeated ones wins, as in
    Starlette). A lookup goes through a bytes-keyed dict made by one C call from the raw
    pairs (ASGI servers give names lower-case), decoding only the value asked for: a
    handler reads five or six of the 15 or more headers an SDK sends, and a str dict of
    them all cost ~330 bytecodes per request. Iterating builds the str dict."""

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
    """What a handler needs of a request: its headers and its body (``receive``, the
    ASGI callable). ``scope`` is ``None`` when the gateway's own HTTP protocol calls the
    handler directly (:mod:`.h1server`), which gives the raw header pairs instead."""

    __slots__ = ("headers", "receive", "scope")

    def __init__(self, scope: Scope | None, receive: Receive, raw: list[tuple[bytes, bytes]] | None = None) -> None:
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

    def _start(self) -> dict[str, Any]:
        raw = [(b"content-type", self.content_type.encode("latin-1"))]
        if self.stream is None:
            raw.append((b"content-length", b"%d" % len(self.body)))
        raw += [(k.encode("ascii"), v.encode("ascii")) for k, v in _safe(self.headers).items()]
        return {"type": "http.response.start", "status": self.status, "headers": raw}

    def head(self) -> tuple[bytes, bool]:
        """The header lines as one ASCII string (names lower-case; a content-length, and
        then ``sized``, when the body is known and may be sent): one encode, and the lines
        made by C calls rather than a loop per header."""
        headers = self.headers
        try:
            probe = "".join(headers) + "".join(headers.values())
        except TypeError:  # a value that is not a string (a count...): as text
            headers = {str(k): str(v) for k, v in headers.items()}
            probe = "".join(headers) + "".join(headers.values())
        if not (probe.isascii() and probe.isprintable()):  # the test _safe makes, in one call
            headers = _safe(headers)
        lines = header_lines(headers)
        sized = self.stream is None and self.status >= 200 and self.status not in (204, 304)
        if sized:
            text = f"content-length: {len(self.body)}\r\ncontent-type: {self.content_type}\r\n{lines}"
        else:
            text = f"content-type: {self.content_type}\r\n{lines}"
        return text.encode("ascii"), sized

    def _start_head(self) -> dict[str, Any]:
        """``http.response.start`` for a server that takes the header lines ready-made
        (the ``modelwire.head`` extension of :mod:`.h1server`), from :meth:`head`."""
        head, sized = self.head()
        return {"type": "http.response.start", "status": self.status, "headers": [],
                "modelwire.head": head, "modelwire.sized": sized}

    async def __call__(self, receive: Receive, send: Send, scope: Scope | None = None) -> None:
        fast = scope is not None and "modelwire.head" in (scope.get("extensions") or ())
        await send(self._start_head() if fast else self._start())
        if self.stream is None:
            await send({"type": "http.response.body", "body": self.body})
            return
        await _send_stream(self.stream, receive, send)


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


async def _send_stream(chunks: AsyncIterator[bytes], receive: Receive, send: Send) -> None:
    task = asyncio.current_task()
    assert task is not None
    gone = False

    async def watch() -> None:
        nonlocal gone
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
                task.cancel("the client disconnected")
                return

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if not gone:
            raise
        task.uncancel()  # our own cancellation: the client left, nothing more to send
    finally:
        watcher.cancel()
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


class Endpoint:
    """A plain ASGI app around ``handler(request) -> Reply`` (Starlette routes to it)."""

    __slots__ = ("handler",)

    def __init__(self, handler: Callable[[Request], Awaitable[Reply]]) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            reply = await self.handler(Request(scope, receive))
        except ClientGone:
            return
        await reply(receive, send, scope)
