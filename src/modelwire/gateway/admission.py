"""Teams at the gateway: virtual keys at the door, admission before the upstream call,
settling and the spend record after it.

With ``teams.enabled`` off (the default) none of this runs: ``Gateway.admission`` is
None and the keys are the plain :class:`~.auth.GatewayKeys`. With it on, every request
presents a key: one of ``gateway.keys_env`` (unlimited, its spend recorded without a
key id) or a virtual key (``mw-...``), whose model list, rate limits and budget, and
its team's, apply. The refusals come out in the door's shape: 401 (unknown, revoked,
expired key), 403 (a model the key may not use; names the model and the key's name,
never the key), 429 with Retry-After (a rate limit, named), 402 (a spent budget, with
its reset time).

The cost header: ``x-modelwire-cost-usd`` on every answer that is not a stream, when
the serving model's price is known. A stream's headers go out before its usage is
known, so streams carry no cost header; their cost is in the spend record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from ..teams.gate import Gate, Ticket
from ..teams.model import Team, VirtualKey
from ..teams.store import BudgetExhausted, KeyRefused, ModelNotAllowed, RateLimited, TeamsRefusal
from .auth import GatewayKeys, presented_key
from .errors import GatewayError

if TYPE_CHECKING:
    from ..client import AsyncClient
    from ..config import Config


__all__ = ["Admission", "Admitted", "TeamKeys", "refusal"]

log = logging.getLogger("modelwire.gateway")

Identity = tuple[VirtualKey, Team | None] | None


def refusal(exc: TeamsRefusal) -> GatewayError:
    """A teams refusal as the client-facing error."""
    if isinstance(exc, RateLimited):
        return GatewayError(429, str(exc), "rate_limit_exceeded", retry_after=max(exc.retry_after, 1.0))
    if isinstance(exc, BudgetExhausted):
        return GatewayError(402, str(exc), "budget_exhausted")
    if isinstance(exc, ModelNotAllowed):
        return GatewayError(403, str(exc), "model_not_allowed")
    if isinstance(exc, KeyRefused):
        code = "invalid_key" if exc.reason == "unknown" else f"key_{exc.reason}"
        return GatewayError(401, str(exc), code)
    return GatewayError(403, str(exc), "refused")


class TeamKeys:
    """The gateway's client keys with teams on: ``gateway.keys_env`` keys and virtual
    keys; a request without either is refused, on loopback too."""

    __slots__ = ("env_keys", "gate")

    def __init__(self, env_keys: GatewayKeys, gate: Gate) -> None:
        self.env_keys, self.gate = env_keys, gate

    @property
    def required(self) -> bool:
        return True

    @property
    def env_name(self) -> str:
        return self.env_keys.env_name

    def _presented(self, headers: Mapping[str, str], passthrough: bool) -> str:
        key = headers.get("x-modelwire-key") if passthrough else presented_key(headers)
        if key is None:
            where = "x-modelwire-key" if passthrough else "Authorization: Bearer <key> or x-api-key"
            raise GatewayError(401, f"missing gateway key: send {where}", "missing_key")
        return key

    def check(self, headers: Mapping[str, str], *, passthrough: bool = False) -> None:
        """For the routes that do not meter (model listings, token counts): a virtual
        key's record may be read in this thread, at most once per key per cache TTL."""
        key = self._presented(headers, passthrough)
        if self.gate.is_virtual(key):
            try:
                self.gate.key_now(key)
            except TeamsRefusal as exc:
                raise refusal(exc) from None
            return
        self._env_check(headers, passthrough)

    def _env_check(self, headers: Mapping[str, str], passthrough: bool) -> None:
        """A key that is not virtual must be one of ``gateway.keys_env``'s; with none
        configured there is nothing it could be (GatewayKeys alone would let it through)."""
        if not self.env_keys.keys:
            raise GatewayError(401, "invalid gateway key", "invalid_key")
        self.env_keys.check(headers, passthrough=passthrough)

    def identity(self, headers: Mapping[str, str], who: Identity, *,
                 passthrough: bool = False) -> str | None:
        """The name of the key an identified request came with: a virtual key's name (as
        ``modelwire keys list`` shows it), else the ``keys_env`` key's fingerprint."""
        if who is not None:
            return who[0].name
        return self.env_keys.identity(headers, passthrough=passthrough)

    async def identify(self, headers: Mapping[str, str], *, passthrough: bool = False) -> Identity:
        """The virtual key and its team, or None for a ``keys_env`` key (unlimited)."""
        key = self._presented(headers, passthrough)
        if self.gate.is_virtual(key):
            try:
                return await self.gate.key_for(key)
            except TeamsRefusal as exc:
                raise refusal(exc) from None
        self._env_check(headers, passthrough)
        return None


class Admission:
    """The gateway's teams: its Gate (key cache, limiter, spend writer)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    @classmethod
    def from_config(cls, config: Config, *, workers: int = 1) -> Admission | None:
        """``workers``: the gateway processes serving this config on this machine (``serve
        --workers``); more than one shares the counters through the SQLite store's file."""
        teams = getattr(config, "teams", None)
        if teams is None or not teams.enabled:
            return None
        from ..teams.backends import open_limiter, open_store, store_url
        from ..teams.spendlog import SpendWriter

        store = open_store(store_url(config))
        prefix = getattr(getattr(config, "credential_pool", None), "prefix", "modelwire:")
        limiter = open_limiter(teams.limiter, store, prefix=prefix, workers=workers)
        writer = SpendWriter(store, max_rows=teams.spend_queue, interval=teams.spend_flush_s)
        return cls(Gate(store, limiter, writer, ttl=teams.key_cache_ttl,
                        default_max_tokens=teams.default_max_tokens))

    async def admit(self, who: Identity, model: str, client: AsyncClient, req: Mapping[str, Any],
                    raw: bytes, request_id: str = "") -> Admitted:
        """Reserve the request's worst case, or raise its refusal (a GatewayError).
        The input estimate is the body's size / 3: above the token count of any
        English or code prompt (about 4 bytes a token, plus JSON), so settling gives back."""
        key, team = who if who is not None else (None, None)
        max_tokens = req.get("max_tokens") or req.get("max_completion_tokens")
        try:
            ticket = await self.gate.admit(key, team, model, getattr(client, "price", None),
                                           len(raw) // 3,
                                           max_tokens if isinstance(max_tokens, int) else None,
                                           request_id)
        except TeamsRefusal as exc:
            raise refusal(exc) from None
        return Admitted(ticket, client)

    async def close(self) -> None:
        """The gateway's shutdown: write the spend record's last rows."""
        import asyncio

        await self.gate.limiter.close()
        if self.gate.writer is not None:
            await asyncio.to_thread(self.gate.writer.close)
        self.gate.store.close()


class Admitted:
    """One admitted request at the gateway: ``served`` once it has a reply (a stream's
    settles when the stream ends), else ``failed``."""

    __slots__ = ("client", "ticket")

    def __init__(self, ticket: Ticket, client: AsyncClient) -> None:
        self.ticket, self.client = ticket, client

    async def served(self, reply: Any, ctx: Any, completion: Any = None) -> Any:
        """Settle a served reply and add its cost header (not to streams: see the module)."""
        ticket = self.ticket
        if reply.stream is not None:
            ticket.handed = True
            reply.stream = _metered(reply.stream, ticket, ctx)
            return reply
        if completion is None:
            completion = ctx.completion  # the lane's: read off the body it relayed
        if completion is not None:
            usage, cost = completion.usage, completion.cost
            provider, model = completion.provider, completion.model
        else:
            usage, cost, provider, model = None, None, "", ""
        if cost is not None:
            reply.headers["x-modelwire-cost-usd"] = f"{cost:.6f}"
        await ticket.settle(request_id=ctx.request_id, status=reply.status, usage=usage,
                            cost_usd=cost, provider=provider, model_served=model,
                            latency_ms=(time.perf_counter() - ctx.started) * 1000)
        return reply

    async def failed(self, ctx: Any) -> None:
        """Nothing was served (an error answer): release the reservation, record the row.
        Nothing for a ticket that was settled or handed to its stream."""
        if self.ticket.handed:
            return
        await self.ticket.settle(request_id=ctx.request_id, status=ctx.status, usage=None,
                                 cost_usd=None,
                                 latency_ms=(time.perf_counter() - ctx.started) * 1000)


async def _metered(stream: AsyncIterator[bytes], ticket: Ticket, ctx: Any) -> AsyncIterator[bytes]:
    """``stream``, settling ``ticket`` when it ends (or is cut) from the stream's usage:
    the translating path leaves its Completion on ``ctx.completion``, the lane what it
    read off the bytes it relayed (:class:`~.metering.Relayed`)."""
    try:
        async for chunk in stream:
            yield chunk
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
        done = getattr(ctx, "completion", None)
        if done is not None:
            usage, cost, provider, model = done.usage, done.cost, done.provider, done.model
        else:
            usage, cost, provider, model = None, None, "", ""
        try:
            await ticket.settle(request_id=ctx.request_id, status=ctx.status, usage=usage,
                                cost_usd=cost, provider=provider, model_served=model,
                                latency_ms=(time.perf_counter() - ctx.started) * 1000,
                                cut=usage is None)
        except Exception:  # the answer went out; a settle failure must not cut it
            log.exception("%s: settling the request's spend failed", ctx.request_id)
