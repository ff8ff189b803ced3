"""``POST /v1/embeddings``: OpenAI's embeddings shape to any configured embedding model.

The same books as the chat doors: the gateway's keys, body and nesting limits, aliases
and model table, the per-model concurrency slots, one shared
:class:`~modelwire.AsyncClient` per model (credential pool, retries,
fallback, batching to the upstream's limits), errors in OpenAI's shape and one access-log
line per request (door ``embeddings``). Vectors reach the client in the encoding it asked
for (``encoding_format``), whatever the upstream was sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import orjson

from ..embeddings import decode_request, encode_response
from .depth import check_depth
from .errors import GatewayError
from .metering import Counted
from .request import Ctx, failure_reply, read_body, request_id, served_headers
from .serving import ClientGone, Reply

if TYPE_CHECKING:
    from ..gateway.app import Gateway
    from ..gateway.serving import Request


__all__ = ["EmbeddingsDoor"]

log = logging.getLogger("modelwire.gateway")

_SHAPE = "chat_completions"  # errors in OpenAI's shape, as the chat door writes them


class EmbeddingsDoor:
    """The handler of ``POST /v1/embeddings`` (``handler(request) -> Reply``)."""

    __slots__ = ("gw",)

    def __init__(self, gateway: Gateway) -> None:
        self.gw = gateway

    async def __call__(self, request: Request) -> Any:
        gw = self.gw
        ctx = Ctx("embeddings", request_id(), time.perf_counter(), gw.access_log)
        ctx.recent = gw.recent
        ctx.observe = gw.observe  # counted and timed as door "embeddings"
        held: str | None = None  # the model whose slot this request holds
        try:
            if gw.draining:
                raise GatewayError(503, "the gateway is shutting down", "draining")
            gw.keys.check(request.headers, passthrough=gw.passthrough_keys)
            req = decode_request(await self._json(request))
            ctx.model = gw.models.resolve(req.get("model"))
            if gw.slots is not None:
                await gw.slots.acquire(ctx.model)
                held = ctx.model
            client = gw.client(ctx.model, request.headers)
            before = time.perf_counter()
            done = await client.embed(req["input"], dimensions=req.get("dimensions"),
                                      input_type=req.get("input_type"))
            after = time.perf_counter()
            body = encode_response(done.vectors, done.model, done.usage,
                                   req.get("encoding_format", "float"))
            work = done.timing.work if done.timing is not None else 0.0  # the Client's own, not its waits
            overhead = (before - ctx.started + work + time.perf_counter() - after) * 1000
            ctx.upstream = f"{done.provider}/{done.model}"
            ctx.tokens = done.usage["total_tokens"]
            ctx.overhead = overhead / 1000
            if gw.usage_wanted:  # input tokens (embedding models have no price in the table)
                ctx.completion = Counted({"prompt_tokens": done.usage["prompt_tokens"]})
            return Reply(200, body, served_headers(ctx, done, overhead))
        except (asyncio.CancelledError, ClientGone):
            ctx.status = 499  # the client went away: nobody to answer
            raise
        except Exception as exc:  # noqa: BLE001  (every error leaves in OpenAI's shape; logged there)
            return failure_reply(ctx, exc, _SHAPE)
        finally:
            if held is not None and gw.slots is not None:
                gw.slots.release(held)
            ctx.log()

    async def _json(self, request: Request) -> Any:
        raw = await read_body(request, self.gw.max_body)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise GatewayError(400, f"request body is not valid JSON: {exc}", "invalid_json") from exc
        if isinstance(data, dict):
            limits = self.gw.limits
            check_depth(raw, data, limits.max_json_depth, limits.max_schema_depth)
        return data
