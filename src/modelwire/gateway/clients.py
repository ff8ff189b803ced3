"""The gateway's clients, one per model (and per client key with passthrough).

Configured models are pinned: built at startup and kept. Every other slot (a
``provider/model`` string a client sent, a passthrough client key) lives in a
least-recently-used cache of bounded size; the one pushed out is closed, so a flood
of made-up model names holds neither memory nor connections for good. Closing a
client closes its idle upstream connections; one still serving a stream closes when
its exchange ends.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..client import AsyncClient


__all__ = ["ClientCache"]


class ClientCache:
    """``slot -> client``: ``pinned`` slots stay; the others are bounded by ``limit``
    and ``retire`` gets each one evicted (it closes it)."""

    __slots__ = ("_adhoc", "_pinned", "limit", "pinned_names", "retire")

    def __init__(self, pinned_names: frozenset[str], limit: int, retire: Callable[[Any], None]) -> None:
        self.pinned_names = pinned_names
        self.limit = limit
        self.retire = retire
        self._pinned: dict[str, Any] = {}
        self._adhoc: OrderedDict[str, Any] = OrderedDict()

    def get(self, slot: str) -> Any:
        client = self._pinned.get(slot)
        if client is not None:
            return client
        client = self._adhoc.get(slot)
        if client is not None:
            self._adhoc.move_to_end(slot)
        return client

    def put(self, slot: str, client: AsyncClient) -> None:
        if slot in self.pinned_names:
            self._pinned[slot] = client
            return
        self._adhoc[slot] = client
        self._adhoc.move_to_end(slot)
        while len(self._adhoc) > self.limit:
            _, old = self._adhoc.popitem(last=False)
            self.retire(old)

    @property
    def adhoc_count(self) -> int:
        return len(self._adhoc)

    def __iter__(self) -> Iterator[str]:
        return (slot for slot, _ in self.items())

    def __len__(self) -> int:
        return len(self._pinned) + len(self._adhoc)

    def items(self) -> Iterator[tuple[str, Any]]:
        yield from list(self._pinned.items())
        yield from list(self._adhoc.items())

    def values(self) -> list[Any]:
        return [*self._pinned.values(), *self._adhoc.values()]

    def clear(self) -> None:
        self._pinned.clear()
        self._adhoc.clear()
