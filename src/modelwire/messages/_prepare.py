"""The preparation pass itself (rules in :mod:`modelwire.messages`): one walk over the
messages whose only state is the open :class:`Turn`, so a walk can stop before any message
and go on from there with that state (what :mod:`._kept` does for an agent's next turn).

:func:`walk` prepares ``messages[start:]``; with a :class:`Trace` it also notes, per
message, how its output was made (an ``Op``), the stub results placed before it, and the
turn open before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..accumulate import deterministic_tool_call_id
from ..errors import MessageError
from .reasoning import _already_normal, is_reasoning_only, normalize_reasoning

__all__ = ["STUB_RESULT", "Op", "Trace", "Turn", "assistant", "stub", "walk"]

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
def _fix_calls(msg: Mapping[str, Any], i: int, repair: bool) -> tuple[list[dict[str, Any]], bool]:
    """The assistant message's tool calls, checked, ids filled in (new list), and whether
    every call was well-formed (so the list holds the caller's own call dicts)."""
    calls = msg.get("tool_calls")
    if calls is None:
        return [], True
    if not isinstance(calls, list):
        raise MessageError(f"messages[{i}].tool_calls must be a list", index=i)
    fixed: list[dict[str, Any]] = []
    seen: set[str] = set()
    shared = True
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
            shared = False
        seen.add(fixed[-1]["id"])
    return fixed, shared  # pyright: ignore[reportUnknownVariableType]


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


def stub(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": STUB_RESULT}


class Turn:
    """The tool calls of the assistant message being answered."""

    __slots__ = ("answered", "ids", "index")

    def __init__(self, index: int, ids: list[str], answered: set[str] | None = None) -> None:
        self.index = index
        self.ids = ids
        self.answered: set[str] = set() if answered is None else answered

    def close(self, out: list[dict[str, Any]], repair: bool) -> list[str]:
        """Stub results for the calls left unanswered (raises with ``repair=False``)."""
        if len(self.answered) == len(self.ids):
            return []  # every call answered (answered holds only ids of these calls)
        missing = [cid for cid in self.ids if cid not in self.answered]
        if missing and not repair:
            raise MessageError(
                f"messages[{self.index}] has tool calls with no tool result: "
                + ", ".join(repr(c) for c in missing),
                index=self.index,
            )
        out.extend(stub(cid) for cid in missing)
        return missing


def _answer(turn: Turn | None, msg: Mapping[str, Any], i: int, repair: bool) -> bool:
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


# -------------------------------------------------------------------- walk
class Op:
    """How a message's output was made, for a later walk to make it again: ``COPY`` a
    plain copy; ``PLAIN`` an assistant's copy without its empty ``tool_calls``; ``CALLS`` a
    copy with a copy of its (well-formed) ``tool_calls`` list; ``AGAIN`` an assistant
    prepared again (its reasoning or calls were changed); ``DROP`` nothing. ``STUBS`` is
    added where stub results for the turn before go out first (never with ``DROP``: ops
    from ``DROP`` up are the irregular ones, after which outputs no longer line up with
    messages)."""

    COPY, PLAIN, CALLS, AGAIN, DROP = 0, 1, 2, 3, 4
    STUBS = 8


class Trace:
    """What a walk noted: per message its :class:`Op`, the stubs placed before it, and
    where the turn open before it began (the index of its assistant message, -1 for none;
    ``states`` has one more entry: the turn open after the last message)."""

    __slots__ = ("ops", "states", "stubs")

    def __init__(self, ops: bytearray, states: list[int], stubs: dict[int, tuple[str, ...]]) -> None:
        self.ops = ops
        self.states = states
        self.stubs = stubs


def assistant(original: dict[str, Any], i: int, repair: bool) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """An assistant message as sent (reasoning normalized, calls fixed), its calls, and
    the :class:`Op` that makes it again from the same message."""
    fast = _already_normal(original)
    msg = dict(original) if fast else normalize_reasoning(original)
    calls, shared = _fix_calls(msg, i, repair)
    if calls:
        msg["tool_calls"] = calls
        return msg, calls, Op.CALLS if fast and shared else Op.AGAIN
    if "tool_calls" not in msg:
        return msg, calls, Op.COPY if fast else Op.AGAIN
    del msg["tool_calls"]  # an empty list is rejected by OpenAI
    return msg, calls, Op.PLAIN if fast else Op.AGAIN


def walk(messages: list[Any], start: int, out: list[dict[str, Any]], turn: Turn | None, repair: bool,
         trace: Trace | None = None) -> Turn | None:
    """Prepare ``messages[start:]`` onto ``out`` from the open ``turn``; the turn left
    open after the last message (its stubs are the caller's to place)."""
    if trace is not None:
        return _traced(messages, start, out, turn, repair, trace)
    for i in range(start, len(messages)):
        original = messages[i]
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
        # assistant(), inlined: most of a conversation's cost is per message
        msg = dict(original) if _already_normal(original) else normalize_reasoning(original)
        calls, _ = _fix_calls(msg, i, repair)
        if calls:
            msg["tool_calls"] = calls
        else:
            msg.pop("tool_calls", None)  # an empty list is rejected by OpenAI
            if (msg.get("reasoning_content") or msg.get("reasoning_details")) and is_reasoning_only(msg):
                # Left out of what is sent, so it does not stand between a
                # call and its results either.
                continue
        if turn is not None:
            turn.close(out, repair)
        turn = Turn(i, [c["id"] for c in calls]) if calls else None
        out.append(msg)
    return turn


def _traced(messages: list[Any], start: int, out: list[dict[str, Any]], turn: Turn | None, repair: bool,
            trace: Trace) -> Turn | None:
    """:func:`walk` noting each message's :class:`Op` (the same steps; a property test
    holds the two to the same output)."""
    ops, states, stubs = trace.ops.append, trace.states.append, trace.stubs
    for i in range(start, len(messages)):
        original = messages[i]
        states(-1 if turn is None else turn.index)
        role = _check_message(original, i)
        if role == "tool":
            if _answer(turn, original, i, repair):
                out.append(dict(original))
                ops(Op.COPY)
            else:
                ops(Op.DROP)
            continue
        if role != "assistant":
            msg, calls, op = dict(original), (), Op.COPY
        else:
            msg, calls, op = assistant(original, i, repair)
            if not calls and (msg.get("reasoning_content") or msg.get("reasoning_details")) and is_reasoning_only(msg):
                ops(Op.DROP)
                continue
        if turn is not None:
            missing = turn.close(out, repair)
            if missing:
                stubs[i] = tuple(missing)
                op |= Op.STUBS
        turn = Turn(i, [c["id"] for c in calls]) if calls else None
        out.append(msg)
        ops(op)
    states(-1 if turn is None else turn.index)
    return turn
