"""What an encoder derives from a request and would derive again, turn after turn.

An agent sends the same tools every turn, and turn N+1 repeats turns 1..N verbatim.
Converting tool schemas for the target (Anthropic's rewrite, a provider's sanitizer) and
converting the history's messages are most of encoding such a request. An
:class:`EncodeCache` keeps those conversions by content. Its owner (the gateway, a
``Client``) puts it on the :class:`~modelwire.codecs.Target`; codecs hold no state of
their own.

* The key is the content's JSON bytes (``orjson.dumps``, keys in their order), with
  what else the conversion depends on (the protocol, the provider profile, the API
  version). The conversion runs on those bytes parsed back, never on the caller's
  object, so a result is a function of its key alone: whether the cache was warm cannot
  change it. Content orjson would serialize through a fallback (dataclasses, subclasses,
  dates) is not cached: the conversion runs on it as it is.
* A request's whole tool list is kept by its bytes (:meth:`EncodeCache.whole`): the
  converted ``tools`` array as one Fragment, with the facts the encoder asks of it and the
  warnings its conversion logs (logged again on every use), from the second time the list
  is seen (the first converts as without it). Such a key runs to hundreds of
  KB, so it is never hashed: it is found by its length and three 16-byte samples, then
  compared whole (:meth:`EncodeCache.find`). Every codec's encoder does this. Anthropic's
  converts a list it does not find through the per-schema entries below, so a list that
  changed by one tool (an MCP server connected) converts that tool's schema only.
* A tool's schema is kept by its own bytes. A conversation is kept by its first message:
  the JSON of all its messages, where each ends, and the turns converted from them; the
  next request keeps the turns of its longest run of leading messages with the same bytes
  and converts the rest (``anthropic_messages._turns``). Conversations shorter than 8
  messages are converted directly.
* A result is handed out as an ``orjson.Fragment``: its JSON bytes, which nothing can
  change, placed verbatim when the body is serialized (no copy per request).
* Bounded: at most ``max_entries`` entries and ``max_bytes`` of keys and results (a
  200-message conversation with 24 tools holds about 310 KiB, ~120 KiB of it the tool
  list kept whole); the least recently used go first.
* A kept value (:mod:`modelwire.kept_json`: the gateway's kept tools list and history
  messages, whose bytes it found in the body) brings its JSON with it: its key is those
  bytes, with no dump, and a list of messages that begins with kept ones is the join of
  their JSON and the dumps of the rest.
* Not told apart: NaN and infinities, which orjson writes as ``null``, and tuples, which
  it writes as arrays; a cached conversion reads them as ``null`` and lists.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import orjson

from ..kept_json import KeptDict, kept_json

__all__ = ["Converted", "EncodeCache", "Fragment", "compact", "json_key"]

# serialize only what round-trips through JSON unchanged; anything else raises, uncached
_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


# orjson's stubs do not declare Fragment (orjson >= 3.10 has it)
Fragment: Any = orjson.Fragment  # pyright: ignore[reportAttributeAccessIssue]

_MAX_KINDS = 256  # distinct (protocol, profile) pairs remembered
_SAMPLE = 16  # bytes taken from the start, middle and end of a key found by find()
_PER_SHORT_KEY = 4  # contents kept side by side under one short key
_OVERHEAD = 64  # bytes per kept content beyond its JSON (tuple slots, references)
_SEEN = "seen"  # marks content whole() has converted once


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def compact(raw: bytes) -> bytes:
    """``raw`` copied to its own size, to be kept: a result of ``orjson.dumps`` holds its
    whole write buffer (4 KiB at least, up to twice its length)."""
    return memoryview(raw).tobytes()


def json_key(content: Any) -> bytes | None:
    """``content``'s JSON bytes (keys in their order): the cache key for it, or None when
    it is not plain JSON data (a dataclass, a subclass, a date) and must not be cached."""
    known = kept_json(content)
    if known is not None:
        return known
    if type(content) is list and content and type(content[0]) is KeptDict:
        return _joined(content)  # a kept history's messages, and the turn's new ones
    try:
        return orjson.dumps(content, default=_refuse, option=_STRICT)
    except TypeError:
        return None


def _joined(items: list[Any]) -> bytes | None:
    try:
        parts = [item.json if type(item) is KeptDict else orjson.dumps(item, default=_refuse, option=_STRICT)
                 for item in items]
    except TypeError:
        return None
    return b"[" + b",".join(parts) + b"]"


@dataclass(frozen=True, slots=True)
class Converted:
    """A request piece converted whole (:meth:`EncodeCache.whole`): what goes in the body,
    the facts the encoder asks of it, and the warnings its conversion logs."""

    value: Any  # an orjson.Fragment of ``raw`` when kept; else the converted objects
    raw: bytes | None  # its JSON when kept
    facts: Any  # immutable
    notes: tuple[tuple[Any, ...], ...]  # log.warning arguments, one tuple each

    def loads(self) -> Any:
        """The piece as objects this request may change."""
        return self.value if self.raw is None else orjson.loads(self.raw)


def _short_key(tag: int, raw: bytes) -> tuple[int, int, bytes, bytes, bytes]:
    n = len(raw)
    mid = n // 2
    return tag, n, raw[:_SAMPLE], raw[mid: mid + _SAMPLE], raw[-_SAMPLE:]


class EncodeCache:
    """Converted request pieces by content, bounded, least recently used evicted.

    One per gateway or ``Client``; safe to share between threads.
    """

    def __init__(self, max_entries: int = 16384, max_bytes: int = 64 * 1024 * 1024) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be at least 1")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._kinds: dict[Hashable, int] = {}
        self._next_tag = 0
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """Bytes held: every key's and every result's JSON."""
        return self._bytes

    def tag(self, kind: Hashable) -> int:
        """A small int standing for ``kind`` in keys (hashed here once, not per lookup)."""
        with self._lock:
            tag = self._kinds.get(kind)
            if tag is None:
                if len(self._kinds) >= _MAX_KINDS:
                    self._kinds.clear()  # tags are never reused: old entries just age out
                tag = self._kinds[kind] = self._next_tag
                self._next_tag += 1
            return tag

    def get(self, key: Hashable) -> Any:
        """The value stored under ``key`` (a tuple starting with a :meth:`tag`), or None."""
        found = self._entries.get(key)  # one C call each: atomic under the GIL, no lock needed
        if found is None:
            self.misses += 1
            return None
        try:
            self._entries.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass
        self.hits += 1
        return found[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Keep ``value`` (immutable: it is handed to every later caller) under ``key``;
        ``size`` is what it holds in bytes, keys included."""
        with self._lock:
            if size > self.max_bytes:
                return
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def find(self, tag: int, raw: bytes, *, exact: bool = False) -> Any:
        """The value :meth:`keep` kept under ``tag`` for exactly the bytes ``raw``, or None.
        Looked up by ``raw``'s length and a few short samples of it, then compared whole
        (a memcmp): a large key is never hashed. ``exact``: as for :meth:`keep`; an entry
        kept from a copy of the same bytes takes ``raw`` in its place, so the next find of
        the same kept value is by identity."""
        key = _short_key(tag, raw)
        found = self._entries.get(key)  # one C call each: atomic under the GIL, no lock needed
        if found is not None:
            for kept, value, size in found[0]:
                if kept == raw:
                    self.hits += 1
                    if exact and kept is not raw:
                        self.keep(tag, raw, value, size - len(raw) - _OVERHEAD, exact=True)
                        return value
                    try:
                        self._entries.move_to_end(key)
                    except KeyError:  # evicted by another thread meanwhile
                        pass
                    return value
        self.misses += 1
        return None

    def keep(self, tag: int, raw: bytes, value: object, size: int, *, exact: bool = False) -> None:
        """Keep ``value`` (immutable) for the content whose JSON is ``raw``, found again by
        :meth:`find`; ``size``: what ``value`` holds in bytes (``raw`` is counted here). A
        few contents that share a length and samples are kept side by side. ``exact``:
        ``raw`` is already at its own size and never changes (a kept value's JSON), so it is
        kept as it is, and the same value sent again is found by identity, not compared."""
        key = _short_key(tag, raw)
        entry = (raw if exact else compact(raw), value, len(raw) + size + _OVERHEAD)
        found = self._entries.get(key)
        family = found[0] if found is not None else ()
        kept = (entry, *[e for e in family if e[0] != raw][: _PER_SHORT_KEY - 1])
        self.put(key, kept, sum(e[2] for e in kept))

    def whole(
        self, kind: Hashable, content: object, convert: Callable[[Any, list[tuple[Any, ...]]], tuple[Any, Any]],
        log: logging.Logger,
    ) -> Converted | None:
        """``convert(content, notes)`` (a result and its facts), remembered whole: one
        :func:`json_key` of ``content`` finds it (:meth:`find`). ``kind`` names everything
        else the result depends on. ``convert`` appends its warnings to ``notes`` (the
        ``log.warning`` arguments) instead of logging them: they go to ``log`` on every
        use, as they would without a cache. Kept from the second time ``content`` is seen.
        None for content that is not plain JSON."""
        known = kept_json(content)  # a kept value's own JSON: kept as it is, found by identity
        raw = known if known is not None else json_key(content)
        if raw is None:
            return None
        tag = self.tag(kind)
        exact = known is not None
        found: Converted | None = self.find(tag, raw, exact=exact)
        if found is None:
            # first seen: converted from ``content``, not kept, a mark left (a hint: a wrong one
            # costs time, never bytes); seen before: from its bytes, as later requests find them
            mark = (_SEEN, *_short_key(tag, raw))
            first = self._entries.get(mark) is None
            notes: list[tuple[Any, ...]] = []
            try:
                result, facts = convert(content if first else orjson.loads(raw), notes)
            except Exception:
                for args in notes:  # what a conversion without a cache logged before it failed
                    log.warning(*args)
                raise
            if first:
                self.put(mark, True, _OVERHEAD)
                found = Converted(result, None, facts, tuple(notes))
            else:
                out = compact(orjson.dumps(result))
                found = Converted(Fragment(out), out, facts, tuple(notes))
                self.keep(tag, raw, found, len(out), exact=exact)
        for args in found.notes:
            log.warning(*args)
        return found

    def converter(self, kind: Hashable, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``convert``, remembered: the function returned gives ``convert(content)`` as an
        ``orjson.Fragment``, converted once per distinct content. ``kind`` names
        everything else the result depends on. Content that is not plain JSON data is
        converted every time, as it is."""
        tag = self.tag(kind)

        def cached(content: Any) -> Any:
            raw = json_key(content)
            if raw is None:
                return convert(content)
            key = (tag, raw)
            found = self.get(key)
            if found is not None:
                return found
            result = compact(orjson.dumps(convert(orjson.loads(raw))))
            fragment = Fragment(result)
            self.put((tag, compact(raw)), fragment, len(raw) + len(result))
            return fragment
        return cached

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
