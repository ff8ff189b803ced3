"""JSON values that carry their own JSON, and that nobody changes: what the gateway's door
keeps of an agent's body (``gateway/kept_body.py``) and hands to every request that holds
the same bytes.

A :class:`KeptList` (a tools list) and a :class:`KeptDict` (one message of a history) are a
``list`` and a ``dict`` in every way a reader sees, with ``json``: exactly
``orjson.dumps`` of the value. Their top level refuses to change (``TypeError``); a copy
(``list(v)``, ``dict(v)``, ``copy.copy``) is a plain, changeable one. What they hold is
not copied or guarded: a holder never changes a kept value, all the way down.

Work done per turn uses that: a cache key is the value's JSON (no dump), a kept message
needs no copy of its own to compare a later turn with, and the same objects compare equal
by identity. Code that does not know these types treats them as the list and dict they
are.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

__all__ = ["KeptDict", "KeptList", "kept_json"]


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"a kept {type(self).__name__} is read-only: copy it (dict(v), list(v)) to change it")


class KeptList(list[Any]):
    """A list that is never changed, with its JSON."""

    __slots__ = ("json",)

    def __init__(self, items: list[Any], json: bytes) -> None:
        super().__init__(items)
        self.json = json

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(list(self), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


class KeptDict(dict[str, Any]):
    """A dict that is never changed, with its JSON."""

    __slots__ = ("json",)

    def __init__(self, items: dict[str, Any], json: bytes) -> None:
        super().__init__(items)
        self.json = json

    __setitem__ = __delitem__ = __ior__ = _refuse
    pop = popitem = setdefault = update = clear = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)


def kept_json(value: Any) -> bytes | None:
    """``value``'s own JSON when it is a kept value, else None."""
    kind = type(value)
    return value.json if kind is KeptDict or kind is KeptList else None  # type: ignore[no-any-return]
