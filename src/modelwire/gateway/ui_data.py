"""What the status page shows, as one JSON-able snapshot (``GET /ui/data``): the models
and their fallbacks (from the configuration), each credential pool's credentials (masked,
with state, cooldown and reason, through the Client's public health seam), recent
requests and the gateway's own overhead percentiles (:mod:`.ui_recent`), requests per
minute, spend per key and team (teams on), and the request captures' index.

Nothing here holds a secret: a credential is its label and mask, an error detail is
scrubbed of anything key-like (:mod:`.scrub`), and no message content is ever kept.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from .capture import captures_view
from .scrub import scrub
from .ui_recent import RecentRequests, percentiles

if TYPE_CHECKING:
    from ..config import Config
    from .app import Gateway

__all__ = ["SPEND_SINCE", "captures_index", "snapshot"]

SPEND_SINCE = "30d"


CAPTURES_SHOWN = 50


def captures_index(gateway: Gateway, limit: int = CAPTURES_SHOWN) -> dict[str, Any]:
    """The request captures as ``GET /admin/captures`` lists them: ``{"dir", "enabled",
    "captures": [{"id", "time", "model", "key", "door", "status", "failed", "bytes", ...}]}``
    newest first. Reads the capture files: call it in a thread."""
    return captures_view(gateway.capture, gateway.config.gateway.capture.dir, limit)


def models_view(config: Config) -> list[dict[str, Any]]:
    """Each configured model: what serves it, the fallbacks tried after it, its aliases."""
    aliases: dict[str, list[str]] = {}
    for alias, target in config.gateway.aliases.items():
        aliases.setdefault(target, []).append(alias)
    out = []
    for name, entry in config.models.items():
        out.append({"name": name, "provider": entry.provider, "model": entry.model,
                    "fallbacks": [f for f in config.fallback if f != name],
                    "aliases": sorted(aliases.get(name, ())),
                    "default": name == config.default_model})
    return out


def credentials_view(gateway: Gateway) -> list[dict[str, Any]]:
    """Each credential of each pool opened so far, once per pool, with the models using it."""
    pools: dict[str, dict[str, Any]] = {}
    for slot, client in gateway.opened_clients():
        model = slot.partition("\0")[0]
        for up in client.upstreams():
            health = up.health()
            if health is None:
                continue
            pool = pools.get(health.pool)
            if pool is None:
                pool = pools[health.pool] = {"provider": up.provider, "store": health.store,
                                             "models": [], "credentials": [
                    {"label": c.label, "masked": c.masked, "state": c.state,
                     "cooling_for_s": round(c.cooling_for, 1), "reason": c.reason,
                     "detail": None if c.detail is None else scrub(c.detail)}
                    for c in health.credentials]}
            if model not in pool["models"]:
                pool["models"].append(model)
    return list(pools.values())


def recent_view(recent: RecentRequests | None) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """The recent requests (newest first), the overhead percentiles in ms over them, and
    requests per minute over the last hour."""
    if recent is None:
        return [], {"count": 0, "p50": None, "p90": None, "p99": None}, []
    rows = recent.requests()
    overheads = [r.overhead_ms for r in rows if r.overhead_ms is not None]
    stats: dict[str, Any] = {"count": len(overheads)}
    stats.update({k: None if v is None else round(v, 3) for k, v in percentiles(overheads).items()})
    minutes = [{"start": start, "requests": n, "errors": e} for start, n, e in recent.per_minute()]
    return [r.as_dict() for r in rows], stats, minutes


def _spend(gateway: Gateway) -> dict[str, Any]:
    """Spend per key and per team over :data:`SPEND_SINCE` (in a thread: the store is
    synchronous)."""
    from ..teams.admin import KeyAdmin, total_view

    admin = KeyAdmin(gateway.admission.gate.store)
    out: dict[str, Any] = {"enabled": True, "since": SPEND_SINCE}
    for by in ("key", "team"):
        rows = [total_view(t) for t in admin.spend(by, SPEND_SINCE)]
        for row in rows:
            row["name"] = row["name"] or ("(gateway keys)" if not row["group"] else row["group"])
        out[by + "s"] = rows
    return out


async def snapshot(gateway: Gateway) -> dict[str, Any]:
    """Everything the page shows, now."""
    from .. import __version__

    requests, overhead, minutes = recent_view(gateway.recent)
    if gateway.admission is not None:
        try:
            spend = await asyncio.to_thread(_spend, gateway)
        except Exception as exc:  # noqa: BLE001  (a store that does not answer: the page still shows the rest)
            spend = {"enabled": True, "since": SPEND_SINCE, "error": scrub(f"{type(exc).__name__}: {exc}"),
                     "keys": [], "teams": []}
    else:
        spend = {"enabled": False, "since": SPEND_SINCE, "keys": [], "teams": []}
    health = gateway.health()
    return {
        "now": time.time(), "version": __version__, "status": health["status"],
        "problems": health["problems"], "draining": gateway.draining,
        "models": models_view(gateway.config), "credentials": credentials_view(gateway),
        "recent": requests, "recent_size": 0 if gateway.recent is None else gateway.recent.size,
        "overhead_ms": overhead, "per_minute": minutes, "spend": spend,
        "captures": await asyncio.to_thread(captures_index, gateway),
    }
