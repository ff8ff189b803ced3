"""Which configured model serves a client's model id: aliases, names, provider strings."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import GatewayError

__all__ = ["ModelTable", "is_pattern"]


def is_pattern(alias: str) -> bool:
    """Whether an alias is a glob pattern rather than one exact id."""
    return any(c in alias for c in "*?[")


@dataclass(frozen=True, slots=True)
class ModelTable:
    """Client model ids → model strings the Client understands.

    Order: an exact alias (``gateway.aliases``), then a configured model name,
    then the first glob alias that matches, in the file's order (``claude-*: sonnet``
    catches every id Claude Code sends, its background requests' ids included;
    ``*``, ``?`` and ``[...]`` as in shell patterns, case-sensitive), then — only with
    ``gateway.allow_provider_models`` — a ``provider/model`` string. Anything else is a
    404 naming what exists.
    """

    names: tuple[str, ...]
    aliases: dict[str, str]
    allow_provider_models: bool
    default_model: str | None = None
    patterns: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        globs = tuple((a, t) for a, t in self.aliases.items() if is_pattern(a))
        object.__setattr__(self, "patterns", globs)

    @classmethod
    def from_config(cls, config: Any) -> ModelTable:
        gw = getattr(config, "gateway", None)
        return cls(
            names=tuple(getattr(config, "models", {}) or {}),
            aliases=dict(getattr(gw, "aliases", {}) or {}),
            allow_provider_models=bool(getattr(gw, "allow_provider_models", False)),
            default_model=getattr(config, "default_model", None),
        )

    def resolve(self, requested: Any) -> str:
        if not isinstance(requested, str) or not requested:
            raise GatewayError(400, "`model` is required and must be a string", "missing_model")
        if requested in self.aliases:
            return self.aliases[requested]
        if requested in self.names:
            return requested
        for pattern, target in self.patterns:
            if fnmatch.fnmatchcase(requested, pattern):
                return target
        if self.allow_provider_models and "/" in requested:
            return requested
        known = ", ".join(sorted(set(self.names) | set(self.aliases))) or "none configured"
        hint = "" if self.allow_provider_models else " (provider/model strings are off: gateway.allow_provider_models)"
        raise GatewayError(404, f"unknown model {requested!r}; available: {known}{hint}", "model_not_found")

    def listing(self, anthropic: bool) -> dict[str, Any]:
        """GET /v1/models in OpenAI's list shape, or Anthropic's."""
        # patterns are not ids a client could pick: listed are names and exact aliases
        ids = list(self.names) + [a for a in self.aliases if a not in self.names and not is_pattern(a)]
        created = int(time.time())
        if anthropic:
            data = [_anthropic_model(i) for i in ids]
            return {
                "data": data,
                "has_more": False,
                "first_id": ids[0] if ids else None,
                "last_id": ids[-1] if ids else None,
            }
        return {
            "object": "list",
            "data": [_openai_model(i, created) for i in ids],
        }

    def one(self, requested: str, anthropic: bool) -> dict[str, Any]:
        """GET /v1/models/{id}: the model in the door's shape, or the 404 ``resolve`` gives."""
        self.resolve(requested)
        return _anthropic_model(requested) if anthropic else _openai_model(requested, int(time.time()))


def _openai_model(model: str, created: int) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": created, "owned_by": "modelwire"}


def _anthropic_model(model: str) -> dict[str, Any]:
    return {"type": "model", "id": model, "display_name": model, "created_at": "2026-01-01T00:00:00Z"}
