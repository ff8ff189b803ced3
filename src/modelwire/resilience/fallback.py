"""The fallback chain: which models to try, in order, for one turn.

The primary comes first; then each fallback entry, skipping entries that
name the same endpoint and model as one already in the chain (falling back
to yourself only repeats the failure — hermes #22548) and entries that do not
resolve (an unconfigured name, a provider with no profile). Skipped entries
are kept with their reason so ``modelwire`` can say why a fallback never ran.

The chain is rebuilt per call: a fallback serves the rest of *that* turn and
the primary is tried again on the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import ConfigError

__all__ = ["FallbackChain", "Skipped"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Skipped:
    model: str
    reason: str


class FallbackChain(Generic[R]):
    """``FallbackChain(primary, fallback, resolve, key)``: the resolved entries, in order.

    ``resolve(model_string)`` returns a resolved model or raises
    :class:`~modelwire.ConfigError` (the primary's error propagates; a
    fallback's is recorded in :attr:`skipped`). ``key(resolved)`` identifies
    an endpoint+model, so duplicates are skipped. Resolving does no I/O, so
    the whole chain is resolved up front.
    """

    def __init__(
        self,
        primary: str,
        fallback: Sequence[str],
        resolve: Callable[[str], R],
        key: Callable[[R], Any],
    ) -> None:
        self.primary = primary
        self.skipped: list[Skipped] = []
        first = resolve(primary)  # the primary's own error is the caller's to see
        self.entries: list[tuple[str, R]] = [(primary, first)]
        seen: set[Any] = {key(first)}
        names: set[str] = {primary}
        for name in fallback:
            if name in names:
                self.skipped.append(Skipped(name, "same as an earlier model in the chain"))
                continue
            names.add(name)
            try:
                resolved = resolve(name)
            except ConfigError as exc:
                self.skipped.append(Skipped(name, f"not configured: {exc}"))
                continue
            k = key(resolved)
            if k in seen:
                self.skipped.append(Skipped(name, "same endpoint and model as an earlier entry"))
                continue
            seen.add(k)
            self.entries.append((name, resolved))

    def __iter__(self) -> Iterator[tuple[str, R]]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def has_after(self, position: int) -> bool:
        """Whether another entry follows chain position ``position`` (0 = primary)."""
        return position + 1 < len(self.entries)
