"""Selection strategies: how a pool orders its candidates before the lease cap applies.

- ``fill_first`` (default): highest priority available until it cools; the next
  one only takes over when it is cooling (or at its lease cap).
- ``round_robin``: each lease takes the next credential; the rotation counter is
  kept in the store, so it continues across restarts and is shared by processes.
- ``random``: a uniform shuffle (the pool's injected ``random.Random``).
- ``least_used``: the lowest request count at the moment of the choice.

The store does the final, atomic choice (``stores._ops.choose``); this module
only turns a strategy name into the candidate order and the store's ``Order``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal, TypeAlias

from .credential import PooledCredential
from .stores import Order

__all__ = ["DEFAULT_STRATEGY", "STRATEGIES", "Strategy", "order_candidates", "parse_strategy"]

Strategy: TypeAlias = Literal["fill_first", "round_robin", "random", "least_used"]
STRATEGIES: tuple[Strategy, ...] = ("fill_first", "round_robin", "random", "least_used")
DEFAULT_STRATEGY: Strategy = "fill_first"

_STORE_ORDER: dict[Strategy, Order] = {
    "fill_first": "ordered",
    "round_robin": "rotate",
    "random": "ordered",
    "least_used": "least_used",
}


def parse_strategy(value: str | None) -> Strategy:
    """A configured strategy name; ``None`` → ``fill_first``; unknown → ConfigError."""
    if value is None:
        return DEFAULT_STRATEGY
    name = value.strip().lower().replace("-", "_")
    if name not in STRATEGIES:
        from ..errors import ConfigError

        raise ConfigError(
            f"credential_pool.strategies: unknown strategy {value!r} "
            f"(expected one of {', '.join(STRATEGIES)})"
        )
    return name  # type: ignore[return-value]


def order_candidates(
    strategy: Strategy, credentials: Sequence[PooledCredential], rng: random.Random
) -> tuple[list[str], Order]:
    """Candidate ids in the order the store should consider them, and the store order."""
    ids = [c.id for c in credentials]  # already sorted by normalized priority
    if strategy == "random":
        rng.shuffle(ids)
    return ids, _STORE_ORDER[strategy]
