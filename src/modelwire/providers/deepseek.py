"""DeepSeek: the explicit ``thinking`` flag for V4-family thinking models.

DeepSeek's V4-family models (``deepseek-flash``, ``deepseek-v4-pro``, the legacy
``deepseek-v4-flash``, later ``deepseek-v5``...) switch thinking with ``{"thinking": {"type": ...}}``. Leaving
it out hands the choice to a server default that has changed between releases;
a thinking turn then comes back without ``reasoning_content`` and the next
request's mandatory reasoning echo has nothing to send. So the flag is always
explicit (hermes-behaviours 1.1: "always sends thinking enabled/disabled").
``deepseek-chat`` and ``deepseek-reasoner`` (V3 aliases) have fixed modes and
get nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .profile import ProviderProfile

if TYPE_CHECKING:
    from ..wire import Target

__all__ = ["DeepSeekProfile", "is_deepseek_thinking_family"]

_FAMILY = re.compile(r"(?:^|/)deepseek-v(\d+)", re.IGNORECASE)
# DeepSeek's current names drop the version: deepseek-flash (V4.1 Flash) and
# deepseek-pro; the legacy V3 aliases deepseek-chat / deepseek-reasoner keep fixed modes
_UNVERSIONED = re.compile(r"(?:^|/)deepseek-(?:flash|pro)\b", re.IGNORECASE)

# DeepSeek's efforts are low/medium/high/max: "xhigh" does not exist there
# (hermes-behaviours 1.1: xhigh/max -> "max").
_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high",
           "xhigh": "max", "max": "max"}


def is_deepseek_thinking_family(model: str) -> bool:
    """V4 and later (``deepseek-v4-flash``, ``deepseek-flash``, ``deepseek-ai/DeepSeek-V4-Pro``...)."""
    match = _FAMILY.search(model)
    if match:
        return int(match.group(1)) >= 4
    return bool(_UNVERSIONED.search(model))


@dataclass(frozen=True, slots=True)
class DeepSeekProfile(ProviderProfile):
    """DeepSeek: https://api.deepseek.com."""

    def patch_body(self, body: dict[str, Any], target: Target) -> dict[str, Any]:
        if not is_deepseek_thinking_family(target.model):
            return body
        body = dict(body)
        # A thinking model with no thinking setting runs thinking: the reasoning
        # echo DeepSeek requires on tool turns depends on it being on. Asked off
        # (thinking "none"/"off"), the encoder already wrote {"type": "disabled"}.
        body.setdefault("thinking", {"type": "enabled"})
        effort = body.get("reasoning_effort")
        if isinstance(effort, str) and effort in _EFFORT:
            body["reasoning_effort"] = _EFFORT[effort]
        return body
