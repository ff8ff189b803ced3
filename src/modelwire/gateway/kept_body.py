"""An agent's tools and history, parsed once: the door finds their bytes again in later
bodies (speed only: what :meth:`KeptBody.loads` returns equals ``orjson.loads(body)``).

A coding agent sends the same tools, byte for byte, on every turn, and a history whose
earlier messages are the ones it sent the turn before: most of a long body. For both,
:class:`KeptBody` remembers bytes and their parsed value:

* a **tools list**: the top-level ``tools`` array, whole. Looked for where the last body
  held it, counted from its start or from its end (the history grows in front of it).
* a **history front**: the top-level history array (``messages``; ``input`` at the
  Responses door) up to all but its last two items, ``[m1,...,mk`` (an agent's next turn
  repeats those and moves its cache marks on the last ones). Looked for where the last
  body's history began, and counted only when more items follow it (a ``,``). When the
  history has grown by more than two items, the front grows with it.

When a later body holds exactly such bytes there, they are swapped for a placeholder
before ``orjson.loads``: a tools list for the JSON string ``"<slot>"``, a front for
``["<slot>"``. The placeholder holds a random part made at start-up, so no client can
send it. The swap counts only when the parsed body's top-level ``tools`` is that string,
and its history's first item is the other one; then the original body is the same JSON
with the kept values in those places (the kept bytes hold unescaped quotes, so they sit
in no string; a value, or an array's first items, swapped at a value's place leave the
rest read the same), and the kept values are put back. Otherwise the whole body is
parsed, as before. The body's checks (``check``) run on what was parsed: the kept values
passed them in the same places when they were learned.

Kept values are handed to every later request (the history as a new list of the kept
items), as :mod:`modelwire.kept_json` values: read-only, with their own JSON, which the
encode cache takes as their key, and which prepare keeps instead of a copy. The gateway
never mutates a decoded body's tools or messages (its codecs copy before they change
anything). Values are learned only from bodies that passed the
checks, only when found compact (as orjson writes them, which is how JavaScript's
``JSON.stringify`` and Rust's serde write them too) and within byte bounds, the most
recently used first. A tools list is kept the second time it is looked at; a history
front once its conversation (the first bytes of its history) has been seen before. After
a look in vain (a new list, bytes not found, a front kept and never found again, one too
long to keep), the next bodies are passed over, twice as many after each in a row (up to
16), so a body that changes every turn costs little. Learning dumps a piece item by item
and stops at its bound: a huge body is not dumped whole to learn that it is too long.

Used from the gateway's event loop only (one per worker process): no locks.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from ..codecs.cache import compact
from ..kept_json import KeptDict, KeptList

__all__ = ["MAX_FRONT_BYTES", "MAX_HISTORY_BYTES", "MAX_KEPT_BYTES", "MAX_LIST_BYTES", "MIN_BYTES", "KeptBody"]

MIN_BYTES = 16 * 1024  # a body or tools list below this parses faster than it is looked up
MAX_LIST_BYTES = 1024 * 1024  # a longer tools list is parsed every time (Claude Code's: 62 KB)
MAX_KEPT_BYTES = 2 * 1024 * 1024  # all tools lists' bytes together (their parsed copies: ~5x that)
MIN_FRONT_BYTES = 4 * 1024  # a shorter history front is not kept
MAX_FRONT_BYTES = 2 * 1024 * 1024  # a longer one is parsed every time
MAX_HISTORY_BYTES = 4 * 1024 * 1024  # all fronts' bytes together
FRESH = 2  # a history's last items, never kept: the next turn may change them
_MIN_ITEMS = 8  # a shorter history is not kept
_MAX_PIECES = 8  # lists, and fronts, kept (agents behind one gateway; one each, usually)
_MAX_SEEN = 64  # tools lists, and conversations, seen once
_MAX_BACKOFF = 16  # bodies passed over after looks in vain in a row
_MARK = 2048  # a conversation is known by the first bytes of its history
_PLACES = 4  # places remembered per piece, from the start and from the end each

Check = Callable[[bytes, Any], None]


class _Piece:
    """Bytes found again, and their parsed value (the cache's own: never changed)."""

    __slots__ = ("found", "heads", "raw", "tails", "value")

    def __init__(self, raw: bytes, value: list[Any]) -> None:
        self.raw = raw
        self.value = value
        self.heads: list[int] = []  # where it started in the last bodies that held it
        self.tails: list[int] = []  # how many bytes followed it there
        self.found = False  # found in a later body

    def seen_at(self, at: int, tail: int | None) -> None:
        if not self.heads or self.heads[0] != at:
            self.heads = [at, *[h for h in self.heads if h != at][: _PLACES - 1]]
        if tail is not None and (not self.tails or self.tails[0] != tail):
            self.tails = [tail, *[t for t in self.tails if t != tail][: _PLACES - 1]]

    def places(self, size: int) -> list[int]:
        n = len(self.raw)
        return [*self.heads, *[size - tail - n for tail in self.tails]]


class _Shelf:
    """Pieces of one kind, bounded, the most recently used first; and how often bodies
    are looked at to learn new ones."""

    def __init__(self, max_bytes: int) -> None:
        self.pieces: list[_Piece] = []
        self.max_bytes = max_bytes
        self.seen: dict[Any, None] = {}  # what was seen once
        self.hits = 0
        self.skip = 0  # bodies not to learn from
        self.backoff = 0

    def saw(self, mark: Any) -> bool:
        """Note ``mark``; whether it was seen before."""
        before = mark in self.seen
        self.seen[mark] = None
        if len(self.seen) > _MAX_SEEN:
            del self.seen[next(iter(self.seen))]
        return before

    def pause(self, in_vain: bool) -> None:
        """After a look in vain, look less often: pass over twice as many bodies as after
        the last, up to the bound; after a look that paid, look at every body."""
        self.backoff = min(max(1, 2 * self.backoff), _MAX_BACKOFF) if in_vain else 0
        self.skip = self.backoff

    def first(self, piece: _Piece, replaces: _Piece | None = None) -> None:
        """``piece`` first, then the others (but ``replaces``) while they fit the bounds."""
        kept = [piece]
        total = len(piece.raw)
        for other in self.pieces:
            if other is not piece and other is not replaces and len(kept) < _MAX_PIECES \
                    and total + len(other.raw) <= self.max_bytes:
                kept.append(other)
                total += len(other.raw)
        self.pieces = kept


class KeptBody:
    """Tools lists and history fronts kept by their bytes (one per gateway worker)."""

    def __init__(self) -> None:
        nonce = os.urandom(16).hex()
        self._tools_text = "\x00modelwire-kept-tools-" + nonce
        self._front_text = "\x00modelwire-kept-history-" + nonce
        self._tools_slot = orjson.dumps(self._tools_text)
        self._front_slot = b"[" + orjson.dumps(self._front_text)
        self._tools = _Shelf(MAX_KEPT_BYTES)
        self._fronts = _Shelf(MAX_HISTORY_BYTES)

    @property
    def lists(self) -> int:
        """How many tools lists are kept."""
        return len(self._tools.pieces)

    @property
    def fronts(self) -> int:
        """How many history fronts are kept."""
        return len(self._fronts.pieces)

    @property
    def tools_hits(self) -> int:
        """Bodies whose tools were a kept list."""
        return self._tools.hits

    @property
    def history_hits(self) -> int:
        """Bodies whose history began with a kept front."""
        return self._fronts.hits

    def kept_values(self) -> list[tuple[bytes, list[Any]]]:
        """Each kept piece's bytes and value (for tests: a value dumps to its bytes, a
        front without its closing bracket)."""
        return [(p.raw, p.value) for shelf in (self._tools, self._fronts) for p in shelf.pieces]

    def loads(self, body: bytes, history: str, check: Check) -> Any:
        """``body`` parsed (``orjson.loads``'s errors as they are) and passed to
        ``check(raw, data)``, which raises for a body the door refuses. ``history``: the
        door's history field (``messages``, ``input``)."""
        looked = len(body) >= MIN_BYTES
        if looked:
            data = self._swapped(body, history, check)
            if data is not None:
                return data
        data = orjson.loads(body)
        check(body, data)
        if looked and isinstance(data, dict):
            self._learn_tools(body, data.get("tools"))
            self._learn_front(body, history, data.get(history))
        return data

    # ------------------------------------------------------------------ finding
    def _swapped(self, body: bytes, history: str, check: Check) -> Any:
        """The body parsed with its kept pieces swapped out and put back; None when no
        piece is there (or a piece's bytes are there, but not in its place)."""
        size = len(body)
        tools = _find(self._tools.pieces, body)
        # a front counts only where more items follow it
        front = _find(self._fronts.pieces, body, followed_by=b",")
        if tools is None and front is None:
            return None
        swaps: list[tuple[int, int, bytes]] = []
        if tools is not None:
            swaps.append((tools[1], len(tools[0].raw), self._tools_slot))
        if front is not None:
            swaps.append((front[1], len(front[0].raw), self._front_slot))
        swaps.sort(key=lambda s: s[0])
        if len(swaps) == 2 and swaps[0][0] + swaps[0][1] > swaps[1][0]:
            return None  # overlapping: not where the pieces belong
        view = memoryview(body)
        parts: list[Any] = []
        at = 0
        for start, n, slot in swaps:
            parts += (view[at:start], slot)
            at = start + n
        parts.append(view[at:])
        swapped = b"".join(parts)
        try:
            data = orjson.loads(swapped)
        except orjson.JSONDecodeError:
            return None  # the whole body's own error, from the whole parse
        if not isinstance(data, dict):
            return None
        if tools is not None and data.get("tools") != self._tools_text:
            return None
        items: list[Any] = []
        if front is not None:
            found = data.get(history)
            if not (isinstance(found, list) and found and found[0] == self._front_text):
                return None
            items = found
        check(swapped, data)
        if tools is not None:
            piece, start = tools
            data["tools"] = piece.value
            piece.seen_at(start, size - start - len(piece.raw))
            self._found(self._tools, piece)
        if front is not None:
            piece, start = front
            data[history] = [*piece.value, *items[1:]]
            piece.seen_at(start, None)
            self._found(self._fronts, piece)
            self._grow(piece, body, start, items)
        else:
            self._learn_front(body, history, data.get(history))
        if tools is None:
            self._learn_tools(body, data.get("tools"))
        return data

    def _found(self, shelf: _Shelf, piece: _Piece) -> None:
        shelf.hits += 1
        piece.found = True
        if shelf.pieces[0] is not piece:
            shelf.first(piece)
        shelf.pause(False)

    def _grow(self, piece: _Piece, body: bytes, start: int, items: list[Any]) -> None:
        """The front made longer by the items after it, all but the last two (an agent's
        history grown by a turn): the next turn finds all of them kept."""
        more = items[1:-FRESH]
        raws = _dumps_within(more, MAX_FRONT_BYTES - len(piece.raw)) if more else None
        if raws is None:
            return
        tail = b"," + b",".join(raws)
        at = start + len(piece.raw)
        if not (body.startswith(tail, at) and body.startswith(b",", at + len(tail))):
            return
        grown = _Piece(piece.raw + tail, [*piece.value, *_kept_items(raws)])
        grown.heads, grown.found = list(piece.heads), True
        self._fronts.first(grown, replaces=piece)

    # ----------------------------------------------------------------- learning
    def _learn_tools(self, body: bytes, tools: Any) -> None:
        shelf = self._tools
        if not isinstance(tools, list) or not tools:
            return
        if shelf.skip:
            shelf.skip -= 1
            return
        places = _compact_values_at(body, b'"tools"')
        if not places:  # no compact top-level-looking tools value: nothing to find again
            return
        raws = _dumps_within(tools, MAX_LIST_BYTES)
        if raws is None:  # too long to keep: look less often
            shelf.pause(True)
            return
        raw = b"[" + b",".join(raws) + b"]"
        n = len(raw)
        if n < MIN_BYTES:
            return
        at = next((at for at in places if body.startswith(raw, at)), None)
        if at is None:  # written otherwise (escapes): look less often
            shelf.pause(True)
            return
        known = next((p for p in shelf.pieces if p.raw == raw), None)
        if known is None:
            # kept from the second time it is seen: a list that changes every turn costs
            # a dump and a CRC, not a copy, on the bodies looked at
            first = not shelf.saw((n, zlib.crc32(raw)))
            shelf.pause(first)
            if first:
                return
            # a copy of its own: the request that brought it may do with its body what it likes
            known = _Piece(raw, KeptList(orjson.loads(raw), raw))
        known.seen_at(at, len(body) - at - n)
        shelf.first(known)

    def _learn_front(self, body: bytes, history: str, items: Any) -> None:
        shelf = self._fronts
        if not isinstance(items, list) or len(items) < _MIN_ITEMS + FRESH:
            return
        if shelf.skip:
            shelf.skip -= 1
            return
        places = _compact_values_at(body, orjson.dumps(history))
        if not places:
            return
        # kept once its conversation comes back: a request sent once costs a CRC
        if not shelf.saw(zlib.crc32(memoryview(body)[places[0]: places[0] + _MARK])):
            return
        raws = _dumps_within(items[:-FRESH], MAX_FRONT_BYTES)
        if raws is None:  # too long to keep: look less often
            shelf.pause(True)
            return
        front = b"[" + b",".join(raws)
        if len(front) < MIN_FRONT_BYTES:
            return
        at = next((at for at in places if body.startswith(front, at) and body.startswith(b",", at + len(front))),
                  None)
        if at is None:  # written otherwise: look less often
            shelf.pause(True)
            return
        piece = next((p for p in shelf.pieces if p.raw == front), None)
        if piece is None:
            # the last front learned and never found again was a look in vain too
            last = shelf.pieces[0] if shelf.pieces else None
            shelf.pause(last is not None and not last.found)
            piece = _Piece(front, _kept_items(raws))
        piece.seen_at(at, None)
        shelf.first(piece)


def _dumps_within(items: list[Any], limit: int) -> list[bytes] | None:
    """Each item's JSON, or None once the array of them would pass ``limit`` bytes (a
    huge history is not dumped whole to learn that it is too long to keep) or an item
    is not written (deeper than orjson writes: the depth check answers)."""
    out = []
    size = 1
    try:
        for item in items:
            raw = orjson.dumps(item)
            size += len(raw) + 1
            if size > limit:
                return None
            out.append(raw)
    except orjson.JSONEncodeError:
        return None
    return out


def _kept_items(raws: list[bytes]) -> list[Any]:
    """The items of a front, parsed from their JSON: each object a :class:`KeptDict` (the
    cache's own, never changed) holding a copy of its JSON at its own size (a dump's
    bytes hold at least 4 KiB), anything else as parsed."""
    out = []
    for raw in raws:
        item = orjson.loads(raw)
        out.append(KeptDict(item, compact(raw)) if type(item) is dict else item)
    return out


def _find(pieces: list[_Piece], body: bytes, followed_by: bytes | None = None) -> tuple[_Piece, int] | None:
    """The piece whose bytes ``body`` holds at one of its places, and where: the first
    one found; with ``followed_by``, the longest one followed by those bytes (fronts: one
    conversation's may begin another's)."""
    size = len(body)
    best: tuple[_Piece, int] | None = None
    for piece in pieces:
        n = len(piece.raw)
        if best is not None and n <= len(best[0].raw):
            continue
        for at in piece.places(size):
            if at >= 0 and body.startswith(piece.raw, at):
                if followed_by is None:
                    return piece, at
                if body.startswith(followed_by, at + n):
                    best = piece, at
                    break
    return best


def _compact_values_at(body: bytes, key: bytes) -> list[int]:
    """Where the value of ``key`` written compact (``"key":[``) may start in ``body``: at
    its first such key and at its last; none when the body's first key is followed by a
    space (Python's ``json.dumps``: not looked for at all)."""
    first = body.find(b'":', 0, 256)
    if first < 0 or body.startswith(b" ", first + 2):
        return []
    found = []
    for at in (body.find(key), body.rfind(key)):
        if at >= 0 and body.startswith(b":[", at + len(key)) and at + len(key) + 1 not in found:
            found.append(at + len(key) + 1)
    return found
