"""An agent's earlier turns, prepared once: :func:`prepare_kept` through the caller's
:class:`PrepareCache` (speed only; what it returns equals what preparing without a cache
returns, which a property test checks).

Turn N+1 of an agent repeats turns 1..N. Preparation carries one piece of state from
message to message, the open turn (the last assistant message's call ids and which of
them are answered), so it can stop before any message and go on from there. After each
call the cache keeps, per conversation: the cache's own copy of every message (parsed
back from its JSON, so no caller can change it), how each message's output was made
(``_prepare.Op``), the stub results placed before it, and the open turn before it. The
next call finds the longest run of leading messages equal (``==``) to the kept copies,
makes their output again from its *own* messages by those notes (a copy of each, as the
walk makes it: nothing the cache holds is handed out), and walks the rest.

A kept message (:class:`~modelwire.kept_json.KeptDict`, from the gateway's door) is its
own copy and its own output where it is copied: nothing changes it, and the next call
compares the same object.

``==`` is exact for JSON data (a tuple, a NaN, a UUID or an Enum never equals its JSON
copy, so such a message and the ones after it are prepared anew). A value of a ``str`` or
``int`` subclass equal to the kept one counts as that value.

Conversations are found by their first message after the leading system messages, the
few most recent kept for each. The first call of a conversation only notes that it was
seen: copies are made from the second on, so a request sent once costs no copies. Shorter
conversations than :data:`MIN_MESSAGES` are prepared directly.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable
from typing import Any, NamedTuple, Protocol

import orjson

from ..kept_json import KeptDict, kept_json
from ._prepare import Op, Trace, Turn, assistant, stub, walk

__all__ = ["MIN_MESSAGES", "PrepareCache", "prepare_kept"]

MIN_MESSAGES = 24  # shorter conversations are prepared faster than they are looked up
_PER_CONVERSATION = 4  # conversations kept per first message (subagents share one)
_OVERHEAD = 448  # bytes per kept message beyond its JSON: its copy's objects, note and state (tracemalloc)
_KIND = "messages.prepare"
_ONE_BY_ONE = 16  # new messages measured one by one; more are one dumps
_SYSTEM = ("system", "developer")


class PrepareCache(Protocol):
    """Where :func:`~modelwire.messages.prepare_conversation` keeps its work: a bounded,
    thread-safe store such as :class:`~modelwire.codecs.cache.EncodeCache` (the one a
    ``Client`` and the gateway hold)."""

    def tag(self, kind: Hashable) -> int: ...

    def get(self, key: Hashable) -> Any: ...

    def put(self, key: Hashable, value: Any, size: int) -> None: ...


class _Kept(NamedTuple):
    """One conversation as last prepared."""

    copies: list[Any]  # the cache's own copy of each message: never handed out or changed
    ops: bytes  # each message's Op
    stubs: dict[int, tuple[str, ...]]  # stub results placed before a message (never changed)
    states: tuple[int, ...]  # where the turn open before each message began (and after the last)
    ends: tuple[int, ...]  # bytes held up to each message
    size: int
    regular: int  # the first message whose op is DROP or has STUBS (or len): outputs line up until it
    fixes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # where the ops are CALLS, PLAIN, AGAIN


def _matched(copies: list[Any], messages: list[Any]) -> int:
    """How many leading ``messages`` equal the kept copies."""
    n = min(len(copies), len(messages))
    try:
        # an agent's next call repeats all of the last one, or all but its last messages:
        # one comparison of all but the last three, then those one by one
        k = max(0, n - 3)
        if k and messages[:k] != copies[:k]:
            lo, hi = 0, k - 1  # messages[:lo] match; messages[:k] do not
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if messages[:mid] == copies[:mid]:
                    lo = mid
                else:
                    hi = mid - 1
            return lo
        while k < n and messages[k] == copies[k]:
            k += 1
        return k
    except Exception:  # noqa: BLE001 - a value whose == raises (an array) matches nothing
        return 0


def _again(messages: list[Any], upto: int, kept: _Kept, out: list[dict[str, Any]], repair: bool) -> None:
    """The output of ``messages[:upto]``, made from them by ``kept``'s notes."""
    if upto <= kept.regular:  # one output per message: copies, then the few that differ
        head = messages[:upto]
        if head and type(head[0]) is KeptDict:  # a kept history: its messages need no copy
            out += [m if type(m) is KeptDict else dict(m) for m in head]
        else:
            out += map(dict, head)
        calls_at, plain_at, again_at = kept.fixes
        for i in calls_at[: bisect_left(calls_at, upto)]:
            if out[i] is not messages[i]:  # a kept message's calls are never changed either
                out[i]["tool_calls"] = list(messages[i]["tool_calls"])
        for i in plain_at[: bisect_left(plain_at, upto)]:
            msg = out[i] if out[i] is not messages[i] else dict(messages[i])
            del msg["tool_calls"]
            out[i] = msg
        for i in again_at[: bisect_left(again_at, upto)]:
            out[i] = assistant(messages[i], i, repair)[0]
        return
    ops, stubs = kept.ops, kept.stubs
    append = out.append
    for i in range(upto):
        op = ops[i]
        if op == Op.COPY:
            m = messages[i]
            append(m if type(m) is KeptDict else dict(m))
            continue
        if op & Op.STUBS:
            out.extend(stub(cid) for cid in stubs[i])
            op &= ~Op.STUBS
        m = messages[i]
        if op == Op.COPY:
            append(m if type(m) is KeptDict else dict(m))
        elif op == Op.CALLS:
            if type(m) is KeptDict:
                append(m)
                continue
            msg = dict(m)
            msg["tool_calls"] = list(m["tool_calls"])
            append(msg)
        elif op == Op.PLAIN:
            msg = dict(m)
            del msg["tool_calls"]
            append(msg)
        elif op == Op.AGAIN:
            append(assistant(m, i, repair)[0])


def _turn_at(messages: list[Any], k: int, kept: _Kept, repair: bool) -> Turn | None:
    """The turn open before message ``k``, made from the messages: the calls of the
    assistant message that opened it, and the results of them since (every message
    between is one of its results or a left-out reasoning-only turn)."""
    at = kept.states[k]
    if at < 0:
        return None
    opened = messages[at]
    calls = opened["tool_calls"] if kept.ops[at] & ~Op.STUBS == Op.CALLS else assistant(opened, at, repair)[1]
    ops = kept.ops
    answered = {messages[j]["tool_call_id"] for j in range(at + 1, k) if ops[j] == Op.COPY}
    return Turn(at, [c["id"] for c in calls], answered)


def _family_key(messages: list[Any]) -> bytes | None:
    start = 0
    while start < len(messages) and isinstance(messages[start], dict) and messages[start].get("role") in _SYSTEM:
        start += 1
    if start == len(messages):
        return None
    try:
        return kept_json(messages[start]) or orjson.dumps(messages[start])
    except TypeError:
        return None


def _walked(messages: list[Any], repair: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    turn = walk(messages, 0, out, None, repair)
    if turn is not None:
        turn.close(out, repair)
    return out


def prepare_kept(messages: list[Any], repair: bool, cache: PrepareCache) -> list[dict[str, Any]]:
    """``prepare_conversation(messages, repair=repair)`` with earlier turns' work from
    ``cache`` (``messages`` is a list of at least :data:`MIN_MESSAGES`)."""
    head = _family_key(messages)
    if head is None:
        return _walked(messages, repair)
    key = (cache.tag(_KIND), repair, head)
    family: tuple[_Kept, ...] | None = cache.get(key)
    if family is None:  # first seen: only noted (most requests are never sent again)
        cache.put(key, (), len(head) + _OVERHEAD)
        return _walked(messages, repair)
    best, k = None, 0
    for kept in family:  # the most recent first
        m = _matched(kept.copies, messages)
        if m > k:
            best, k = kept, m
        if m >= len(kept.copies) - 2:
            break  # this call follows that one
    out: list[dict[str, Any]] = []
    if best is not None and k:
        _again(messages, k, best, out, repair)
        stubs = best.stubs if k == len(best.ops) else {i: s for i, s in best.stubs.items() if i < k}
        trace = Trace(bytearray(best.ops[:k]), list(best.states[:k]), dict(stubs))
        turn = walk(messages, k, out, _turn_at(messages, k, best, repair), repair, trace)
    else:
        trace = Trace(bytearray(), [], {})
        turn = walk(messages, 0, out, None, repair, trace)
    if turn is not None:
        turn.close(out, repair)
    _keep(cache, key, head, family, best, k, messages, trace)
    return out


def _keep(cache: PrepareCache, key: Hashable, head: bytes, family: tuple[_Kept, ...], best: _Kept | None, k: int,
          messages: list[Any], trace: Trace) -> None:
    copies = best.copies[:k] if best is not None else []
    ends = list(best.ends[:k]) if best is not None else []
    at = ends[-1] if ends else 0
    try:
        if len(messages) - k <= _ONE_BY_ONE or type(messages[k]) is KeptDict:
            for m in messages[k:]:
                raw = kept_json(m)
                if raw is None:
                    raw = orjson.dumps(m)
                    m = orjson.loads(raw)
                copies.append(m)  # a kept message is its own copy: nobody changes it
                at += len(raw) + _OVERHEAD
                ends.append(at)
        else:  # a first call: one dumps, its bytes shared out evenly among the messages
            raw = orjson.dumps(messages[k:])
            copies += orjson.loads(raw)
            step = len(raw) / (len(messages) - k) + _OVERHEAD
            ends += (at + int(step * (j + 1)) for j in range(len(messages) - k))
            at = ends[-1]
    except TypeError:  # not JSON data: nothing to compare a later call with
        return
    ops = bytes(trace.ops)
    n = len(ops)
    if best is not None and best.regular < k:
        regular = best.regular
    else:
        regular = next((i for i in range(k, n) if ops[i] >= Op.DROP), n)
    was = best.fixes if best is not None else ((), (), ())

    def fixes_of(code: int, kept_at: tuple[int, ...]) -> tuple[int, ...]:
        return (*kept_at[: bisect_left(kept_at, k)], *(i for i in range(k, n) if ops[i] == code))
    fixes = (fixes_of(Op.CALLS, was[0]), fixes_of(Op.PLAIN, was[1]), fixes_of(Op.AGAIN, was[2]))
    kept = _Kept(copies, ops, trace.stubs, tuple(trace.states), tuple(ends), at + len(head), regular, fixes)
    others = tuple(f for f in family if f is not best)[: _PER_CONVERSATION - 1]
    cache.put(key, (kept, *others), kept.size + sum(f.size for f in others))
