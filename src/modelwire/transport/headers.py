"""Header mappings decoded on first use, from the raw ``(name, value)`` byte pairs a
parser gives: most requests and answers never read most of their headers, and each one
costs a decode and a lower. The gateway's request headers and the async transport's
response headers differ only in how repeated names combine (:meth:`_build`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["LazyHeaders", "header_lines"]

_PAIR = ": ".join


def header_lines(headers: Mapping[str, str]) -> str:
    """``"name: value\r\n"`` per header, "" for none: the head's lines, for the gateway's
    answers and the transport's requests alike (the trailing empty item gives the last
    line its CRLF)."""
    return "\r\n".join([*map(_PAIR, headers.items()), ""])


class LazyHeaders(Mapping[str, str]):
    """Lower-case names to values; subclasses say how repeated names combine."""

    __slots__ = ("_map", "_raw")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._map: dict[str, str] | None = None

    def _build(self) -> dict[str, str]:
        raise NotImplementedError

    def __getitem__(self, name: str) -> str:
        return (self._map if self._map is not None else self._build())[name]

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return (self._map if self._map is not None else self._build()).get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in (self._map if self._map is not None else self._build())

    def __iter__(self) -> Iterator[str]:
        return iter(self._map if self._map is not None else self._build())

    def __len__(self) -> int:
        return len(self._map if self._map is not None else self._build())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._map if self._map is not None else self._build()!r})"
