"""Request handling shared by the three front doors."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import ModelwireError, OverloadedError, UnsupportedContentError
from ..events import StreamError
from ..types import ApiMode, Request
from .depth import check_depth
from .doors import DOORS, Door, open_sealed, seal_events, seal_message
from .errors import GatewayError, from_exception, scrubbed
from .forward import forward
from .hosted import fit_tools
from .lane import eligible
from .request import (
    Ctx,
    client_options,
    error_response,
    failure_reply,
    ms_text,
    read_body,
    request_id,
    served_headers,
)
from .serving import ClientGone, Reply
from .slots import HeldStream

if TYPE_CHECKING:
    from ..client import AsyncClient
    from ..gateway.app import Gateway
    from ..gateway.serving import Request as ServedRequest


__all__ = ["make_handlers"]

log = logging.getLogger("modelwire.gateway")

_DOOR_PATHS = {"chat_completions": "/v1/chat/completions", "anthropic_messages": "/v1/messages",
               "responses": "/v1/responses"}


class _Handlers:
    def __init__(self, gateway: Gateway) -> None:
        self.gw = gateway

    # ------------------------------------------------------------ doors
    # each door is _serve itself with its door bound (no coroutine around it)
    def chat_completions(self, request: ServedRequest) -> Coroutine[Any, Any, Any]:
        return self._serve(request, DOORS["chat_completions"])

    def messages(self, request: ServedRequest) -> Coroutine[Any, Any, Any]:
        return self._serve(request, DOORS["anthropic_messages"])

    def responses(self, request: ServedRequest) -> Coroutine[Any, Any, Any]:
        return self._serve(request, DOORS["responses"])

    async def models(self, request: ServedRequest) -> Any:
        door: ApiMode = "anthropic_messages" if "anthropic-version" in request.headers else "chat_completions"
        rid = request_id()
        try:
            self.gw.keys.check(request.headers)
        except GatewayError as exc:
            return error_response(exc.http, door, rid)
        return Reply(200, orjson.dumps(self.gw.models.listing(door == "anthropic_messages")),
                     {"x-request-id": rid})

    async def model(self, request: ServedRequest) -> Any:
        """GET /v1/models/{id} (the SDKs' ``models.retrieve``); routed by Starlette, which
        gives the id in the scope's path parameters."""
        door: ApiMode = "anthropic_messages" if "anthropic-version" in request.headers else "chat_completions"
        rid = request_id()
        try:
            self.gw.keys.check(request.headers)
            found = self.gw.models.one((request.scope or {})["path_params"]["model_id"], door == "anthropic_messages")
        except GatewayError as exc:
            return error_response(exc.http, door, rid)
        return Reply(200, orjson.dumps(found), {"x-request-id": rid})

    async def count_tokens(self, request: ServedRequest) -> Any:
        from ..tokens import estimate_tokens

        ctx = Ctx("anthropic_messages", request_id(), time.perf_counter())
        try:
            self.gw.keys.check(request.headers)
            req = await self._decode(request, ctx, DOORS["anthropic_messages"])
            if ctx.unexpressible is not None:
                raise ctx.unexpressible  # a count needs the decoded conversation
            count = await self._upstream_count(req, request.headers)
            how = "upstream"
            if count is None:
                payload: dict[str, Any] = {"messages": req.get("messages", [])}
                if tools := req.get("tools"):
                    payload["tools"] = tools
                count, how = estimate_tokens(payload), "estimated"
        except (GatewayError, ModelwireError) as exc:
            return error_response(from_exception(exc, "anthropic_messages"), "anthropic_messages", ctx.request_id)
        return Reply(200, orjson.dumps({"input_tokens": count}),
                     {"x-request-id": ctx.request_id, "x-modelwire-token-count": how})

    async def _upstream_count(self, req: Request, headers: Mapping[str, str]) -> int | None:
        """The model's upstream's own count, or ``None``: an unknown model or one that
        cannot be built still gets an estimate (a count is advice, not a request)."""
        from .count import upstream_count

        try:
            client = self.gw.client(self.gw.models.resolve(req.get("model")), headers)
        except (GatewayError, ModelwireError):
            return None
        return await upstream_count(client.upstream(), req)

    # ----------------------------------------------------------- common
    async def _decode(self, request: ServedRequest, ctx: Ctx, door: Door) -> Request:
        body = ctx.raw = await read_body(request, self.gw.max_body)
        limits = self.gw.limits

        def check(raw: bytes, data: Any) -> None:
            if not isinstance(data, dict):
                raise GatewayError(400, "request body must be a JSON object", "invalid_json")
            check_depth(raw, data, limits.max_json_depth, limits.max_schema_depth)
        try:
            data = self.gw.kept_body.loads(body, door.history, check)
        except orjson.JSONDecodeError as exc:
            raise GatewayError(400, f"request body is not valid JSON: {exc}", "invalid_json") from exc
        ctx.raw_model = data.get("model")
        # state kept by the vendor's servers: the conversation would be lost, not continued
        for field in door.stateful_fields:
            if data.get(field):
                raise GatewayError(
                    400,
                    f"{field} is not supported: this gateway is stateless (store: false); "
                    "send the whole conversation in `input`",
                    "stateless",
                )
        try:
            req = door.codec.decode_request(data, request.headers)
        except UnsupportedContentError as exc:
            ctx.unexpressible = exc  # _serve decides: the lane, or this 400
            model: Any = data.get("model")  # checked by the gateway's model table
            return {"model": model, "messages": [], "stream": bool(data.get("stream"))}
        except ModelwireError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # a codec should raise MessageError itself; this keeps a client's
            # mistake a 400 even where it does not
            raise GatewayError(400, f"invalid request: {type(exc).__name__}: {exc}", "invalid_request") from exc
        messages = req.get("messages") or []
        sealer = self.gw.sealer
        before = sealer.unopened
        opened = open_sealed(messages, sealer)
        if opened is not messages:  # the client echoed sealed reasoning
            ctx.sealed = True
            req["messages"] = opened
            if sealer.unopened != before:
                ctx.warning = self.gw.seals_unopened()
        return req

    async def _serve(self, request: ServedRequest, door: Door) -> Any:
        ctx = Ctx(door.api_mode, request_id(), time.perf_counter(), self.gw.access_log, int(time.time()))
        held: str | None = None  # the model whose slot this request holds
        observe = ctx.observe = self.gw.observe
        ctx.recent = self.gw.recent
        if observe is not None and observe.tracer is not None:
            observe.started(ctx, _DOOR_PATHS[door.api_mode], request.headers)
        ticket = None  # teams: the request's reservation, settled once it is served
        try:
            if self.gw.draining:
                raise GatewayError(503, "the gateway is shutting down", "draining")
            keys = self.gw.keys
            # teams: who the (virtual) key is; else only whether it is one of the gateway's
            who = (await keys.identify(request.headers, passthrough=self.gw.passthrough_keys)
                   if self.gw.admission is not None else keys.check(request.headers, passthrough=self.gw.passthrough_keys))
            req = await self._decode(request, ctx, door)
            ctx.model = self.gw.models.resolve(req.get("model"))
            if ctx.unexpressible is not None and self.gw.routes(ctx.model):
                raise ctx.unexpressible  # routing reads the conversation, which did not decode
            ctx.model, route = self.gw.route(
                ctx.model, req.get("messages", []), request.headers.get("x-modelwire-conversation-id"))
            if route is not None:
                ctx.route = f"{route.kind}: {route.reason}"
            if self.gw.slots is not None:
                await self.gw.slots.acquire(ctx.model)
                held = ctx.model
            client = self.gw.client(ctx.model, request.headers)
            if self.gw.admission is not None:
                ticket = await self.gw.admission.admit(who, ctx.model, client, req, ctx.raw,
                                                         ctx.request_id)
            tags = None if self.gw.capture is None else self._capture_tags(request, who, ctx)
            if eligible(client, door, ctx.raw, None if ctx.unexpressible is not None else ctx.sealed):
                ctx.streaming = bool(req.get("stream"))
                forwarded = await forward(client.upstream(), door, req, ctx, request.headers,
                                          hand_over=ctx.unexpressible is None, tags=tags,
                                          meter=self.gw.usage_wanted)
                if forwarded is not None:
                    if held is not None:
                        held = self._hand_slot(forwarded, held)
                    if ticket is not None:
                        forwarded = await ticket.served(forwarded, ctx)
                    return forwarded
                ctx.lane_tries = 1  # counted in x-modelwire-attempts
            if ctx.unexpressible is not None:
                raise ctx.unexpressible  # translating needs the internal model
            if door.api_mode == "responses" and req.get("tools"):
                self._fit_tools(req, client, ctx)
            opts = client_options(req, door.api_mode)
            if tags is not None:
                opts["tags"] = tags
            ctx.streaming = bool(req.get("stream"))
            if ctx.streaming:
                streamed = await self._stream(client, req, opts, ctx, door)
                if held is not None:
                    held = self._hand_slot(streamed, held)
                if ticket is not None:
                    streamed = await ticket.served(streamed, ctx)
                return streamed
            before_upstream = time.perf_counter()
            completion = await client.complete(req.get("messages", []), **opts)
            t_done = time.perf_counter()
            # the Client's own encode and decode, not the wait
            work = completion.timing.work if completion.timing is not None else 0.0
            # a new message only where foreign reasoning had to be sealed (never at the
            # OpenAI door, whose clients keep every entry as it is)
            message = completion.message
            if door.seals and message.get("reasoning_details"):
                message = seal_message(message, door, self.gw.sealer)
            if message is not completion.message:
                import dataclasses

                completion = dataclasses.replace(completion, message=message)
            body = door.codec.encode_response(completion, req, **_answer(door, ctx, req))
            overhead = (before_upstream - ctx.started + work + time.perf_counter() - t_done) * 1000
            ctx.overhead = overhead / 1000
            ctx.upstream = f"{completion.provider}/{completion.model}"
            ctx.tokens = completion.usage["total_tokens"]
            ctx.completion = completion
            reply = Reply(200, orjson.dumps(body), served_headers(ctx, completion, overhead))
            if ticket is not None:
                reply = await ticket.served(reply, ctx, completion)
            return reply
        except (asyncio.CancelledError, ClientGone):
            ctx.status = 499  # the client went away: nobody to answer, and not our error
            raise
        except Exception as exc:  # noqa: BLE001  (every error leaves in the door's shape; logged there)
            return failure_reply(ctx, exc, door.api_mode)
        finally:
            if held is not None and self.gw.slots is not None:
                self.gw.slots.release(held)
            if ticket is not None:
                await ticket.failed(ctx)  # nothing once it was served
            if ctx.status != 200 or not ctx.streaming:
                ctx.log()
            if observe is not None and ctx.span_token is not None:
                observe.detach(ctx)

    def _capture_tags(self, request: ServedRequest, who: Any, ctx: Ctx) -> dict[str, str]:
        """What the capturing transport records of this request: its client key's name
        (never the key), the request id and the door (gateway.capture is on)."""
        from .capture import request_tags

        key = self.gw.keys.identity(request.headers, who, passthrough=self.gw.passthrough_keys)
        return request_tags(key, ctx.request_id, ctx.door)

    def _hand_slot(self, reply: Reply, held: str) -> str | None:
        """A streamed reply keeps the model's slot until its stream ends; what is left
        for ``_serve`` to release (``None``: nothing)."""
        if reply.stream is None:
            return held
        slots = self.gw.slots
        reply.stream = HeldStream(reply.stream, lambda: slots.release(held))
        return None

    def _fit_tools(self, req: Request, client: AsyncClient, ctx: Ctx) -> None:
        """Hosted tools the upstream cannot run: dropped, refused or mapped (see
        :mod:`modelwire.gateway.hosted`)."""
        fit = fit_tools(req.get("tools", []), "responses", client.api_mode, self.gw.unsupported_tools)
        if not fit.dropped and not fit.mapped:
            return
        req["tools"] = fit.tools
        ctx.dropped_tools = fit.dropped
        choice = req.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") in fit.dropped + fit.mapped:
            # a choice of a tool no longer sent: the model chooses (mapped: it has the name)
            req["tool_choice"] = "auto" if choice["type"] in fit.dropped else "required"

    async def _stream(self, client: AsyncClient, req: Request, opts: dict[str, Any], ctx: Ctx,
                      door: Door) -> Any:
        """Wait for the first upstream event (errors before it are plain HTTP errors),
        then stream. A client that disconnects cancels the upstream at once."""
        before_upstream = time.perf_counter()
        stream = client.stream(req.get("messages", []), **opts)
        # one write per upstream read, not one per event (the Client groups them)
        iterator = stream.batches().__aiter__()
        try:
            first = await iterator.__anext__()
        except StopAsyncIteration:
            first = None
        # the gateway's time before the hand-over, and the Client's own before its first wait
        overhead = (before_upstream - ctx.started + stream.work) * 1000
        ctx.first_token = time.perf_counter()
        ctx.overhead = overhead / 1000
        completion_so_far = getattr(stream, "partial", None) or getattr(stream, "completion", None)
        encoder = door.codec.StreamEncoder(request=req, **_answer(door, ctx, req))
        sealer = self.gw.sealer

        gw = self.gw

        async def body() -> AsyncIterator[bytes]:
            task = asyncio.current_task()
            gw.streams.add(task)
            if ctx.observe is not None:
                ctx.observe.stream_opened()
            feed = encoder.feed
            # OpenAI-compatible clients keep every reasoning entry as it is: nothing to seal
            seal = seal_events if door.seals else None
            try:
                if first:
                    yield b"".join([feed(ev) for ev in (seal(first, door, sealer) if seal else first)])
                async for batch in iterator:
                    data = b"".join([feed(ev) for ev in (seal(batch, door, sealer) if seal else batch)])
                    if data:
                        yield data
                yield encoder.close()
                done = ctx.completion = getattr(stream, "completion", None)
                if done is not None:
                    ctx.upstream = f"{done.provider}/{done.model}"
                    ctx.tokens = done.usage["total_tokens"]
            except ModelwireError as exc:
                ctx.status = from_exception(exc, door.api_mode).status
                yield encoder.feed(StreamError(scrubbed(exc)))
                yield encoder.close()
            except asyncio.CancelledError:
                if not gw.drain_expired:
                    raise  # the client went away: the upstream is already closed
                # shutdown grace is over: the upstream stream closed on the way out
                # (its lease released); tell the client in its protocol's words
                if task is not None:
                    task.uncancel()
                ctx.status = 503
                yield encoder.feed(StreamError(OverloadedError(
                    "the gateway is shutting down; retry the request", status=503)))
                yield encoder.close()
            finally:
                gw.streams.discard(task)
                if ctx.observe is not None:
                    ctx.observe.stream_closed()
                ctx.log()

        headers = {"x-request-id": ctx.request_id, "x-modelwire-overhead-ms": ms_text(overhead),
                   "cache-control": "no-cache", "x-accel-buffering": "no"}
        if completion_so_far is not None:
            headers.update({k: v for k, v in served_headers(ctx, completion_so_far, overhead).items()
                            if k != "x-modelwire-overhead-ms"})
        else:
            headers["x-modelwire-model"] = ctx.model
            if ctx.warning:
                headers["x-modelwire-warning"] = ctx.warning
            if ctx.dropped_tools:
                headers["x-modelwire-dropped-tools"] = ", ".join(ctx.dropped_tools)
        return Reply(200, headers=headers, content_type="text/event-stream", stream=body())


def make_handlers(gateway: Gateway) -> _Handlers:
    return _Handlers(gateway)


def _answer(door: Door, ctx: Ctx, req: Request) -> dict[str, Any]:
    """The answer's id, time and model for the door's codec. The model is the name the
    client asked for, streamed or not (the upstream's own id is in x-modelwire-model)."""
    return door.answer_args(ctx.request_id, ctx.created, req.get("model") or ctx.model)


