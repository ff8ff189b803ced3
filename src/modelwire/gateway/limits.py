"""The gateway's resource limits, from ``gateway:`` in the config, with their defaults.

Each limit bounds what one client can make the gateway hold (a connection, a timer, a
client per model name, a queue slot); docs/reference/limits.md says what a client
sees when it hits one. ``/health`` shows them (:meth:`Limits.as_dict`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import GatewayConfig


__all__ = ["Limits", "default_max_connections"]

# file descriptors kept out of the client connections' share: the listening socket,
# logs, the credential store, the event loop's own, with room to spare
_RESERVED_FDS = 64


def default_max_connections(open_files: int | None = None) -> int:
    """Half of the open-file limit past a reserve: each client connection may hold one
    upstream connection too, so the upstreams never run out of descriptors."""
    if open_files is None:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        open_files = soft if soft != resource.RLIM_INFINITY else 1 << 20
    return max(16, (open_files - _RESERVED_FDS) // 2)


@dataclass(frozen=True, slots=True)
class Limits:
    """What one gateway process allows (seconds, counts); ``None``: no cap."""

    max_connections: int = 1024
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive_timeout: float = 5.0
    max_body_bytes: int = 32 * 1024 * 1024
    max_adhoc_clients: int = 256
    max_concurrent_per_model: int | None = None
    queue_timeout: float = 10.0
    max_json_depth: int = 128
    max_schema_depth: int = 64

    @classmethod
    def from_config(cls, gw: GatewayConfig | None) -> Limits:
        """From a :class:`~modelwire.config.GatewayConfig` (or anything with its fields)."""
        if gw is None:
            return cls(max_connections=default_max_connections())
        names = [f.name for f in dataclasses.fields(cls)]
        given = {n: getattr(gw, n) for n in names if getattr(gw, n, None) is not None}
        given.setdefault("max_connections", default_max_connections())
        return cls(**given)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
