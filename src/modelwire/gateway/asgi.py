"""The gateway's request and reply objects, on plain ASGI.

Starlette routes the requests (and runs the lifespan); the front-door endpoints are
plain ASGI callables built here, because Starlette's per-request objects were a
measurable part of the gateway's overhead: its ``Request``/``Response`` header
handling, and above all ``StreamingResponse``, which runs every stream inside an
anyio task group only to notice a disconnect. A stream here has one small watcher
task instead: it waits for ``http.disconnect`` and cancels the stream's task, whose
cancellation closes the upstream connection and releases the credential lease.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from .._headers import LazyHeaders

__all__ = ["ClientGone", "Endpoint", "Headers", "Reply", "Request"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class ClientGone(Exception):
    """The client disconnected before its request body arrived: nobody to answer."""


class Headers(LazyHeaders):
    """A request's headers by lower-case name (the first of repeated ones wins, as in
    Starlette); built lazily from the ASGI scope on first use."""

    __slots__ = ()

    def _build(self) -> dict[str, str]:
        # reversed: the first occurrence wins; a comprehension, not a loop: SDK clients send
        # 15 headers or more (measured 3.9 vs 6.4 us for 16)
        out = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in reversed(self._raw)}
        self._map = out
        return out


class Request:
    """What a handler needs of an ASGI request: headers, query string, the body."""

    __slots__ = ("headers", "receive", "scope")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        self.headers = Headers(scope["headers"])

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

    def _start_head(self) -> dict[str, Any]:
        """``http.response.start`` for a server that takes the header lines ready-made
        (the ``modelwire.head`` extension of :mod:`.h1server`): one string, one encode,
        instead of a pair of bytes per header that the server then formats again."""
        lines = [f"{k}: {v}\r\n" for k, v in self.headers.items()]
        flat = "".join([line[:-2] for line in lines])
        if not (flat.isascii() and flat.isprintable()):  # the test _safe makes, in one call
            lines = [f"{k}: {v}\r\n" for k, v in _safe(self.headers).items()]
        head = f"content-type: {self.content_type}\r\n{''.join(lines)}"
        sized = self.stream is None and self.status >= 200 and self.status not in (204, 304)
        if sized:
            head = f"content-length: {len(self.body)}\r\n{head}"
        return {"type": "http.response.start", "status": self.status, "headers": [],
                "modelwire.head": head.encode("ascii"), "modelwire.sized": sized}

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
