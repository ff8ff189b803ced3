"""The emulator's Starlette app: model endpoints (also under ``/p/<profile>``), OAuth,
and the loopback-only control endpoints.

Control endpoints (test facilities, loopback clients only):

* ``GET /__emulator/requests[?since=N][&endpoint=E]``:
  ``{"requests": [...], "counters": {...}, "faults": [...]}``
  Each request: ``n``, ``time``, ``method``, ``path``, ``endpoint``, ``profile``, ``model``,
  ``stream``, ``headers`` (credentials masked), ``body``, ``status``, ``fault``, ``error``,
  ``completed``, ``disconnected``, ``disconnected_at``, ``chunks_sent``, ``client_port``.
* ``DELETE /__emulator/requests``: empty the log and counters.
* ``GET|POST|DELETE /__emulator/faults``: list, replace (a JSON list of fault rules, or
  one rule), clear.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from .endpoints import Backend
from .faults import parse_fault
from .response import ABORT_KEY

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


__all__ = ["build_app"]

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_MODEL_ROUTES = (
    ("/v1/chat/completions", "chat_completions", ["POST"]),
    ("/v1/messages", "messages", ["POST"]),
    ("/v1/messages/count_tokens", "count_tokens", ["POST"]),
    ("/v1/responses", "responses", ["POST"]),
    ("/v1/models", "models", ["GET"]),
    ("/v1/embeddings", "embeddings", ["POST"]),  # served by .embeddings
)


def _model_endpoint(backend: Backend, endpoint: str) -> Any:
    async def handler(request: Request) -> Any:
        raw = await request.body()
        profile = request.path_params.get("profile")
        # the client's port tells connections apart: tests assert connection reuse with it
        port = request.client.port if request.client else None
        return await backend.handle(endpoint, profile, request.method, request.url.path,
                                    request.headers, raw, client_port=port)

    return handler


def _loopback_only(request: Request) -> Response | None:
    host = request.client.host if request.client else ""
    if host not in _LOOPBACK:
        return JSONResponse({"error": "control endpoints answer loopback clients only"}, 403)
    return None


class _EmulatorApp(Starlette):
    """Starlette that also hands the connection's ``abort()`` to the model endpoints, for
    the ``reset_before`` fault. Only the outermost app sees uvicorn's own ``send`` (a bound
    method of the request cycle, which owns the transport); Starlette wraps it inside."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            if transport is not None and hasattr(transport, "abort"):
                scope[ABORT_KEY] = transport.abort
        await super().__call__(scope, receive, send)


def build_app(backend: Backend) -> Starlette:
    async def requests_endpoint(request: Request) -> Response:
        if (denied := _loopback_only(request)) is not None:
            return denied
        if request.method == "DELETE":
            backend.state.reset()
            return Response(status_code=204)
        try:
            since = int(request.query_params.get("since", 0))
        except ValueError:
            return JSONResponse({"error": "since must be an integer"}, 400)
        snap = backend.state.snapshot(since, request.query_params.get("endpoint"))
        return JSONResponse(dict(snap, faults=backend.faults.snapshot()))

    async def faults_endpoint(request: Request) -> Response:
        if (denied := _loopback_only(request)) is not None:
            return denied
        if request.method == "DELETE":
            backend.faults.clear()
            return Response(status_code=204)
        if request.method == "POST":
            try:
                raw = await request.json()
                rules = raw if isinstance(raw, list) else [raw]
                backend.faults.set([parse_fault(r) for r in rules])
            except ValueError as exc:
                return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"faults": backend.faults.snapshot()})

    async def authorize(request: Request) -> Response:
        status, headers, body = backend.oauth.authorize(dict(request.query_params))
        if status == 302:
            return RedirectResponse(headers["location"], status_code=302)
        return JSONResponse(body, status)

    async def token(request: Request) -> Response:
        # form-encoded by the OAuth spec; parsed here (starlette's form() needs python-multipart)
        form = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
        backend.state.record(method="POST", path="/oauth/token", endpoint="oauth", profile=None,
                             model=None, headers={}, body={"grant_type": form.get("grant_type")},
                             stream=False)
        status, body = backend.oauth.token(form)
        return JSONResponse(body, status, headers={"cache-control": "no-store"})

    routes = []
    for path, endpoint, methods in _MODEL_ROUTES:
        handler = _model_endpoint(backend, endpoint)
        routes.append(Route(path, handler, methods=methods))
        routes.append(Route("/p/{profile}" + path, handler, methods=methods))
    routes += [
        Route("/oauth/authorize", authorize, methods=["GET"]),
        Route("/oauth/token", token, methods=["POST"]),
        Route("/__emulator/requests", requests_endpoint, methods=["GET", "DELETE"]),
        Route("/__emulator/faults", faults_endpoint, methods=["GET", "POST", "DELETE"]),
    ]
    return _EmulatorApp(routes=routes)
