"""OpenAI Codex (ChatGPT-plan backend): the Responses API with the backend's limits.

``https://chatgpt.com/backend-api/codex`` speaks Responses but only streams, takes
no stored responses and rejects ``max_output_tokens`` (hermes-behaviours 2.5:
"Codex backend: no max_output_tokens; other backends do send it").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .profile import ProviderProfile

if TYPE_CHECKING:
    from ..codecs._target import Target

__all__ = ["CodexProfile"]


@dataclass(frozen=True, slots=True)
class CodexProfile(ProviderProfile):
    """OpenAI Codex backend."""

    def patch_body(self, body: dict[str, Any], target: Target) -> dict[str, Any]:
        body = {k: v for k, v in body.items() if k != "max_output_tokens"}
        body["store"] = False  # the backend keeps nothing: replay must be stateless
        return body  # streaming is the Client's part (stream_only on the row)
