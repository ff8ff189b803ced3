"""``POST /v1/messages/count_tokens``: the upstream's own count where it has one.

An Anthropic-protocol upstream whose profile says it counts (``counts_tokens``:
Anthropic itself, the emulator) is asked through :meth:`Upstream.count_tokens
<modelwire.client.Upstream.count_tokens>`, with the request encoded for it exactly as a
message would be (its model id, its thinking and tool rules, opened seals). Anything
else — another protocol, an endpoint without a counter, a failure of any kind — gets
modelwire's estimate, and the answer says which in ``x-modelwire-token-count``
(``upstream`` or ``estimated``).
"""

from __future__ import annotations

from ..client import Upstream
from ..messages import prepare_conversation
from ..types import Request
from .request import request_options

__all__ = ["upstream_count"]


async def upstream_count(upstream: Upstream, req: Request) -> int | None:
    """The upstream's ``input_tokens`` for ``req``, or ``None`` when it cannot count."""
    if upstream.api_mode != "anthropic_messages" or not upstream.profile.counts_tokens:
        return None
    # the request as the messages door would send it; fields the counter rejects
    # (max_tokens, sampling) are cut from the encoded body by the Upstream
    messages = prepare_conversation(req.get("messages", []), cache=upstream.encode_cache)
    return await upstream.count_tokens({"messages": messages, **request_options(req)})
