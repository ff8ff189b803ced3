"""The emulator's ASGI response: sends prepared chunks, applies stream faults, and
records in the request log whether the client stayed until the end.

It listens for ``http.disconnect`` while it waits (a hang before the first byte, slow
chunks), so a client that gives up is noticed at once and logged with the time,
which lets gateway tests assert that an upstream request was cancelled without
sleeping.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from .faults import Fault
from .state import EmulatorState

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


__all__ = ["ABORT_KEY", "ConnectionAborted", "EmuResponse"]

# scope key holding the server connection's ``abort()`` (set by :func:`.app.build_app`)
ABORT_KEY = "modelwire.emulator.abort"


class ConnectionAborted(Exception):
    """Raised inside the ASGI app to make the server drop the connection mid-body."""


class EmuResponse:
    def __init__(self, status: int, headers: dict[str, str], chunks: list[bytes], *,
                 state: EmulatorState, entry: dict[str, Any] | None, hang: float = 0.0,
                 fault: Fault | None = None, error_event: bytes | None = None) -> None:
        self.status = status
        self.headers = headers
        self.chunks = chunks
        self.state = state
        self.entry = entry
        self.hang = hang
        self.fault = fault
        self.error_event = error_event

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gone = asyncio.Event()

        async def listen() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    return

        if self.fault is not None and self.fault.fault == "reset_before":
            self._reset(scope)
            return
        listener = asyncio.ensure_future(listen())
        try:
            await self._run(send, gone)
        finally:
            listener.cancel()

    def _reset(self, scope: Scope) -> None:
        """Drop the connection before any byte of the answer (fault ``reset_before``).

        ASGI has no message for that; :func:`.app.build_app` puts the server transport's
        ``abort`` in the scope. Raising instead would make uvicorn answer 500."""
        abort = scope.get(ABORT_KEY)
        if self.entry is not None:
            self.state.update(self.entry, completed=False, chunks_sent=0, aborted_by_fault=True)
        if abort is None:
            raise ConnectionAborted("fault: reset_before (no transport to abort: answered 500)")
        abort()

    async def _wait(self, gone: asyncio.Event, seconds: float) -> bool:
        """Wait up to ``seconds``; True when the client went away meanwhile."""
        if seconds <= 0:
            return gone.is_set()
        try:
            await asyncio.wait_for(gone.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _disconnected(self, sent: int) -> None:
        if self.entry is not None:
            self.state.update(self.entry, disconnected=True, disconnected_at=time.time(),
                              chunks_sent=sent)

    async def _run(self, send: Send, gone: asyncio.Event) -> None:
        if self.entry is not None:
            self.state.update(self.entry, status=self.status)
        if await self._wait(gone, self.hang):
            self._disconnected(0)
            return
        raw_headers = [(k.encode(), v.encode()) for k, v in self.headers.items()]
        await send({"type": "http.response.start", "status": self.status, "headers": raw_headers})
        kind = self.fault.fault if self.fault else None
        after = self.fault.after if self.fault else 0
        seconds = self.fault.seconds if self.fault else 0.0
        for i, chunk in enumerate(self.chunks):
            if kind and i == after:
                if kind == "stall":
                    if await self._wait(gone, seconds):
                        self._disconnected(i)
                        return
                    self._finish(i, aborted=True)
                    raise ConnectionAborted("fault: stall")
                if kind == "close_mid_stream":
                    self._finish(i, aborted=True)
                    raise ConnectionAborted("fault: close_mid_stream")
                if kind == "stream_error" and self.error_event is not None:
                    self._finish(i)
                    await send({"type": "http.response.body", "body": self.error_event,
                                "more_body": False})
                    return
                if kind == "malformed_sse":
                    await send({"type": "http.response.body", "more_body": True,
                                "body": b'data: {"type": "content_block_delta", "index": 0, "del\n\n'})
                if kind == "invalid_utf8":
                    await send({"type": "http.response.body", "more_body": True,
                                "body": b'data: {"text": "\xff\xfe\xfd"}\n\n'})
            if kind == "slow_chunks" and i > 0 and await self._wait(gone, seconds):
                self._disconnected(i)
                return
            if gone.is_set():
                self._disconnected(i)
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        # logged before the last frame goes out, so a client that has the whole answer
        # always finds the request marked completed
        self._finish(len(self.chunks))
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _finish(self, sent: int, aborted: bool = False) -> None:
        if self.entry is not None:
            self.state.update(self.entry, completed=not aborted, chunks_sent=sent,
                              aborted_by_fault=aborted)
