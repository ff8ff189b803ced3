"""The gateway's ASGI app: three front doors over the Client.

``create_app(config)`` returns the ASGI app (Starlette, with plain ASGI endpoints)
serving ``/v1/chat/completions``, ``/v1/messages`` (+ ``/count_tokens``),
``/v1/responses``, ``/v1/models`` and ``/health``. Every request: authenticate, bound the body, decode with the
door's codec, resolve the model, call the Client, encode back with the same
codec. Errors come out in the door's own shape (:mod:`.errors`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ModelwireError
from .auth import GatewayKeys
from .clients import ClientCache
from .limits import Limits
from .models import ModelTable
from .seal import Sealer

if TYPE_CHECKING:
    from types import FrameType

    from starlette.types import Receive, Scope, Send

    from ..client import AsyncClient
    from ..config import Config, GatewayConfig

__all__ = ["FrontDoors", "Gateway", "create_app"]

log = logging.getLogger("modelwire.gateway")

DEFAULT_MAX_BODY = 32 * 1024 * 1024


class Gateway:
    """State shared by all requests: config, keys, model table, sealer, clients."""

    def __init__(self, config: Config, *, environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.config = config
        gw = config.gateway
        self.keys = GatewayKeys.from_env(gw.keys_env or "MODELWIRE_GATEWAY_KEYS", env)
        self.admission: Any = None  # teams (gateway.admission): off by default
        if config.teams.enabled:
            from .admission import Admission, TeamKeys

            # serve --workers N tells its workers N (cli/serve.py)
            workers = int(env.get("MODELWIRE_SERVE_WORKERS") or 1)
            self.admission = Admission.from_config(config, workers=workers)
            self.keys = TeamKeys(self.keys, self.admission.gate)  # type: ignore[assignment]
        self.admin_keys = GatewayKeys.from_env(gw.admin_keys_env or "MODELWIRE_ADMIN_KEYS", env)
        self.models = ModelTable.from_config(config)
        self.limits = Limits.from_config(gw)
        self.slots: Any = None  # gateway.max_concurrent_per_model, when set
        if self.limits.max_concurrent_per_model is not None:
            from .slots import ModelSlots

            self.slots = ModelSlots(self.limits.max_concurrent_per_model, self.limits.queue_timeout)
        self.max_body = int(gw.max_body_bytes or DEFAULT_MAX_BODY)
        self.passthrough_keys = bool(gw.client_key_passthrough)
        self.access_log = bool(gw.access_log)
        self.unsupported_tools = str(gw.unsupported_tools or "drop")
        from ..resilience import RetryPolicy

        # a request is not held for a long Retry-After: its client's SDK retries itself
        self.retry = RetryPolicy(give_up_over=float(gw.max_retry_wait))
        from ..codecs.cache import EncodeCache

        # one for all the gateway's clients: an agent's tools are converted once, whichever
        # model or client key serves its turns
        self.encode_cache = EncodeCache()
        from .kept_body import KeptBody

        # an agent's tools and history, parsed once: found again by their bytes in later bodies
        self.kept_body = KeptBody()
        seal_env = self.seal_env = gw.seal_secret_env or "MODELWIRE_SEAL_SECRET"
        secret = env.get(seal_env)
        self.sealer = Sealer(secret) if secret else Sealer()
        if self.sealer.ephemeral:
            log.info("no %s set: sealed reasoning will not survive a restart", seal_env)
        self._clients = ClientCache(_configured_names(config), self.limits.max_adhoc_clients, self._retire)
        routing = config.smart_routing
        self.routing_on = bool(routing and routing.enabled and routing.cheap_model)
        self.routing_memory: Any = None
        if self.routing_on:
            from ..routing import RoutingMemory

            self.routing_memory = RoutingMemory()
        self._seal_logged: float | None = None  # when unopened seals were last logged
        self._closing: set[Any] = set()  # evicted clients' close tasks, kept from the collector
        self.draining = False
        self.drain_expired = False
        self.grace = float(env.get("MODELWIRE_SHUTDOWN_GRACE", "30"))
        self.streams: set[Any] = set()  # tasks serving a stream right now
        self.loop: Any = None  # the event loop serving requests, once started
        self.observe = _observer(config, gw, env, self.credential_states)  # None: metrics and traces off
        self.capture = _capture(gw)  # None: gateway.capture is off
        self.metrics_keys = GatewayKeys.from_env(
            gw.metrics.keys_env or "MODELWIRE_METRICS_KEYS", env)
        # the status page's recent requests (/ui): kept only while admin keys can open it
        self.recent: Any = None
        if self.admin_keys.required:
            from .ui_recent import RecentRequests

            self.recent = RecentRequests()
        # the lane reads usage off the bytes it relays (and embeddings keep theirs) only for
        # someone who counts it: metrics, teams, the status page
        self.usage_wanted = (self.admission is not None or self.recent is not None
                             or (self.observe is not None and self.observe.metrics is not None))

    def warm_up(self) -> None:
        """Build and warm (:meth:`AsyncClient.warm <modelwire.AsyncClient.warm>`) each
        configured model's client and load the codecs at startup, so the first requests
        do not pay for imports and tables (and startup's objects can be frozen). A model
        that cannot be built now still gets its error per request."""
        from .. import codecs  # noqa: F401 - importing it loads every codec (CODECS)

        for name in self.models.names:
            try:
                self.client(name).warm()
            except ModelwireError as exc:  # reported where it matters: on its requests
                log.debug("model %s not prepared at startup: %s", name, exc)

    def begin_drain(self) -> None:
        """SIGTERM: refuse new requests; streams get ``grace`` seconds, then end with
        their protocol's error event (which closes the upstream and releases leases)."""
        if self.draining or self.loop is None:
            return
        self.draining = True
        log.info("draining: %d streams get %.0f s to finish", len(self.streams), self.grace)
        self.loop.call_soon_threadsafe(self.loop.call_later, self.grace, self._expire)

    def _expire(self) -> None:
        self.drain_expired = True
        for task in list(self.streams):
            task.cancel("modelwire gateway shutting down")

    def routes(self, model: str) -> bool:
        """Whether smart routing decides requests for ``model`` (from their conversation)."""
        return bool(self.routing_on) and model == self.config.default_model

    def route(self, model: str, messages: list[Any], conversation_id: str | None) -> tuple[str, Any]:
        """Smart routing for requests to the default model: a simple turn goes to the
        cheap model; with an ``x-modelwire-conversation-id`` header the choice is
        sticky for that conversation (escalation only goes up)."""
        if not self.routes(model):
            return model, None
        from ..routing import route_messages

        sticky = self.routing_memory.state(conversation_id) if conversation_id else None
        route = route_messages(messages, self.config, sticky_state=sticky, primary=model)
        return route.model_name, route

    def client(self, model: str, headers: Mapping[str, str] | None = None) -> Any:
        """The shared client for ``model``; with ``client_key_passthrough``, one per
        (model, client key) holding that key (bounded: the least recent are closed)."""
        key = None
        if self.passthrough_keys and headers is not None:
            from .auth import presented_key

            key = presented_key(headers)
        slot = model if key is None else f"{model}\0{_fingerprint(key)}"
        client = self._clients.get(slot)
        if client is None:
            from ..client import AsyncClient
            from ..transport import AsyncHTTPTransport

            observer = self.observe.client_observer if self.observe is not None else None
            # as many upstream connections per origin as the gateway takes client
            # connections: with the transport's default (100), the 101st concurrent stream
            # toward one provider waited, its client connection open, for one to finish
            transport: Any = AsyncHTTPTransport(limit_per_host=self.limits.max_connections)
            if self.capture is not None:
                from .capture import CapturingTransport

                transport = CapturingTransport(transport, self.capture, model=model)
            client = AsyncClient(model, config=self.config, api_key=key, retry=self.retry,
                                 encode_cache=self.encode_cache, transport=transport,
                                 observer=observer)
            self._clients.put(slot, client)
        return client

    def _retire(self, client: AsyncClient) -> None:
        """An evicted client: closed in the loop (its running streams finish first)."""
        if self.loop is not None:
            task = self.loop.create_task(client.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def seals_unopened(self) -> str:
        """A request held seals that did not open: logged at most once a minute, with
        what to set; the text is the answer's ``x-modelwire-warning``."""
        import time

        warning = (f"sealed reasoning did not open under this gateway's secret and was dropped; "
                   f"give every instance the same {self.seal_env}")
        now = time.monotonic()
        if self._seal_logged is None or now - self._seal_logged >= 60:
            self._seal_logged = now
            log.warning("%s (%d unopened so far; tampered envelopes count too)", warning, self.sealer.unopened)
        return warning

    def health(self) -> dict[str, Any]:
        """``ok``, or ``degraded`` with the reasons: a Redis credential store that does not
        answer (the pools fail open to local state), or a model whose every credential is
        cooling (rate-limited: ``available_in_s``, when the first frees up) or dead (a
        revoked key): its requests fail or fall back until then; a teams limiter whose
        Redis does not answer (each instance then limits on its own). Counts, never secrets."""
        problems = []
        for name, client in list(self._clients.items()):
            for up in client.upstreams():
                state = up.health()  # None: no pool, or none opened yet
                if state is None:
                    continue
                if state.store != "ok":
                    problems.append({"model": name, "provider": up.provider,
                                     "credential_store": state.store})
                if state.count and not state.usable:
                    problem: dict[str, Any] = {
                        "model": name, "provider": up.provider,
                        "credentials": "all cooling" if state.available_in is not None else "all dead",
                        "count": state.count}
                    if state.available_in is not None:
                        problem["available_in_s"] = max(0, round(state.available_in))
                    problems.append(problem)
        writer = None if self.admission is None else self.admission.gate.writer
        if writer is not None and writer.dropped:
            problems.append({"spend_record": "rows dropped: the teams store is not keeping up",
                             "dropped": writer.dropped, "pending": writer.pending})
        limiter = self.admission.gate.limiter if self.admission is not None else None
        limiter_health = getattr(limiter, "health", "ok")  # the Redis limiter has one
        if limiter_health != "ok":  # Redis away: each instance limits on its own
            problems.append({"teams_limiter": limiter_health})
        return {
            "status": "degraded" if problems or self.draining else "ok",
            "draining": self.draining,
            "models": len(self.models.names),
            "problems": problems,
            "seals_unopened": self.sealer.unopened,
            "limits": self.limits.as_dict(),
        }

    def opened_clients(self) -> list[tuple[str, Any]]:
        """``(slot, client)`` of every client made so far: a model name, or with client
        key passthrough the model name, a NUL and the key's fingerprint."""
        return list(self._clients.items())

    def credential_states(self) -> list[tuple[str, str, int]]:
        """``(provider, state, count)`` over the pools opened so far (``/metrics``)."""
        counts: dict[tuple[str, str], int] = {}
        seen: set[str] = set()
        for client in list(self._clients.values()):
            for up in client.upstreams():
                health = up.health()
                if health is None or health.pool in seen:
                    continue
                seen.add(health.pool)
                for state, n in health.states:
                    counts[up.provider, state] = counts.get((up.provider, state), 0) + n
        return [(provider, state, n) for (provider, state), n in sorted(counts.items())]

    def metrics_reply(self, headers: Mapping[str, str]) -> Any:
        """``GET /metrics``: the exposition text, for a scraper holding a metrics key
        (``gateway.metrics.keys_env``; unset: the gateway's own keys)."""
        from .errors import GatewayError
        from .request import error_response, request_id
        from .serving import Reply

        if self.observe is None or self.observe.metrics is None:
            return Reply(404, b'{"error": "metrics are off (gateway.metrics.enabled)"}')
        keys = self.metrics_keys if self.metrics_keys.required else self.keys
        try:
            keys.check(headers)
        except GatewayError as exc:
            return error_response(exc.http, "chat_completions", request_id())
        from ..observe.metrics import CONTENT_TYPE

        return Reply(200, self.observe.metrics.render(), content_type=CONTENT_TYPE)

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
        if self.admission is not None:
            await self.admission.close()  # the spend record's last rows
        if self.observe is not None:
            self.observe.close()
        if self.capture is not None:
            self.capture.close()


def _capture(gw: Any) -> Any:
    """The request capture ``gateway.capture`` asks for (``None``: off, the default)."""
    spec = gw.capture
    if not spec.dir or not (spec.models or spec.keys):
        return None
    from .capture import Capture, CaptureSettings

    return Capture(CaptureSettings(spec.dir, spec.models, spec.keys, failing_only=spec.failing_only,
                                   for_s=spec.for_s, max_bytes=spec.max_bytes, files=spec.files,
                                   redact=spec.redact))


def _observer(config: Config, gw: GatewayConfig, env: Mapping[str, str], credentials: Any) -> Any:
    """Metrics and traces, as ``gateway.metrics`` and ``gateway.tracing`` say (``None``:
    both off). ``modelwire serve`` says where it binds in MODELWIRE_SERVE_HOST."""
    from ..observe.gateway import GatewayObserver
    from .auth import is_loopback

    keys_env = gw.metrics.keys_env or "MODELWIRE_METRICS_KEYS"
    return GatewayObserver.from_config(
        config, loopback=is_loopback(env.get("MODELWIRE_SERVE_HOST") or "127.0.0.1"),
        metrics_keys=GatewayKeys.from_env(keys_env, env).keys, credentials=credentials)


def _configured_names(config: Config) -> frozenset[str]:
    """Model strings the config names (models, alias targets, the default, the cheap
    model): their clients are pinned, never evicted."""
    names = set(config.models)
    names.update(config.gateway.aliases.values())
    for name in (config.default_model, config.smart_routing.cheap_model):
        if name:
            names.add(name)
    return frozenset(names)


def _fingerprint(key: str) -> str:
    import hashlib

    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _chain_sigterm(gateway: Gateway) -> None:
    """Run ``begin_drain`` on SIGTERM before uvicorn's own handler (main thread only:
    an in-process test server has no signals to catch)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(sig: int, frame: FrameType | None) -> None:
        gateway.begin_drain()
        if callable(previous):
            previous(sig, frame)

    signal.signal(signal.SIGTERM, on_term)


def _freeze_startup_objects() -> None:
    """Move what startup built (modules, config, tables) out of the collector's reach:
    a full collection then walks only objects made by requests, which keeps its pauses,
    and with them the gateway's p99 latency, short. Only in a server's main thread: an
    in-process test server must not freeze its host's objects."""
    import gc
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    gc.collect()
    gc.freeze()


def create_app(config: Config | None = None, *, environ: dict[str, str] | None = None) -> Any:
    """The ASGI app for ``config`` (a loaded :class:`modelwire.config.Config`)."""
    from contextlib import asynccontextmanager

    import orjson
    from starlette.applications import Starlette
    from starlette.routing import Route

    from .asgi import Endpoint
    from .serving import Reply

    if config is None:
        from ..config import load_config

        config = load_config()
    gateway = Gateway(config, environ=environ)

    from .handlers import make_handlers

    handlers = make_handlers(gateway)
    from .embeddings import EmbeddingsDoor  # POST /v1/embeddings

    @asynccontextmanager
    async def lifespan(app: Any):
        import asyncio

        loop = gateway.loop = asyncio.get_running_loop()
        if gateway.observe is not None:
            gateway.observe.start(loop)
        _chain_sigterm(gateway)
        gateway.warm_up()
        _freeze_startup_objects()
        yield
        await gateway.aclose()

    async def health(request: Any) -> Any:
        return Reply(200, orjson.dumps(gateway.health()))

    async def metrics(request: Any) -> Any:
        return gateway.metrics_reply(request.headers)

    # Claude Code sends HEAD / before its first request; a 404 there reads as "not a
    # gateway". No auth and nothing secret: the name, the version and the doors.
    from .. import __version__

    identity = orjson.dumps({"name": "modelwire", "version": __version__, "doors": [
        "/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/models"]})

    async def root(request: Any) -> Any:
        return Reply(200, identity)

    # Starlette routes; the endpoints are plain ASGI (see .asgi)
    routes = [
        Route("/v1/chat/completions", Endpoint(handlers.chat_completions), methods=["POST"]),
        Route("/v1/messages", Endpoint(handlers.messages), methods=["POST"]),
        Route("/v1/messages/count_tokens", Endpoint(handlers.count_tokens), methods=["POST"]),
        Route("/v1/responses", Endpoint(handlers.responses), methods=["POST"]),
        Route("/v1/models", Endpoint(handlers.models), methods=["GET"]),
        Route("/v1/embeddings", Endpoint(EmbeddingsDoor(gateway)), methods=["POST"]),
        # ids may hold a slash (provider/model): the path converter takes the rest
        Route("/v1/models/{model_id:path}", Endpoint(handlers.model), methods=["GET"]),
        Route("/health", Endpoint(health), methods=["GET"]),
        Route("/metrics", Endpoint(metrics), methods=["GET"]),
        *_admin_routes(gateway, Endpoint),
        *_ui_routes(gateway, Endpoint),
        Route("/", Endpoint(root), methods=["GET", "HEAD"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    # Starlette answers a path with a trailing slash with a redirect built from the
    # client's Host header (an open redirect): such paths are a plain 404 instead
    app.router.redirect_slashes = False
    app.state.gateway = gateway
    # exact paths only: a route with parameters needs Starlette's matching (and the admin
    # API and the status page read their scope: methods, query strings, the scheme)
    return FrontDoors(app, {(r.path, m): r.app for r in routes for m in (r.methods or ())
                            if "{" not in r.path and not r.path.startswith(("/admin", "/ui"))})


def _admin_routes(gateway: Gateway, endpoint: Any) -> list[Any]:
    """``/admin/*`` (:mod:`.admin`): keys, teams, spend and captures."""
    from starlette.routing import Route

    from .admin import AdminAPI

    api = AdminAPI(gateway)
    return [
        Route("/admin/keys", endpoint(api.keys), methods=["GET", "POST"]),
        Route("/admin/keys/{ref}", endpoint(api.key), methods=["GET", "PATCH", "DELETE"]),
        Route("/admin/teams", endpoint(api.teams), methods=["GET", "POST"]),
        Route("/admin/teams/{ref}", endpoint(api.team), methods=["GET", "PATCH"]),
        Route("/admin/spend", endpoint(api.spend), methods=["GET"]),
        Route("/admin/captures", endpoint(api.captures), methods=["GET"]),
        Route("/admin/captures/{capture_id:path}", endpoint(api.capture), methods=["GET"]),
    ]


def _ui_routes(gateway: Gateway, endpoint: Any) -> list[Any]:
    """``/ui*`` (:mod:`.ui`): the status page, its JSON and its sign-in."""
    from starlette.routing import Route

    from .ui import StatusPage

    page = StatusPage(gateway)
    return [
        Route("/ui", endpoint(page.page), methods=["GET"]),
        Route("/ui/data", endpoint(page.data), methods=["GET"]),
        Route("/ui/login", endpoint(page.login_form), methods=["GET"]),
        Route("/ui/login", endpoint(page.login), methods=["POST"]),
        Route("/ui/logout", endpoint(page.logout), methods=["POST"]),
    ]


class FrontDoors:
    """The gateway's ASGI app: an exact (path, method) match goes straight to its
    endpoint; everything else (lifespan, unknown paths, wrong methods, HEAD) goes
    through Starlette, whose middleware and route matching the front doors never need.
    ``direct`` holds the same endpoints' handlers, for the gateway's own HTTP protocol
    (:mod:`.h1server`); both reach them through :func:`.serving.serve`."""

    __slots__ = ("direct", "fast", "starlette")

    def __init__(self, starlette: Any, fast: dict[tuple[str, str], Any]) -> None:
        self.starlette = starlette
        self.fast = fast
        # not HEAD: the protocol sends a HEAD answer's head only through ASGI
        self.direct = {key: endpoint.handler for key, endpoint in fast.items() if key[1] != "HEAD"}

    @property
    def state(self) -> Any:
        return self.starlette.state

    @property
    def limits(self) -> Limits:
        """What the gateway's HTTP protocol enforces per connection (:mod:`.h1server`)."""
        limits: Limits = self.starlette.state.gateway.limits
        return limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            endpoint = self.fast.get((scope["path"], scope["method"]))
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await self.starlette(scope, receive, send)
