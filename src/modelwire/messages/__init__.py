"""Conversation rules, applied once before any codec sees a conversation.

:func:`prepare_conversation` returns a new list (the caller's list and dicts
are never changed) in which:

* every assistant message's reasoning is normalized (:func:`normalize_reasoning`);
* assistant messages with only reasoning are left out (they stay in the
  caller's history): Anthropic rejects a turn whose last block is thinking;
* every tool call has an id (a deterministic one when missing, so prompt-cache
  prefixes stay stable) and is answered exactly once, by tool messages that
  follow its assistant message directly: results answering no call of that
  turn are dropped, a second result for one id is dropped (the first wins),
  and a call with no result gets a stub result placed after the real ones;
* system and developer messages stay where they are, at the start or later (a later one
  is an instruction from that point on, as Anthropic's mid-conversation system messages
  and Responses' system items are): each codec renders one at its place in its own
  protocol's form, never hoisted to the top;
* an assistant message's ``block_order`` (the order of its thinking, text and tool call
  blocks, :mod:`modelwire.blockorder`) is kept as it is;
* roles and basic types are checked; a broken message raises
  :class:`~modelwire.MessageError` with ``index`` (the position in the
  caller's list) and a message naming the field, e.g.
  ``messages[3].tool_calls[0].function.arguments must be a string``.

With ``repair=False`` nothing is repaired: each case above that would be
repaired raises ``MessageError(index=...)`` instead. Malformed argument JSON
is not our business here: it is kept raw and the codec decides.

With a ``cache`` (a :class:`PrepareCache`, such as the ``EncodeCache`` a ``Client`` and
the gateway hold), an agent's earlier turns are prepared once: the next call, which
repeats them, prepares only what follows (:mod:`._kept`; the result is the same).

:func:`apply_cache_layout` places prompt-cache breakpoints for callers who
want caching without placing them by hand.

Owns preparation, reasoning (:mod:`.reasoning`), think tags (:mod:`.thinktags`) and stop
sequences (:mod:`.stops`). Pure: no I/O. May import types, events, errors and the
accumulator only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ..errors import MessageError
from ..types import Message
from ._kept import MIN_MESSAGES, PrepareCache, prepare_kept
from ._prepare import STUB_RESULT, walk
from .reasoning import is_reasoning_only, normalize_reasoning
from .thinktags import ThinkTagSplitter, split_think_tags

__all__ = [
    "STUB_RESULT",
    "PrepareCache",
    "ThinkTagSplitter",
    "apply_cache_layout",
    "is_reasoning_only",
    "normalize_reasoning",
    "prepare_conversation",
    "split_think_tags",
]


# ------------------------------------------------------------------ prepare
def prepare_conversation(
    messages: Sequence[Message], *, repair: bool = True, cache: PrepareCache | None = None
) -> list[Message]:
    """What is sent for ``messages``: normalized, checked, repaired (see module doc).

    ``cache`` (an :class:`~modelwire.codecs.cache.EncodeCache`, as a ``Client`` and the
    gateway hold) keeps each conversation's work, so the next call, which repeats the
    earlier messages, prepares only what follows them; the result is the same."""
    if not isinstance(messages, list):
        raise MessageError(f"messages must be a list, got {type(messages).__name__}")
    if cache is not None and len(messages) >= MIN_MESSAGES:
        return prepare_kept(messages, repair, cache)  # type: ignore[return-value]
    out: list[dict[str, Any]] = []
    turn = walk(messages, 0, out, None, repair)
    if turn is not None:
        turn.close(out, repair)
    return out  # type: ignore[return-value]


# -------------------------------------------------------------- cache layout
CacheTTL = Literal["5m", "1h"]


def _marker(ttl: CacheTTL | None) -> dict[str, str]:
    if ttl not in (None, "5m", "1h"):
        raise ValueError(f"ttl must be '5m' or '1h', got {ttl!r}")
    return {"type": "ephemeral", "ttl": ttl} if ttl else {"type": "ephemeral"}


def _mark(msg: dict[str, Any], marker: dict[str, str]) -> dict[str, Any]:
    msg = dict(msg)
    content = msg.get("content")
    if isinstance(content, str) and content:
        msg["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
    elif isinstance(content, list) and content:
        last = content[-1]
        if isinstance(last, dict) and "cache_control" not in last:
            msg["content"] = [*content[:-1], {**last, "cache_control": dict(marker)}]
    elif "cache_control" not in msg:
        # No content to carry it (an assistant turn with only tool calls): the
        # codec puts an envelope marker on the turn's last block.
        msg["cache_control"] = dict(marker)
    return msg


def apply_cache_layout(
    messages: list[Message], ttl: CacheTTL | None = None, *, max_breakpoints: int = 4
) -> list[Message]:
    """Copies of ``messages`` with prompt-cache breakpoints placed: on the first
    message if it is a system (or developer) message, and on the last messages
    up to ``max_breakpoints`` in all (Anthropic allows 4).

    A breakpoint is ``cache_control: {"type": "ephemeral"}`` (plus ``ttl`` when
    given) on the message's last content part; string content becomes one text
    part. Parts that already carry ``cache_control`` keep theirs. Call it on a
    prepared conversation. Anthropic-style codecs send the markers; providers
    with automatic caching ignore them.
    """
    marker = _marker(ttl)
    out: list[Message] = list(messages)
    if not out or max_breakpoints <= 0:
        return out
    used = 0
    if out[0].get("role") in ("system", "developer"):
        out[0] = _mark(out[0], marker)  # type: ignore[assignment]
        used = 1
    tail = [i for i in range(len(out)) if out[i].get("role") not in ("system", "developer")]
    for i in tail[-(max_breakpoints - used):] if max_breakpoints > used else []:
        out[i] = _mark(out[i], marker)  # type: ignore[assignment]
    return out
