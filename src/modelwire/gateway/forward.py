"""Serving one request through the same-protocol lane (see :mod:`.lane`)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from ..client import Upstream
from ..errors import ModelwireError
from ..resilience.classify import RETRYABLE
from .doors import Door
from .errors import HttpError, from_exception
from .lane import Forward
from .metering import Relayed, StreamUsage, body_usage
from .request import ms_text

if TYPE_CHECKING:
    from ..gateway.request import Ctx


__all__ = ["forward"]

log = logging.getLogger("modelwire.gateway")

# failures the Client's ladder can still fix (another key, a wait, a refresh)
# failures the translating path's ladder can mend (param_400: it drops the refused setting)
_LADDER = RETRYABLE | {"auth", "billing", "signature_400", "schema_400", "param_400"}


def _served_headers(ctx: Ctx, fwd: Forward, overhead_ms: float) -> dict[str, str]:
    ctx.upstream = f"{fwd.upstream.provider}/{fwd.upstream.model_id}"
    ctx.lane = True
    ctx.overhead = overhead_ms / 1000
    headers = {
        "x-request-id": ctx.request_id,
        "x-modelwire-overhead-ms": ms_text(overhead_ms),
        "x-modelwire-attempts": "1",
        "x-modelwire-fallbacks": "0",
        "x-modelwire-model": ctx.upstream,
        "x-modelwire-lane": "passthrough",
    }
    if ctx.warning:
        headers["x-modelwire-warning"] = ctx.warning
    return headers


def _give_up(fwd: Forward, err: ModelwireError) -> bool:
    """The lane attempt failed before any byte went out: release the lease, tell the
    pool, and say whether the translating path (its ladder) should take over."""
    fwd.release()
    # a refused setting is remembered: the translating path leaves it out from its first try
    return fwd.upstream.failed(fwd.lease, err, "lane").kind in _LADDER


async def forward(upstream: Upstream, door: Door, req: Mapping[str, Any], ctx: Ctx,
                  client_headers: Mapping[str, str], *, hand_over: bool = True,
                  tags: Mapping[str, str] | None = None, meter: bool = False) -> Any:
    """The response, or ``None`` to let the translating path (with its ladder) serve it;
    never ``None`` with ``hand_over=False`` (a request the translating path cannot carry:
    the upstream's error is the answer). ``tags``: the request's, for the transport.
    ``meter``: read the answer's usage off its bytes into ``ctx.completion`` (a
    :class:`~.metering.Relayed`) and a stream's first-byte time into ``ctx.first_token``."""
    from .serving import Reply

    stream = bool(req.get("stream"))
    fwd = Forward(upstream, door, ctx.raw, stream, client_headers, ctx.raw_model, tags)
    before = time.perf_counter()
    overhead = (before - ctx.started) * 1000
    if not stream:
        try:
            resp = await upstream.send(fwd.request)
            if resp.status >= 400:
                raise fwd.error(resp.status, resp.headers, resp.body)
        except ModelwireError as exc:
            if _give_up(fwd, exc) and hand_over:
                return None
            raise
        answered = time.perf_counter()
        fwd.succeeded()
        fwd.release()
        if meter:
            ctx.completion = Relayed(body_usage(door.api_mode, resp.body), upstream)
        # as on the translating path: the time before the send and after the answer
        return Reply(200, resp.body, _served_headers(ctx, fwd, overhead + (time.perf_counter() - answered) * 1000))

    manager = upstream.stream(fwd.request)
    try:
        resp = await manager.__aenter__()
        if resp.status >= 400:
            try:
                answer = await resp.read()
            finally:
                await manager.__aexit__(None, None, None)
            raise fwd.error(resp.status, resp.headers, answer)
    except ModelwireError as exc:
        if _give_up(fwd, exc) and hand_over:
            return None
        raise
    headers = _served_headers(ctx, fwd, overhead)
    headers.update({"cache-control": "no-cache", "x-accel-buffering": "no"})

    async def body() -> AsyncIterator[bytes]:
        ok = False
        seen = _ResponsesSeen() if door.api_mode == "responses" else None
        tap = StreamUsage(door.api_mode) if meter else None
        observe = ctx.observe
        if observe is not None:
            observe.stream_opened()
        try:
            async for chunk in resp.aiter_chunks():
                if tap is not None:
                    if ctx.first_token is None:
                        ctx.first_token = time.perf_counter()
                    tap.feed(chunk)
                if seen is not None:
                    seen.feed(chunk)
                yield chunk
            ok = True
        except ModelwireError as exc:  # after bytes went out: the protocol's error event
            err = from_exception(exc, door.api_mode)
            ctx.status = err.status
            yield (seen.failed(err) if seen is not None else None) or door.error_frame(err, ctx.request_id)
        finally:
            if not ok:
                resp.close()
            await manager.__aexit__(None, None, None)
            if ok:
                fwd.succeeded()
            fwd.release()
            if tap is not None:  # a cut stream's too: the usage its bytes said so far
                ctx.completion = Relayed(tap.usage, upstream)
            if observe is not None:
                observe.stream_closed()
            ctx.log()

    return Reply(200, headers=headers, content_type="text/event-stream", stream=body())


class _ResponsesSeen:
    """What a relayed Responses stream must remember to end in ``response.failed``, as
    the API ends a response that fails while streaming: the first chunk (it opens with
    ``response.created``, the response object) and the last one that holds a
    ``sequence_number``. Only these are kept: the lane never parses the bytes it relays,
    so the failed response lists no output (the finished items went out whole in their
    own ``output_item.done`` events)."""

    __slots__ = ("first", "last")

    def __init__(self) -> None:
        self.first = b""
        self.last = b""

    def feed(self, chunk: bytes) -> None:
        if not self.first:
            self.first = chunk
        if b'"sequence_number"' in chunk:
            self.last = chunk

    def failed(self, err: HttpError) -> bytes | None:
        """The ``response.failed`` event, or ``None`` when the bytes seen do not say
        which response this is (then the door's plain error event)."""
        response = _created_response(self.first)
        numbers = _SEQUENCE.findall(self.last)
        if response is None or not numbers:
            return None
        code = "rate_limit_exceeded" if err.status == 429 else "invalid_prompt" if err.status < 500 else "server_error"
        failed = {**response, "status": "failed", "error": {"code": code, "message": err.message}, "output": []}
        payload = {"type": "response.failed", "response": failed, "sequence_number": int(numbers[-1]) + 1}
        return b"event: response.failed\ndata: " + orjson.dumps(payload) + b"\n\n"


_SEQUENCE = re.compile(rb'"sequence_number"\s*:\s*(\d+)')


def _created_response(chunk: bytes) -> dict[str, Any] | None:
    """The response object of a stream's opening ``response.created`` event."""
    start = chunk.find(b"data:")
    if start < 0:
        return None
    end = chunk.find(b"\n", start)
    try:
        event = orjson.loads(chunk[start + 5:end if end >= 0 else None])
    except orjson.JSONDecodeError:
        return None  # the event did not arrive whole in the first chunk
    response = event.get("response") if isinstance(event, dict) and event.get("type") == "response.created" else None
    return response if isinstance(response, dict) else None
