"""Per-protocol request checks: each module parses the raw wire JSON, enforces the
real provider's rules (raising :class:`~modelwire.emulator.wire.ApiError` with the
provider's status, error type and message) and returns a :class:`Parsed` request
for the model and the renderers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...types import JSONValue
from ..model import Prompt
from ..wire import ApiError, dumps

__all__ = ["Parsed", "bad", "cache_prefix_chars", "text_of"]


@dataclass
class Parsed:
    prompt: Prompt
    model: str
    stream: bool
    prompt_chars: int
    cache_prefix_chars: int = 0  # > 0 when cache_control marks a cacheable prefix
    options: dict[str, Any] = field(default_factory=dict)


def bad(message: str, *, status: int = 400, etype: str = "invalid_request_error",
        code: str | None = None, param: str | None = None) -> ApiError:
    return ApiError(status, message, etype=etype, code=code, param=param)


def text_of(content: JSONValue) -> str:
    """The text of a content value: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                value = part.get("text")
                if isinstance(value, str):
                    out.append(value)
                elif part.get("type") in ("tool_result",) and "content" in part:
                    out.append(text_of(part["content"]))
            elif isinstance(part, str):
                out.append(part)
        return "\n".join(out)
    return ""


def cache_prefix_chars(blocks: list[Any]) -> int:
    """Characters of the prefix up to the last block carrying ``cache_control``."""
    last = -1
    for i, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("cache_control"):
            last = i
    return len(dumps(blocks[: last + 1])) if last >= 0 else 0
