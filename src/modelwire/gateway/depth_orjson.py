"""Nesting depth told by orjson's serializer, in C, for speed (the figures are on the
performance page): :mod:`.depth` walks in Python where this cannot tell.

orjson writes at most a fixed number of nested lists and dicts (254 in orjson 3.x) and
refuses one more with ``TypeError("Recursion limit reached")``. A value wrapped in
``writable - limit`` extra lists is therefore written iff it nests at most ``limit``
levels. A value from ``orjson.loads`` can fail to be written for no other reason (its
strings are valid UTF-8, its numbers finite, integers past 64 bits come back as floats);
any other failure makes the answer ``None``, never a guess.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson

__all__ = ["exceeds", "writable_depth"]

_REFUSED = "Recursion limit reached"
_PROBED = 1024  # orjson.loads reads no deeper: a limit past this one is no limit here


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _writes(levels: int) -> bool | None:
    try:
        orjson.dumps(_nested(levels))
    except TypeError as exc:
        return False if str(exc) == _REFUSED else None
    return True


@functools.cache
def writable_depth() -> int | None:
    """The deepest nesting orjson writes, found by trying (so another orjson release
    cannot make it wrong); ``None`` when it does not refuse as this module expects."""
    if not _writes(1) or _writes(_PROBED) is not False:
        return None
    low, high = 1, _PROBED  # low is written, high is refused
    while high - low > 1:
        mid = (low + high) // 2
        written = _writes(mid)
        if written is None:
            return None
        low, high = (mid, high) if written else (low, mid)
    return low


def exceeds(value: object, limit: int) -> bool | None:
    """Whether ``value`` (as ``orjson.loads`` gave it) nests lists and dicts more than
    ``limit`` levels deep (the value itself is level 1); ``None``: orjson cannot tell
    (a limit it cannot express, or a value it refuses for another reason)."""
    writable = writable_depth()
    if writable is None or not 1 <= limit <= writable:
        return None
    for _ in range(writable - limit):
        value = [value]
    try:
        orjson.dumps(value)
    except TypeError as exc:
        return True if str(exc) == _REFUSED else None
    return False
