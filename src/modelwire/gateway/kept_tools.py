"""An agent's tools list, parsed once: the door finds its bytes again in later bodies.

A coding agent sends the same tools, byte for byte, on every turn: most of a 100-tool
body. :class:`KeptTools` remembers such a list's bytes and its parsed value. When a later
body holds exactly those bytes where the last body held them (counted from its start, or
from its end, as the history grows in front of them), the bytes are swapped for a
placeholder before ``orjson.loads`` and the kept value is put back after. The placeholder
is a string with a random part made at start-up, so no client can send it; the swap
counts only when the parsed body's top-level ``tools`` is that string, and then the
original body is the same JSON with the kept list in that place (a JSON value swapped for
another at a value's place).

The kept value is handed to every later request: the gateway never mutates a decoded
body's tools. A list is kept from the second time it is looked at: after a list seen for
the first time, the next bodies are passed over, twice as many after each new list in a
row (up to 16), so tools that change every turn cost little. Only lists found compact
(as orjson writes them, which is how JavaScript's ``JSON.stringify`` and Rust's serde
write them too) are kept, and only lists at least :data:`MIN_BYTES` long and at most
:data:`MAX_LIST_BYTES`, :data:`MAX_KEPT_BYTES` in all (the most recently used first); a
list whose bytes are not found is looked for less and less often, as a new one is.

Used from the gateway's event loop only (one per worker process): no locks.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["MAX_KEPT_BYTES", "MAX_LIST_BYTES", "MIN_BYTES", "KeptTools"]

MIN_BYTES = 16 * 1024  # below this the parse is cheaper than the lookup
_MAX_LISTS = 8  # lists kept (agents behind one gateway; one each, usually)
MAX_LIST_BYTES = 1024 * 1024  # a longer list is parsed every time (Claude Code's: 62 KB)
MAX_KEPT_BYTES = 2 * 1024 * 1024  # all lists' bytes together (their parsed copies: ~5x that)
_MAX_SEEN = 64  # lists seen once
_MAX_BACKOFF = 16  # bodies passed over after looks in vain in a row (tools that change every turn)
_KEY = b'"tools"'
_PLACES = 4  # places remembered per list, from the start and from the end each


class _Kept:
    __slots__ = ("heads", "raw", "tails", "value")

    def __init__(self, raw: bytes, value: list[Any]) -> None:
        self.raw = raw
        self.value = value
        self.heads: list[int] = []  # where the list started in the last bodies that held it
        self.tails: list[int] = []  # how many bytes followed it there

    def seen_at(self, at: int, tail: int) -> None:
        if not self.heads or self.heads[0] != at:
            self.heads = [at, *[h for h in self.heads if h != at][: _PLACES - 1]]
        if not self.tails or self.tails[0] != tail:
            self.tails = [tail, *[t for t in self.tails if t != tail][: _PLACES - 1]]

    def places(self, size: int) -> list[int]:
        n = len(self.raw)
        return [*self.heads, *[size - tail - n for tail in self.tails]]


class KeptTools:
    """Tools lists kept by their bytes. ``shallow(tools)``: whether a list passes the
    door's depth check (a list that does not is never kept)."""

    def __init__(self, shallow: Callable[[list[Any]], bool]) -> None:
        self._shallow = shallow
        self._slot_text = "\x00modelwire-kept-tools-" + os.urandom(16).hex()
        self._slot = orjson.dumps(self._slot_text)
        self._kept: list[_Kept] = []  # most recent first
        self._seen: dict[tuple[int, int], None] = {}  # lists seen once, by length and CRC-32
        self.hits = 0
        self._skip = 0  # bodies not to learn from: lists that are new every time cost little
        self._backoff = 0

    @property
    def lists(self) -> int:
        """How many lists are kept."""
        return len(self._kept)

    def loads(self, body: bytes) -> tuple[Any, bool]:
        """``body`` parsed (``orjson.loads``'s errors as they are) and whether its
        ``tools`` is a kept list (then already checked for depth)."""
        if len(body) < MIN_BYTES:
            return orjson.loads(body), False
        size = len(body)
        for kept in self._kept:
            n = len(kept.raw)
            for at in kept.places(size):
                if at < 0 or not body.startswith(kept.raw, at):
                    continue
                view = memoryview(body)
                data = orjson.loads(b"".join((view[:at], self._slot, view[at + n:])))
                if isinstance(data, dict) and data.get("tools") == self._slot_text:
                    data["tools"] = kept.value
                    kept.seen_at(at, size - at - n)
                    if self._kept[0] is not kept:
                        self._first(kept)
                    self.hits += 1
                    return data, True
                break  # the bytes were there, but not as the body's tools
        data = orjson.loads(body)
        if isinstance(data, dict):
            if self._skip:
                self._skip -= 1
            else:
                self._learn(body, data.get("tools"))
        return data, False

    def _learn(self, body: bytes, tools: Any) -> None:
        if not isinstance(tools, list) or not tools:
            return
        at = _compact_value_at(body)
        if at is None:  # no compact top-level-looking tools value: nothing to find again
            return
        try:
            raw = orjson.dumps(tools)
        except orjson.JSONEncodeError:  # deeper than orjson writes: the depth check answers
            return
        n = len(raw)
        if n < MIN_BYTES or n > MAX_LIST_BYTES:
            return
        if not body.startswith(raw, at):  # written otherwise (escapes): look less often
            self._pause(True)
            return
        known = next((k for k in self._kept if k.raw == raw), None)
        if known is None:
            # kept from the second time it is seen: a list that changes every turn costs
            # a dump and a CRC, not a copy, on the bodies looked at
            mark = (n, zlib.crc32(raw))
            first = mark not in self._seen
            self._seen[mark] = None
            if len(self._seen) > _MAX_SEEN:
                del self._seen[next(iter(self._seen))]
            self._pause(first)
            if first or not self._shallow(tools):
                return
            # a copy of its own: the request that brought it may do with its body what it likes
            known = _Kept(raw, orjson.loads(raw))
        known.seen_at(at, len(body) - at - n)
        self._first(known)

    def _pause(self, in_vain: bool) -> None:
        """After a look in vain (a new list, or bytes not found), look less often: pass
        over twice as many bodies as after the last, up to the bound; after a list seen
        again, look at every body."""
        self._backoff = min(max(1, 2 * self._backoff), _MAX_BACKOFF) if in_vain else 0
        self._skip = self._backoff

    def _first(self, kept: _Kept) -> None:
        """``kept`` first, then the others while they fit the bounds."""
        kept_now = [kept]
        total = len(kept.raw)
        for other in self._kept:
            if other is not kept and len(kept_now) < _MAX_LISTS and total + len(other.raw) <= MAX_KEPT_BYTES:
                kept_now.append(other)
                total += len(other.raw)
        self._kept = kept_now


def _compact_value_at(body: bytes) -> int | None:
    """Where the value of a ``"tools"`` key written compact (``"tools":[``) starts in
    ``body``: its last such key, else its first; None when neither is, or when the body's
    first key is followed by a space (Python's ``json.dumps``: not looked for at all)."""
    first = body.find(b'":', 0, 256)
    if first < 0 or body.startswith(b" ", first + 2):
        return None
    for at in (body.rfind(_KEY), body.find(_KEY)):
        if at >= 0 and body.startswith(b":[", at + len(_KEY)):
            return at + len(_KEY) + 1
    return None
