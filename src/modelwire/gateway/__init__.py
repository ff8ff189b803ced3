"""The gateway: OpenAI Chat Completions, Anthropic Messages and OpenAI Responses
front doors over modelwire's Client. ``create_app(config)`` builds the ASGI app;
``modelwire serve`` runs it with uvicorn.

Each front door is a :class:`~modelwire.gateway.doors.Door` (codec, issuer, passthrough
headers, stateless rules, error framing); :mod:`.request` holds what every route shares.
Uses only the public API of the packages below it: the Client and its
:class:`~modelwire.client.Upstream` seam, the codecs, config, errors and events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["app_from_env", "create_app"]


def create_app(config: Config | None = None, *, environ: dict[str, str] | None = None) -> Any:
    """The ASGI app for ``config`` (a loaded :class:`modelwire.config.Config`)."""
    from .app import create_app as _create

    return _create(config, environ=environ)


def app_from_env() -> Any:
    """uvicorn factory for ``--workers N``: reads the config named by MODELWIRE_CONFIG."""
    from ..config import load_config

    return create_app(load_config())
