"""The admin HTTP API: keys, teams and spend, for automation.

``/admin/keys`` (GET list, POST create: the answer holds the new key once),
``/admin/keys/{id or name}`` (GET, PATCH, DELETE = revoke), ``/admin/teams`` (GET,
POST), ``/admin/teams/{id or name}`` (GET, PATCH), ``/admin/spend?by=key|team|model&since=7d``;
``/admin/captures?limit=N`` and ``/admin/captures/{id}`` (GET: the request capture's
index and one captured exchange, :mod:`.capture`; these need no teams).
Protected by the keys in ``gateway.admin_keys_env`` (separate from client keys: a
client key is refused here, an admin key is refused at the doors). With no admin keys
set, or teams off, every path answers 404 saying what to set. Store calls run in a
thread; a change made here takes effect on this instance at once (its key cache is
dropped) and on others within ``teams.key_cache_ttl``.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Callable
from typing import Any

import orjson

from ..teams.admin import KeyAdmin, key_view, team_view, total_view
from .serving import Reply

__all__ = ["AdminAPI"]

_MAX_BODY = 64 * 1024


def _error(status: int, message: str, code: str) -> Reply:
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
            413: "invalid_request_error"}.get(status, "server_error")
    return Reply(status, orjson.dumps({"error": {"message": message, "type": kind, "code": code}}))


class AdminAPI:
    def __init__(self, gateway: Any) -> None:
        self.gw = gateway
        admission = gateway.admission
        self.admin = None if admission is None else KeyAdmin(admission.gate.store)

    def _refusal(self, request: Any, *, teams: bool = True) -> Reply | None:
        keys = self.gw.admin_keys
        if not keys.required:
            return _error(404, f"the admin API is off: set {keys.env_name} (gateway.admin_keys_env) "
                          "to one or more admin keys", "admin_off")
        if teams and self.admin is None:
            return _error(404, "the admin API needs teams: set teams.enabled: true", "teams_off")
        from .errors import GatewayError

        try:
            keys.check(request.headers)
        except GatewayError as exc:
            return _error(401, exc.http.message.replace("gateway key", "admin key"), "invalid_admin_key")
        return None

    async def _run(self, request: Any, work: Callable[..., Any], *args: Any) -> Reply:
        refused = self._refusal(request)
        if refused is not None:
            return refused
        try:
            status, payload = await asyncio.to_thread(work, *args)
        except LookupError as exc:
            return _error(404, str(exc.args[0] if exc.args else exc), "not_found")
        except ValueError as exc:
            return _error(400, str(exc), "invalid_request")
        if status in (200, 201) and work is not self._spend:
            self.gw.admission.gate.forget()
        return Reply(status, orjson.dumps(payload))

    async def _fields(self, request: Any) -> dict[str, Any] | Reply:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > _MAX_BODY:
                return _error(413, f"request body is larger than {_MAX_BODY} bytes", "body_too_large")
            chunks.append(chunk)
        try:
            data = orjson.loads(b"".join(chunks) or b"{}")
        except orjson.JSONDecodeError as exc:
            return _error(400, f"request body is not valid JSON: {exc}", "invalid_json")
        if not isinstance(data, dict):
            return _error(400, "request body must be a JSON object", "invalid_json")
        return data

    # ------------------------------------------------------------ endpoints
    async def keys(self, request: Any) -> Reply:
        if request.scope["method"] == "GET":
            return await self._run(request, self._list_keys)
        fields = await self._fields(request)
        if isinstance(fields, Reply):
            return fields
        return await self._run(request, self._create_key, fields)

    async def key(self, request: Any) -> Reply:
        ref = request.scope["path_params"]["ref"]
        method = request.scope["method"]
        if method == "GET":
            return await self._run(request, self._get_key, ref)
        if method == "DELETE":
            return await self._run(request, self._revoke_key, ref)
        fields = await self._fields(request)
        if isinstance(fields, Reply):
            return fields
        return await self._run(request, self._update_key, ref, fields)

    async def teams(self, request: Any) -> Reply:
        if request.scope["method"] == "GET":
            return await self._run(request, self._list_teams)
        fields = await self._fields(request)
        if isinstance(fields, Reply):
            return fields
        return await self._run(request, self._create_team, fields)

    async def team(self, request: Any) -> Reply:
        ref = request.scope["path_params"]["ref"]
        if request.scope["method"] == "GET":
            return await self._run(request, self._get_team, ref)
        fields = await self._fields(request)
        if isinstance(fields, Reply):
            return fields
        return await self._run(request, self._update_team, ref, fields)

    async def spend(self, request: Any) -> Reply:
        query = urllib.parse.parse_qs(request.scope.get("query_string", b"").decode("latin-1"))
        by = (query.get("by") or ["key"])[0]
        since = (query.get("since") or ["30d"])[0]
        return await self._run(request, self._spend, by, since)

    async def captures(self, request: Any) -> Reply:
        """``GET /admin/captures?limit=N``: the newest captures first (:func:`.capture.captures_view`)."""
        refused = self._refusal(request, teams=False)
        if refused is not None:
            return refused
        from .capture import MAX_LIMIT, captures_view

        query = urllib.parse.parse_qs(request.scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("limit") or ["100"])[0]
        if not given.isdigit() or int(given) < 1:
            return _error(400, f"limit must be a whole number from 1 to {MAX_LIMIT}, got {given!r}",
                          "invalid_request")
        view = await asyncio.to_thread(captures_view, self.gw.capture,
                                       self.gw.config.gateway.capture.dir, min(int(given), MAX_LIMIT))
        return Reply(200, orjson.dumps(view))

    async def capture(self, request: Any) -> Reply:
        """``GET /admin/captures/{id}``: one captured exchange, redacted as it was written."""
        refused = self._refusal(request, teams=False)
        if refused is not None:
            return refused
        from .capture import read

        capture_id = request.scope["path_params"]["capture_id"]
        capture, folder = self.gw.capture, self.gw.config.gateway.capture.dir
        found = None
        if capture is not None:
            found = await asyncio.to_thread(capture.read, capture_id)
        elif folder:  # capture is off: what it wrote before is still there
            found = await asyncio.to_thread(read, folder, capture_id)
        if found is None:
            return _error(404, f"no capture with id {capture_id[:40]!r}", "not_found")
        return Reply(200, orjson.dumps(found))

    # ------------------------------------------------------------ work (in a thread)
    def _list_keys(self) -> tuple[int, Any]:
        admin = self.admin
        assert admin is not None
        return 200, {"keys": [key_view(k, admin.spent_now(k)) for k in admin.store.list_keys()]}

    def _get_key(self, ref: str) -> tuple[int, Any]:
        assert self.admin is not None
        key = self.admin.key(ref)
        return 200, key_view(key, self.admin.spent_now(key))

    def _create_key(self, fields: dict[str, Any]) -> tuple[int, Any]:
        assert self.admin is not None
        key, secret = self.admin.create_key(fields)
        return 201, {**key_view(key), "key": secret}

    def _update_key(self, ref: str, fields: dict[str, Any]) -> tuple[int, Any]:
        assert self.admin is not None
        return 200, key_view(self.admin.update_key(ref, fields))

    def _revoke_key(self, ref: str) -> tuple[int, Any]:
        assert self.admin is not None
        return 200, key_view(self.admin.revoke_key(ref))

    def _list_teams(self) -> tuple[int, Any]:
        admin = self.admin
        assert admin is not None
        return 200, {"teams": [team_view(t, admin.spent_now(t)) for t in admin.store.list_teams()]}

    def _get_team(self, ref: str) -> tuple[int, Any]:
        assert self.admin is not None
        team = self.admin.team(ref)
        return 200, team_view(team, self.admin.spent_now(team))

    def _create_team(self, fields: dict[str, Any]) -> tuple[int, Any]:
        assert self.admin is not None
        return 201, team_view(self.admin.create_team(fields))

    def _update_team(self, ref: str, fields: dict[str, Any]) -> tuple[int, Any]:
        assert self.admin is not None
        return 200, team_view(self.admin.update_team(ref, fields))

    def _spend(self, by: str, since: str) -> tuple[int, Any]:
        assert self.admin is not None
        return 200, {"by": by, "since": since,
                     "rows": [total_view(t) for t in self.admin.spend(by, since)]}
