"""``gateway.max_concurrent_per_model``: at most N upstream requests per model at once.

Off by default. When set, a request past the cap waits in line (first come, first
served) for at most ``gateway.queue_timeout`` seconds, then gets a 429 with a
Retry-After: the upstream is protected from a burst, and the client's SDK retries.
A stream holds its slot until it ends (:class:`HeldStream`).
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import AsyncIterator, Callable

from .errors import GatewayError

__all__ = ["HeldStream", "ModelSlots"]


class ModelSlots:
    """Slots per model name; waiters are woken in order as slots free up."""

    def __init__(self, limit: int, queue_timeout: float) -> None:
        self.limit = limit
        self.queue_timeout = queue_timeout
        self._busy: dict[str, int] = {}
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def busy(self, model: str) -> int:
        return self._busy.get(model, 0)

    async def acquire(self, model: str) -> None:
        if self._busy.get(model, 0) < self.limit and not self._waiting.get(model):
            self._busy[model] = self._busy.get(model, 0) + 1
            return
        line = self._waiting.setdefault(model, deque())
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line.append(turn)
        try:
            await asyncio.wait_for(asyncio.shield(turn), self.queue_timeout)
        except TimeoutError:
            if turn.done() and not turn.cancelled():
                return  # the slot came with the deadline: it is ours
            turn.cancel()
            raise self._refused(model) from None
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.release(model)  # handed a slot we will not use: pass it on
            else:
                turn.cancel()
            raise
        finally:
            if turn in line:
                line.remove(turn)
            if not line:
                self._waiting.pop(model, None)

    def release(self, model: str) -> None:
        """A slot back: to the first waiter still waiting, else free."""
        line = self._waiting.get(model)
        while line:
            turn = line.popleft()
            if not turn.done():
                turn.set_result(None)  # the slot passes on: the busy count stays
                return
        left = self._busy.get(model, 1) - 1
        if left > 0:
            self._busy[model] = left
        else:
            self._busy.pop(model, None)

    def _refused(self, model: str) -> GatewayError:
        wait = max(1, math.ceil(self.queue_timeout))
        return GatewayError(429, f"model {model!r} has {self.limit} requests running, the gateway's "
                                 f"limit (gateway.max_concurrent_per_model); waited "
                                 f"{self.queue_timeout:g} s (gateway.queue_timeout)", "model_busy",
                            retry_after=wait)


class HeldStream:
    """A reply's stream that gives its slot back when it ends, fails or is closed
    (both servers close a reply's stream once they are done with it)."""

    __slots__ = ("_release", "_stream")

    def __init__(self, stream: AsyncIterator[bytes], release: Callable[[], None]) -> None:
        self._stream = stream
        self._release: Callable[[], None] | None = release

    def __aiter__(self) -> HeldStream:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._stream.__anext__()
        except BaseException:
            self._done()
            raise

    async def aclose(self) -> None:
        self._done()
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            await aclose()

    def _done(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()
