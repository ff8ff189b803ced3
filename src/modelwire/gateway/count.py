"""``POST /v1/messages/count_tokens``: the upstream's own count where it has one.

An Anthropic-protocol upstream whose profile says it counts (``counts_tokens``:
Anthropic itself, the emulator) is asked, with the request encoded for it exactly as a
message would be (its model id, its thinking and tool rules, opened seals) and cut
down to the fields the counter takes. Anything else — another protocol, an endpoint
without a counter, a failure of any kind — gets modelwire's estimate, and the answer
says which in ``x-modelwire-token-count`` (``upstream`` or ``estimated``).
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ..codecs import EncodedRequest, Target
from ..errors import ModelwireError
from ..messages import prepare_conversation
from .app import _request_options

__all__ = ["upstream_count"]

log = logging.getLogger("modelwire.gateway")

# what Anthropic's counter accepts (it rejects max_tokens, stream, sampling fields)
_COUNT_FIELDS = frozenset({
    "model", "messages", "system", "tools", "tool_choice", "thinking", "output_config",
    "speed", "cache_control", "context_management", "mcp_servers",
})


async def upstream_count(client: Any, req: dict[str, Any]) -> int | None:
    """The upstream's ``input_tokens`` for ``req``, or ``None`` when it cannot count."""
    settings = getattr(client, "_settings", None)
    if settings is None or getattr(client, "api_mode", None) != "anthropic_messages":
        return None
    ep = settings.endpoint(client.model, primary=True)
    if not ep.profile.counts_tokens:
        return None
    try:
        held = ep.creds.acquire()
    except ModelwireError as exc:  # every key cooling: an estimate still helps
        log.debug("count_tokens: no credential for %s: %s", ep.profile.name, exc)
        return None
    try:
        # the request as the messages door would send it; fields the counter rejects
        # (max_tokens, sampling) are cut from the encoded body below
        request: dict[str, Any] = {"model": ep.model_id, "messages": prepare_conversation(req["messages"]),
                                   **_request_options(req)}
        target = Target(ep.profile, ep.model_id, held.secret, ep.base_url, ep.headers, settings.encode_cache)
        encoded = ep.codec.encode_request(request, target)
        body = {k: v for k, v in orjson.loads(encoded.body).items() if k in _COUNT_FIELDS}
        counting = EncodedRequest("POST", encoded.path.rstrip("/") + "/count_tokens",
                                  encoded.headers, orjson.dumps(body))
        resp = await client._http().send(counting, ep.base_url, settings.timeouts)
        if resp.status != 200:
            log.debug("count_tokens: %s answered %d; estimating", ep.profile.name, resp.status)
            return None
        count = orjson.loads(resp.body).get("input_tokens")
    except (ModelwireError, orjson.JSONDecodeError, AttributeError) as exc:
        log.debug("count_tokens: %s could not count: %s; estimating", ep.profile.name, exc)
        return None
    finally:
        ep.creds.release(held)
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
