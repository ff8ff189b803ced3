"""One request's books and the pieces every route of the gateway shares: the request
id, the context a door fills in (:class:`Ctx`, which writes the access-log line), the
``x-modelwire-*`` headers of an answer, the body reader, the Client's arguments from a
decoded request, and errors as answers in a door's shape.

Imported by the routes (:mod:`.handlers`, :mod:`.forward`, :mod:`.embeddings`) and the
app; imports none of them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ModelwireError
from ..types import ApiMode
from .accesslog import write as write_access
from .errors import GatewayError, HttpError, error_body, from_exception, retry_after_header

if TYPE_CHECKING:
    from ..completion import Attempt, Completion
    from ..gateway.serving import Request


__all__ = ["Ctx", "client_options", "error_response", "failure_reply", "ms_text", "read_body",
           "request_id", "request_options", "served_headers"]

log = logging.getLogger("modelwire.gateway")
access_log = logging.getLogger("modelwire.gateway.access")

_REQUEST_FIELDS = frozenset((
    "tools", "tool_choice", "thinking", "max_tokens", "temperature", "top_p", "stop",
    "response_format", "parallel_tool_calls",
))


def _new_id_prefix() -> None:
    global _ID_PREFIX, _ID_COUNT
    _ID_PREFIX = "req_" + os.urandom(8).hex()
    # ten decimal digits from a random start: ids stay one length for a billion requests
    _ID_COUNT = itertools.count(10**9 + int.from_bytes(os.urandom(4), "big") % 10**9)


_new_id_prefix()
os.register_at_fork(after_in_child=_new_id_prefix)  # a forked worker must not repeat ids


def request_id() -> str:
    """``req_`` + 16 hex digits + 10 decimal ones: 64 random bits drawn once per process,
    then a counter: unique without drawing randomness per request."""
    return f"{_ID_PREFIX}{next(_ID_COUNT)}"


def ms_text(ms: float) -> str:
    """``ms`` with three decimals (``x-modelwire-overhead-ms``), in integer arithmetic
    (code every request runs anyway; docs/performance, "Why the code is as it is")."""
    us = int(ms * 1000.0 + 0.5) if ms > 0 else 0
    return f"{us // 1000}.{str(1000 + us % 1000)[1:]}"


def error_response(err: HttpError, door: ApiMode, request_id: str) -> Any:
    import orjson

    from .serving import Reply

    headers = {"x-request-id": request_id, **retry_after_header(err)}
    return Reply(err.status, orjson.dumps(error_body(err, door, request_id)), headers)


def request_options(req: Mapping[str, Any]) -> dict[str, Any]:
    """The request's fields with an internal meaning, as the Client's arguments."""
    # a request carries one or two of the nine, usually
    return {k: req[k] for k in req.keys() & _REQUEST_FIELDS if req[k] is not None}


def client_options(req: Mapping[str, Any], door: str) -> dict[str, Any]:
    opts = request_options(req)
    # native fields and tools: the Client gives them to the models of the chain that speak
    # the door's protocol, leaves the fields out for the others and refuses their tools
    opts["extra_api"] = door
    extra = req.get("extra")
    if extra:
        if extra.get("speed") is not None:
            # Anthropic's speed field is the Client's speed option: sent (with its beta)
            # where the upstream has fast mode, left out elsewhere, never blindly copied
            extra = {k: v for k, v in extra.items() if k != "speed"}
            opts["speed"] = "fast" if req["extra"]["speed"] == "fast" else "standard"
        if extra:
            opts["extra"] = extra
    return opts


def _too_large(limit: int) -> GatewayError:
    return GatewayError(413, f"request body is larger than the gateway's limit of {limit} bytes", "body_too_large")


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    message = await request.receive()
    if message["type"] == "http.disconnect":
        from .serving import ClientGone

        raise ClientGone("the client disconnected while sending its request")
    body = message.get("body", b"")
    if len(body) > limit:
        raise _too_large(limit)
    if not message.get("more_body", False):
        return body  # the usual case: the whole body in one message
    chunks = [body]
    size = len(body)
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


class Ctx:
    """One request's books. The defaults live on the class: a request sets only what it
    learns (a dataclass's ``__init__`` stored all of them on every request)."""

    model: str = "-"
    upstream: str = "-"
    status: int = 200
    tokens: int = 0
    route: str | None = None
    raw: bytes = b""
    raw_model: Any = None  # the body's top-level "model" as sent
    streaming: bool = False  # a stream's body logs when it ends, not the handler
    lane: bool = False
    lane_tries: int = 0  # lane attempts that failed over to the translating path
    warning: str | None = None  # x-modelwire-warning: a misconfiguration the operator should fix
    # the request holds content the internal model cannot carry: only the lane (which
    # forwards the client's bytes) can serve it; anywhere else this is the answer
    unexpressible: ModelwireError | None = None
    sealed: bool = False  # the client echoed sealed reasoning: opened, so never forwarded as sent
    dropped_tools: tuple[str, ...] = ()  # hosted tools the upstream cannot run, left out
    completion: Any = None  # what answered: its usage and cost (metrics); teams settle a stream from it
    # metrics and traces (modelwire.observe.gateway reads these; None: both off)
    observe: Any = None
    overhead: float | None = None  # seconds, as x-modelwire-overhead-ms says
    first_token: float | None = None  # perf_counter of a stream's first event
    span: Any = None
    span_token: Any = None
    recent: Any = None  # the status page's ring (.ui_recent; None: /ui is off)

    def __init__(self, door: str, request_id: str, started: float, enabled: bool = True,
                 created: int = 0) -> None:
        self.door = door  # the access log's name of the route: an api mode, or "embeddings"
        self.request_id = request_id
        self.started = started
        self.enabled = enabled
        self.created = created  # the request's Unix time: the answer's `created` / `created_at`

    def log(self) -> None:
        """The access-log line, written after the answer: handlers call this just before
        their reply is sent, which happens without yielding to the loop, so the line
        (formatting and a write to stderr) waits for the next loop turn, off the
        request's path."""
        if self.observe is not None:
            self.observe.finished(self)
        if self.recent is not None:
            self.recent.record(self)
        if not self.enabled or not access_log.isEnabledFor(logging.INFO):
            return
        args = (self.request_id, self.door, self.model, self.upstream, self.status,
                (time.perf_counter() - self.started) * 1000, self.tokens)
        try:
            asyncio.get_running_loop().call_soon(_access_line, args)
        except RuntimeError:  # no running loop (shutting down): now, then
            _access_line(args)


def _access_line(args: tuple[Any, ...]) -> None:
    write_access(access_log, args)


def served_headers(ctx: Ctx, completion: Completion, overhead_ms: float) -> dict[str, str]:
    """The ``x-modelwire-*`` headers of a served answer (``completion``: a Completion, or
    a stream's partial one, which may lack the facts an answer has)."""
    attempts = getattr(completion, "attempts", None) or ()
    provider = getattr(completion, "provider", "")
    model = getattr(completion, "model", "")
    if len(attempts) > 1:
        fallbacks, tried = _fallbacks(attempts), _tried(attempts) or 1
    else:  # a single attempt served it, no fallback (the usual case, without a walk)
        fallbacks, tried = "0", 1
    headers = {
        "x-request-id": ctx.request_id,
        "x-modelwire-overhead-ms": ms_text(overhead_ms),
        "x-modelwire-attempts": str(tried + ctx.lane_tries),
        "x-modelwire-fallbacks": fallbacks,
        "x-modelwire-model": (f"{provider}/{model}" if provider else model) or ctx.model,
    }
    if ctx.route:
        headers["x-modelwire-route"] = ctx.route
    if ctx.warning:
        headers["x-modelwire-warning"] = ctx.warning
    if ctx.lane:
        headers["x-modelwire-lane"] = "passthrough"
    if ctx.dropped_tools:
        headers["x-modelwire-dropped-tools"] = ", ".join(ctx.dropped_tools)
    return headers


def _tried(attempts: Sequence[Attempt]) -> int:
    """Attempts made (a sticky fallback's skipped primary was not tried)."""
    return sum(a.outcome != "skipped" for a in attempts)


def _fallbacks(attempts: Sequence[Attempt]) -> str:
    """How many models of the chain this answer passed over: ``"1"``, or ``"1; sticky"``
    when a recent request's fallback was used from the start (the model's Client keeps
    it for ``fallback_stick_s``, shared by every request to that model)."""
    moved = sum(a.outcome in ("fell_back", "skipped") for a in attempts)
    sticky = any(a.outcome == "skipped" for a in attempts)
    return f"{moved}; sticky" if sticky else str(moved)


def failure_reply(ctx: Ctx, exc: Exception, shape: Any) -> Any:
    """``exc`` as an error answer in ``shape`` (a door, or the embeddings route's), its
    status on the access log; an error modelwire did not raise itself is logged whole."""
    if not isinstance(exc, (GatewayError, ModelwireError)):
        log.exception("%s: unexpected error", ctx.request_id)
    err = from_exception(exc, shape)
    ctx.status = err.status
    return error_response(err, shape, ctx.request_id)
