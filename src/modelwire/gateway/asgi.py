"""The gateway's endpoints for any ASGI server: a thin adapter onto :mod:`.serving`.

``modelwire serve`` calls the handlers itself (:mod:`.h1server`); under uvicorn's own
protocol or another ASGI server, Starlette routes each request to an :class:`Endpoint`,
which serves the same handler through the same path with ASGI messages as its sink. The
endpoints are plain ASGI rather than Starlette's ``Request``/``StreamingResponse``: the
latter runs every stream inside a task group only to notice a disconnect, where one
small watcher task does here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .serving import Handler, Request, serve

__all__ = ["Endpoint"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Endpoint:
    """A plain ASGI app around ``handler(request) -> Reply`` (Starlette routes to it)."""

    __slots__ = ("handler",)

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve(self.handler, Request(scope, receive), _AsgiSink(receive, send))


class _AsgiSink:
    """A reply as ASGI messages; a disconnect is seen by a watcher task reading
    ``receive`` while a stream runs."""

    __slots__ = ("_receive", "_send", "_start", "_watcher", "disconnected")

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self._start: dict[str, Any] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.disconnected = False

    def start(self, status: int, head: bytes, sized: bool) -> None:
        # ASGI wants (name, value) pairs: the lines Reply.head made, split back
        pairs = [tuple(line.split(b": ", 1)) for line in head.split(b"\r\n")[:-1]]
        self._start = {"type": "http.response.start", "status": status, "headers": pairs}

    async def send_body(self, body: bytes, more: bool) -> None:
        start = self._start
        if start is not None:
            self._start = None
            await self._send(start)
        await self._send({"type": "http.response.body", "body": body, "more_body": more})

    def watch(self, task: asyncio.Task[Any] | None) -> None:
        if task is None:
            if self._watcher is not None:
                self._watcher.cancel()
                self._watcher = None
            return
        self._watcher = asyncio.get_running_loop().create_task(self._watch(task))

    async def _watch(self, task: asyncio.Task[Any]) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                task.cancel("the client disconnected")
                return
