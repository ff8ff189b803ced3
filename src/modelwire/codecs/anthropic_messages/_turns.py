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

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from ..cache import EncodeCache, Fragment, compact, json_key
from ._convert import (
    ConvertContext,
    append_turn,
    encode_message,
    encode_system,
    finish_turn,
    is_leading_system,
)

__all__ = ["MIN_MESSAGES", "CachedConversation", "cached_conversation", "turn_marks"]

# the converted role of each input role; a later system message becomes a reminder in a
# user turn unless the model takes it natively (then this module does not apply)
_ROLE = {"user": "user", "tool": "user", "assistant": "assistant", "system": "user", "developer": "user"}
_TOOL_BLOCKS = ("tool_use", "tool_result")
_PER_CONVERSATION = 4  # conversations kept per first message (subagents share one)
_OVERHEAD = 64  # bytes per kept turn beyond its JSON (tuple slots, fragment, offsets)
MIN_MESSAGES = 8  # shorter conversations convert faster than they are looked up


class _Kept(NamedTuple):
    """One conversation as last encoded: its messages' JSON and its turns, by column."""

    raw: bytes  # its messages' JSON
    ends: tuple[int, ...]  # where each message ends in ``raw``
    loop_start: int  # relative to the leading system messages
    lasts: tuple[int, ...]  # each turn's last message
    roles: tuple[str, ...]
    fragments: tuple[Any, ...]  # orjson.Fragment
    raws: tuple[bytes, ...]  # each turn's JSON (what its Fragment holds)
    marks: tuple[int, ...]  # each turn's cache_control marks
    tools: tuple[bool, ...]  # whether each turn holds tool_use or tool_result
    size: int  # bytes held


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
    # an agent's next turn repeats all of the last one, or all but its last messages:
    # one pass over all but the last three, then those one by one
    k = max(0, n - 3)
    if k and not raw.startswith(view[: ends[k - 1]]):
        lo, hi = 0, k - 1  # ends[lo - 1] matches (lo = 0: nothing); ends[k - 1] does not
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if raw.startswith(view[: ends[mid - 1]]):
                lo = mid
            else:
                hi = mid - 1
        return lo
    at = ends[k - 1] if k else 0
    while k < n and raw.startswith(view[at: ends[k]], at):
        at = ends[k]
        k += 1
    return k


def _reusable(kept: _Kept, k: int, messages: list[Any], ctx: ConvertContext, loop_start: int) -> int:
    """How many of ``kept``'s turns hold for a conversation whose first ``k`` messages
    are ``kept``'s."""
    if ctx.profile.drop_earlier_thinking and loop_start != kept.loop_start:
        k = min(k, min(loop_start, kept.loop_start) + 1)  # past it, whether thinking is kept changed
    t = bisect_left(kept.lasts, k)  # the turns that end before message k
    if t and kept.lasts[t - 1] == k - 1 and k < len(messages) and _role(messages[k], ctx) == kept.roles[t - 1]:
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
    if len(rest) < MIN_MESSAGES:
        return None
    raw = json_key(rest)
    head = json_key(rest[0])
    if raw is None or head is None:
        return None
    system = encode_system(messages[:start], ctx)  # first: its errors come first
    loop_start = ctx.current_loop_start - start
    kind = ("anthropic_messages.conversation", ctx.profile, ctx.api_version, ctx.mid_system)
    key = (cache.tag(kind), compact(head))
    family: tuple[_Kept, ...] = cache.get(key) or ()
    best, k = None, 0
    for kept in family:  # the most recent first
        m = _matched(kept, raw)
        if m > k:
            best, k = kept, m
        if m >= len(kept.ends) - 2:
            break  # this turn follows that one
    t = _reusable(best, k, rest, ctx, loop_start) if best is not None else 0
    first_new = best.lasts[t - 1] + 1 if best is not None and t else 0
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
    if best is not None and t:
        lasts, roles = list(best.lasts[:t]), list(best.roles[:t])
        fragments, raws = list(best.fragments[:t]), list(best.raws[:t])
        marks, tools = list(best.marks[:t]), list(best.tools[:t])
    else:
        lasts, roles, fragments, raws, marks, tools = [], [], [], [], [], []
    out: list[Any] = list(fragments)
    for last, turn in new:
        body = compact(orjson.dumps(turn))
        lasts.append(last)
        roles.append(turn["role"])
        fragments.append(Fragment(body))
        raws.append(body)
        marks.append(turn_marks(turn))
        tools.append(_has_tool_blocks(turn))
        out.append(turn)
    for n in range(max(0, len(out) - 2), len(out)):  # the last two go out as new dicts
        if not isinstance(out[n], dict):
            out[n] = orjson.loads(raws[n])
    size = len(raw) + len(head) + sum(map(len, raws)) + _OVERHEAD * len(raws)
    kept = _Kept(compact(raw), tuple(ends), loop_start, tuple(lasts), tuple(roles), tuple(fragments), tuple(raws),
                 tuple(marks), tuple(tools), size)
    others = tuple(f for f in family if f is not best)[: _PER_CONVERSATION - 1]
    cache.put(key, (kept, *others), size + sum(f.size for f in others))
    return CachedConversation(system, out, marks, raws, any(tools))


def _convert_from(
    new: list[Any], first: int, start: int, ctx: ConvertContext
) -> list[tuple[int, dict[str, Any]]] | None:
    """The turns of messages ``first`` on (``new``), converted: (last message, turn) each."""
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
    return [(b, finish_turn(t)) for (_, b), t in zip(spans, out, strict=True)]
