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

:func:`apply_cache_layout` places prompt-cache breakpoints for callers who
want caching without placing them by hand.

Owns preparation, reasoning (:mod:`.reasoning`), think tags (:mod:`.thinktags`) and stop
sequences (:mod:`.stops`). Pure: no I/O. May import types, events, errors and the
accumulator only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..accumulate import deterministic_tool_call_id
from ..errors import MessageError
from ..types import Message
from .reasoning import is_reasoning_only, normalize_reasoning
from .thinktags import ThinkTagSplitter, split_think_tags

__all__ = [
    "STUB_RESULT",
    "ThinkTagSplitter",
    "apply_cache_layout",
    "is_reasoning_only",
    "normalize_reasoning",
    "prepare_conversation",
    "split_think_tags",
]

STUB_RESULT = "result unavailable: the tool call was not answered"
_ROLES = ("system", "developer", "user", "assistant", "tool")  # order used in messages
# A call with an empty name cannot be sent, but dropping it would orphan its
# result; renaming keeps the pair intact (hermes #47967).
_INVALID_NAME = "invalid_tool_call"
_CALL_KEYS = frozenset({"id", "type", "function"})


# -------------------------------------------------------------- type checks
def _check_parts(parts: list[Any], where: str, index: int) -> None:
    for j, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise MessageError(f"{where}[{j}] must be a content part with a string 'type'",
                               index=index)
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise MessageError(f"{where}[{j}].text must be a string", index=index)


def _check_content(msg: dict[str, Any], i: int, *, optional: bool) -> None:
    content = msg.get("content")
    if type(content) is str:
        return
    if isinstance(content, list):
        _check_parts(content, f"messages[{i}].content", i)
        return
    if content is None and optional:
        return
    raise MessageError(
        f"messages[{i}].content must be a string or a list of content parts", index=i
    )


def _check_message(msg: Any, i: int) -> str:
    if not isinstance(msg, dict):
        raise MessageError(f"messages[{i}] must be a dict, got {type(msg).__name__}", index=i)
    role = msg.get("role")
    if role not in _ROLES:
        hint = " (use 'tool')" if role == "function" else ""
        raise MessageError(
            f"messages[{i}].role must be one of {', '.join(_ROLES)}, got {role!r}{hint}", index=i
        )
    if role == "tool" and (not isinstance(msg.get("tool_call_id"), str) or not msg["tool_call_id"]):
        raise MessageError(f"messages[{i}].tool_call_id must be a non-empty string", index=i)
    _check_content(msg, i, optional=role == "assistant")
    return role


# ---------------------------------------------------------------- tool calls
def _fix_calls(msg: dict[str, Any], i: int, repair: bool) -> list[dict[str, Any]]:
    """The assistant message's tool calls, checked, ids filled in (new list)."""
    calls = msg.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise MessageError(f"messages[{i}].tool_calls must be a list", index=i)
    fixed: list[dict[str, Any]] = []
    seen: set[str] = set()
    for k, call in enumerate(calls):
        fn = call.get("function") if type(call) is dict else None
        call_id = call.get("id") if fn is not None else None
        if (
            type(fn) is dict
            and type(call_id) is str
            and call_id
            and call_id not in seen
            and call.get("type")
            and type(fn.get("name")) is str
            and fn["name"]
            and type(fn.get("arguments")) is str
        ):
            fixed.append(call)  # already well-formed: shared, never changed
        else:
            fixed.append(_fix_call(call, i, k, seen, repair))
        seen.add(fixed[-1]["id"])
    return fixed


def _fix_call(call: Any, i: int, k: int, seen: set[str], repair: bool) -> dict[str, Any]:
    where = f"messages[{i}].tool_calls[{k}]"
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise MessageError(f"{where}.function must be a dict", index=i)
    function = dict(call["function"])
    name = function.get("name")
    if not isinstance(name, str):
        raise MessageError(f"{where}.function.name must be a string", index=i)
    if not name:
        if not repair:
            raise MessageError(f"{where}.function.name is empty", index=i)
        function["name"] = name = _INVALID_NAME
    arguments = function.get("arguments")
    if arguments is None:
        # Some OpenAI-compatible servers send null arguments for a call
        # with no parameters; "{}" is what they meant.
        if not repair:
            raise MessageError(f"{where}.function.arguments is missing", index=i)
        function["arguments"] = arguments = "{}"
    elif not isinstance(arguments, str):
        raise MessageError(f"{where}.function.arguments must be a string", index=i)
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise MessageError(f"{where}.id must be a string", index=i)
    if not call_id:
        call_id = deterministic_tool_call_id(name, arguments, k)
    elif call_id in seen:
        # Two calls with one id cannot both be answered (Anthropic rejects
        # duplicate tool_use ids): the second gets its own id.
        if not repair:
            raise MessageError(f"{where}.id {call_id!r} repeats an earlier call's id", index=i)
        call_id = deterministic_tool_call_id(name, arguments, k)
    rest = {key: value for key, value in call.items() if key not in _CALL_KEYS}
    return {"id": call_id, "type": call.get("type") or "function", "function": function, **rest}


def _stub(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": STUB_RESULT}


class _Turn:
    """The tool calls of the assistant message being answered."""

    __slots__ = ("answered", "ids", "index")

    def __init__(self, index: int, ids: list[str]) -> None:
        self.index = index
        self.ids = ids
        self.answered: set[str] = set()

    def close(self, out: list[dict[str, Any]], repair: bool) -> None:
        if len(self.answered) == len(self.ids):
            return  # every call answered (answered holds only ids of these calls)
        missing = [cid for cid in self.ids if cid not in self.answered]
        if missing and not repair:
            raise MessageError(
                f"messages[{self.index}] has tool calls with no tool result: "
                + ", ".join(repr(c) for c in missing),
                index=self.index,
            )
        out.extend(_stub(cid) for cid in missing)


def _answer(turn: _Turn | None, msg: Mapping[str, Any], i: int, repair: bool) -> bool:
    """Whether tool message ``msg`` answers an open call (else it is dropped)."""
    call_id = msg["tool_call_id"]
    if turn is not None and call_id in turn.ids and call_id not in turn.answered:
        turn.answered.add(call_id)
        return True
    if repair:
        return False
    if turn is not None and call_id in turn.answered:
        raise MessageError(f"messages[{i}] answers tool_call_id {call_id!r} a second time",
                           index=i)
    raise MessageError(
        f"messages[{i}] answers tool_call_id {call_id!r}, which is not a tool call of the "
        "assistant message right before it",
        index=i,
    )


# ------------------------------------------------------------------ prepare
def prepare_conversation(messages: Sequence[Message], *, repair: bool = True) -> list[Message]:
    """What is sent for ``messages``: normalized, checked, repaired (see module doc)."""
    if not isinstance(messages, list):
        raise MessageError(f"messages must be a list, got {type(messages).__name__}")
    out: list[dict[str, Any]] = []
    turn: _Turn | None = None
    for i, original in enumerate(messages):
        role = _check_message(original, i)
        if role == "tool":
            if _answer(turn, original, i, repair):
                out.append(dict(original))
            continue
        if role != "assistant":
            if turn is not None:
                turn.close(out, repair)
                turn = None
            out.append(dict(original))
            continue
        msg = normalize_reasoning(original)
        calls = _fix_calls(msg, i, repair)
        if not calls:
            msg.pop("tool_calls", None)  # an empty list is rejected by OpenAI
            if (msg.get("reasoning_content") or msg.get("reasoning_details")) and is_reasoning_only(msg):
                # Left out of what is sent, so it does not stand between a
                # call and its results either.
                continue
        if turn is not None:
            turn.close(out, repair)
            turn = None
        if calls:
            msg["tool_calls"] = calls
            turn = _Turn(i, [c["id"] for c in calls])
        out.append(msg)
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
