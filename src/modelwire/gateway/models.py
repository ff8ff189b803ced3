"""Which configured model serves a client's model id: aliases, names, provider strings."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..types import JSONValue
from .errors import GatewayError

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["ModelTable", "is_local_server", "is_pattern"]


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
    ``gateway.allow_provider_models`` — a ``provider/model`` string whose provider a
    client may choose (:meth:`may_choose`). Anything else is a 404 naming what exists,
    before any upstream request.
    """

    names: tuple[str, ...]
    aliases: dict[str, str]
    allow_provider_models: bool | tuple[str, ...]
    default_model: str | None = None
    # local servers the config already points a model at: clients may name them too
    local_configured: frozenset[str] = frozenset()
    patterns: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        globs = tuple((a, t) for a, t in self.aliases.items() if is_pattern(a))
        object.__setattr__(self, "patterns", globs)

    @classmethod
    def from_config(cls, config: Config) -> ModelTable:
        allowed = config.gateway.allow_provider_models
        entries = config.models.values()
        return cls(
            names=tuple(config.models),
            aliases=dict(config.gateway.aliases),
            allow_provider_models=tuple(allowed) if isinstance(allowed, (list, tuple)) else bool(allowed),
            default_model=config.default_model,
            local_configured=frozenset(e.provider for e in entries if is_local_server(e.provider)),
        )

    def may_choose(self, provider: str) -> bool:
        """Whether a client may send ``provider/...``: with ``true`` every cloud provider
        and the emulators, a local server (ollama, llamacpp, lmstudio, vllm, custom) only
        when a configured model uses it; with a list, the providers it names."""
        from ..providers.catalog import ALIASES, CATALOG

        name = ALIASES.get(provider.lower(), provider.lower())
        if name not in CATALOG:
            return False  # an unknown provider: a 404 here rather than a ConfigError later
        allowed = self.allow_provider_models
        if isinstance(allowed, tuple):
            return name in allowed
        if not allowed:
            return False
        return not is_local_server(name) or name in self.local_configured

    def resolve(self, requested: JSONValue) -> str:
        if not isinstance(requested, str) or not requested:
            raise GatewayError(400, "`model` is required and must be a string", "missing_model")
        if requested in self.aliases:
            return self.aliases[requested]
        if requested in self.names:
            return requested
        for pattern, target in self.patterns:
            if fnmatch.fnmatchcase(requested, pattern):
                return target
        provider, slash, _ = requested.partition("/")
        if self.allow_provider_models and slash:
            if self.may_choose(provider):
                return requested
            hint = f" (provider {provider!r} is not open to clients: gateway.allow_provider_models)"
        elif slash:
            hint = " (provider/model strings are off: gateway.allow_provider_models)"
        else:
            hint = ""
        known = ", ".join(sorted(set(self.names) | set(self.aliases))) or "none configured"
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


def is_local_server(provider: str) -> bool:
    """A provider row for a server on the user's own machine or network (not the
    in-process emulators): what a client must not reach unless the config does."""
    from ..providers.catalog import CATALOG

    profile = CATALOG.get(provider)
    if profile is None:
        return False
    return provider == "custom" or (profile.local and not profile.emulated)


def _openai_model(model: str, created: int) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": created, "owned_by": "modelwire"}


def _anthropic_model(model: str) -> dict[str, Any]:
    return {"type": "model", "id": model, "display_name": model, "created_at": "2026-01-01T00:00:00Z"}
