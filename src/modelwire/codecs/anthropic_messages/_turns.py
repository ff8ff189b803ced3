"""An agent's earlier turns, converted once: :func:`encode_conversation` through the
caller's :class:`~modelwire.codecs.cache.EncodeCache` (speed only; the bytes sent are the
same, which a property test checks).

Turn N+1 of an agent repeats turns 1..N verbatim. After each encode the cache keeps, per
conversation, the JSON of its messages (one ``orjson.dumps`` of the list, keys in their
order), where each message ends in it, and the Anthropic turns converted from them, each
an ``orjson.Fragment`` (its JSON: no caller can change it) with the facts the encoder asks
of it (``cache_control`` marks, tool blocks). The next request's messages are dumped the
same way; the longest run of whole messages whose bytes equal the kept ones (a JSON
object is never a prefix of another, so equal bytes up to a message's end mean equal
messages up to it) keeps its turns, except a turn the next message would merge into.
Only the rest is converted. Conversations are found by their first message (after the
leading system messages), with the few most recent kept for each.

Where this does not apply (a native mid-conversation system message, placed after
conversion; content that is not plain JSON; a message the plain path rejects), the
encoder converts as it does without a cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from ..cache import EncodeCache, json_key
from ._convert import (
    ConvertContext,
    append_turn,
    encode_message,
    encode_system,
    finish_turn,
    is_leading_system,
)

__all__ = ["CachedConversation", "cached_conversation", "turn_marks"]

# the converted role of each input role; a later system message becomes a reminder in a
# user turn unless the model takes it natively (then this module does not apply)
_ROLE = {"user": "user", "tool": "user", "assistant": "assistant", "system": "user", "developer": "user"}
_TOOL_BLOCKS = ("tool_use", "tool_result")
_PER_CONVERSATION = 4  # conversations kept per first message (subagents share one)
_OVERHEAD = 64  # bytes per kept turn beyond its JSON (tuple, fragment, offsets)


class _Turn(NamedTuple):
    first: int  # index of its first message (after the leading system messages)
    last: int
    role: str
    fragment: orjson.Fragment
    raw: bytes
    marks: int
    tool_blocks: bool


class _Kept(NamedTuple):
    """One conversation as last encoded."""

    raw: bytes  # its messages' JSON
    ends: tuple[int, ...]  # where each message ends in ``raw``
    turns: tuple[_Turn, ...]
    loop_start: int  # relative to the leading system messages


@dataclass(slots=True)
class CachedConversation:
    system: str | list[dict[str, Any]] | None
    messages: list[Any]  # orjson.Fragment for kept turns, dicts for new ones and the last two
    marks: list[int]  # cache_control marks per turn
    raw: list[bytes]  # each turn's JSON
    tool_blocks: bool  # some turn holds tool_use or tool_result

    def materialize(self, index: int) -> dict[str, Any]:
        """Turn ``index`` as a new dict, put in place of its Fragment (to change it)."""
        turn = self.messages[index]
        if not isinstance(turn, dict):
            turn = self.messages[index] = orjson.loads(self.raw[index])
        return turn  # type: ignore[no-any-return]


def turn_marks(turn: dict[str, Any]) -> int:
    """The turn's ``cache_control`` marks, counted as the breakpoint limit counts them."""
    content = turn["content"]
    if not isinstance(content, list):
        return 0
    n = 0
    for b in content:
        if "cache_control" in b:
            n += 1
        if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
            n += sum(1 for c in b["content"] if "cache_control" in c)
    return n


def _has_tool_blocks(turn: dict[str, Any]) -> bool:
    content = turn["content"]
    return isinstance(content, list) and any(b.get("type") in _TOOL_BLOCKS for b in content)


def _role(msg: Any, ctx: ConvertContext) -> str | None:
    """The converted role of a message after the start; None where the plain path must
    convert (it raises, or places a native system message)."""
    given = msg.get("role") if isinstance(msg, dict) else None
    if type(given) is not str or (ctx.mid_system and given in ("system", "developer")):
        return None
    return _ROLE.get(given)


def _matched(kept: _Kept, raw: bytes) -> int:
    """How many leading messages of ``raw`` are the same bytes as ``kept``'s."""
    ends, view = kept.ends, memoryview(kept.raw)
    n = len(ends)
    # an agent's next turn repeats all of the last one, or all but its last messages
    for k in range(n, max(0, n - 3), -1):
        if raw.startswith(view[: ends[k - 1]]):
            return k
    lo, hi = 0, max(0, n - 3)  # ends[lo - 1] matches (lo = 0: nothing), ends[hi] does not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if raw.startswith(view[: ends[mid - 1]]):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _reusable(kept: _Kept, k: int, messages: list[Any], ctx: ConvertContext, loop_start: int) -> int:
    """How many of ``kept``'s turns hold for a conversation whose first ``k`` messages
    are ``kept``'s."""
    if ctx.profile.drop_earlier_thinking and loop_start != kept.loop_start:
        k = min(k, min(loop_start, kept.loop_start) + 1)  # past it, whether thinking is kept changed
    turns = kept.turns
    t = 0
    while t < len(turns) and turns[t].last < k:
        t += 1
    if t and turns[t - 1].last == k - 1 and k < len(messages) and _role(messages[k], ctx) == turns[t - 1].role:
        t -= 1  # message k merges into that turn
    return t


def cached_conversation(
    messages: list[Any], ctx: ConvertContext, cache: EncodeCache
) -> CachedConversation | None:
    """``encode_conversation(messages, ctx)`` with earlier turns from ``cache``; None
    where the cache does not apply."""
    start = 0
    while start < len(messages) and is_leading_system(messages[start]):
        start += 1
    rest = messages[start:]
    if not rest:
        return None
    raw = json_key(rest)
    head = json_key(rest[0])
    if raw is None or head is None:
        return None
    system = encode_system(messages[:start], ctx)  # first: its errors come first
    loop_start = ctx.current_loop_start - start
    kind = ("anthropic_messages.conversation", ctx.profile, ctx.api_version, ctx.mid_system)
    key = (cache.tag(kind), head)
    family: tuple[_Kept, ...] = cache.get(key) or ()
    best, k = None, 0
    for kept in family:
        m = _matched(kept, raw)
        if m > k:
            best, k = kept, m
    turns = list(best.turns[: _reusable(best, k, rest, ctx, loop_start)]) if best is not None else []
    first_new = turns[-1].last + 1 if turns else 0
    ends = list(best.ends[:first_new]) if best is not None else []
    pos = ends[-1] if ends else 0
    pieces: list[bytes] = []
    for i in range(first_new, len(rest)):
        piece = json_key(rest[i])
        if piece is None:
            return None
        pieces.append(piece)
        pos += len(piece) + 1  # "[" or "," before it
        ends.append(pos)
    if pos + 1 != len(raw):  # the pieces are not the list's JSON: convert as without a cache
        return None
    # converted from the bytes parsed back, as a later request finds them
    new = _convert_from([orjson.loads(p) for p in pieces], first_new, start, ctx)
    if new is None:
        return None
    out: list[Any] = [t.fragment for t in turns]
    for first, last, turn in new:
        body = orjson.dumps(turn)
        turns.append(_Turn(first, last, turn["role"], orjson.Fragment(body), body, turn_marks(turn),
                           _has_tool_blocks(turn)))
        out.append(turn)
    for n in range(max(0, len(out) - 2), len(out)):  # the last two go out as new dicts
        if not isinstance(out[n], dict):
            out[n] = orjson.loads(turns[n].raw)
    kept = _Kept(raw, tuple(ends), tuple(turns), loop_start)
    others = tuple(f for f in family if f is not best)[: _PER_CONVERSATION - 1]
    cache.put(key, (kept, *others), len(head) + sum(_size(f) for f in (kept, *others)))
    return CachedConversation(system, out, [t.marks for t in turns], [t.raw for t in turns],
                              any(t.tool_blocks for t in turns))


def _size(kept: _Kept) -> int:
    return len(kept.raw) + sum(len(t.raw) + _OVERHEAD for t in kept.turns)


def _convert_from(
    new: list[Any], first: int, start: int, ctx: ConvertContext
) -> list[tuple[int, int, dict[str, Any]]] | None:
    """The turns of messages ``first`` on (``new``), converted: (first, last, turn) each."""
    out: list[dict[str, Any]] = []
    spans: list[list[int]] = []
    for i, msg in enumerate(new, first):
        if _role(msg, ctx) is None:
            return None
        before = len(out)
        append_turn(out, encode_message(msg, start + i, ctx))
        if len(out) > before:
            spans.append([i, i])
        else:
            spans[-1][1] = i
    return [(a, b, finish_turn(t)) for (a, b), t in zip(spans, out, strict=True)]
