"""prepare_conversation with a cache equals prepare_conversation without one, element by
element (key order and types included) and in its errors (type, message, index), however
warm the cache is: after every earlier prefix of the conversation, after unrelated and
edited conversations, with repair on and off."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs.cache import EncodeCache
from modelwire.errors import MessageError
from modelwire.messages import prepare_conversation

_IDS = st.sampled_from(["a", "b", "c", None, ""])
_ARGS = st.sampled_from(['{"x":1}', "{", "{}", None, 7])
_CALL = st.one_of(
    st.builds(
        lambda id, name, args, extra: {k: v for k, v in {
            "id": id, "type": "function", "function": {"name": name, "arguments": args}, **extra}.items()
            if v is not None},
        _IDS, st.sampled_from(["f", "g", ""]), _ARGS,
        st.sampled_from([{}, {"cache_control": {"type": "ephemeral"}}, {"type": None}]),
    ),
    st.just({"id": "a", "function": "f"}),  # broken: function is not a dict
)
_TEXT = st.sampled_from(["", "hi", "<think>r</think>", "<think>r</think>ok", "a < b", "  ", "ok"])
_DETAILS = st.lists(st.sampled_from([
    {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "t", "signature": "s"}},
    {"type": "reasoning.text", "text": "why"},
    {"type": "reasoning.encrypted", "data": "opaque"},
]), max_size=2)
_PARTS = st.lists(st.sampled_from([
    {"type": "text", "text": "p"},
    {"type": "thinking", "thinking": "deep", "signature": "sig"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
    {"type": "text", "text": 5},  # broken
]), max_size=3)


@st.composite
def _assistant(draw: st.DrawFn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": draw(st.one_of(st.none(), _TEXT, _PARTS))}
    calls = draw(st.one_of(st.none(), st.just([]), st.lists(_CALL, max_size=3), st.just("not a list")))
    if calls is not None or draw(st.booleans()):
        msg["tool_calls"] = calls
    for key, value in (("reasoning", st.sampled_from(["why", ""])),
                       ("reasoning_content", st.sampled_from(["why", "", None])),
                       ("reasoning_details", _DETAILS)):
        if draw(st.integers(0, 3)) == 0:
            msg[key] = draw(value)
    return msg


_MESSAGE = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c}, st.one_of(_TEXT, _PARTS)),
    st.builds(lambda c, r: {"role": r, "content": c}, _TEXT, st.sampled_from(["system", "developer"])),
    _assistant(),
    _assistant(),
    st.builds(lambda id, c: {"role": "tool", "tool_call_id": id, "content": c},
              st.sampled_from(["a", "b", "c", "zz", "call_x"]), st.sampled_from(["r", "", None])),
    st.builds(lambda id: {"role": "tool", "tool_call_id": id, "content": "r"},
              st.sampled_from(["a", "b"])),
    st.sampled_from([{"role": "function", "content": "x"}, {"role": "tool", "content": "r"}, "not a dict",
                     {"role": "user", "content": 3}]),  # broken
)
_HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "start"}]
_BROKEN = st.sampled_from([{"role": "function", "content": "x"}, {"role": "tool", "content": "r"}, "not a dict",
                           {"role": "user", "content": 3}, {"role": "assistant", "tool_calls": "f"}])
_REASONING_ONLY = st.sampled_from([{"role": "assistant", "content": "", "reasoning_content": "hm"},
                                   {"role": "assistant", "content": "<think>only</think>"}])


_NO_CALLS = st.sampled_from([None, []])


@st.composite
def _round(draw: st.DrawFn, clean: bool) -> list[Any]:
    """A turn of an agent: mostly an assistant's calls and their results; unless
    ``clean``, some results missing, repeated or answering nothing, now and then a broken
    message."""
    kind = draw(st.integers(0, 19))
    if kind == 0 and not clean:
        return [draw(_BROKEN)]
    if kind < 8:
        msg = draw(_MESSAGE)
        if clean and isinstance(msg, dict) and msg.get("role") == "assistant":
            # its reasoning in every spelling, its calls none at all (or an empty list)
            msg = {**msg, "content": draw(st.one_of(_TEXT, _PARTS)) or "x", "tool_calls": draw(_NO_CALLS)}
            if not isinstance(msg["content"], str) or not msg["content"].strip():
                msg["content"] = "visible"
        return [msg] if not clean or msg in _CLEAN_OK or _is_plain(msg) else [{"role": "user", "content": "u"}]
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", None]), min_size=1, max_size=3,
                          unique=clean))
    calls = [{"type": "function", "function": {"name": "f", "arguments": draw(st.sampled_from(['{"x":1}', "{}"]))},
              **({"id": n} if n else {})} for n in names]
    out: list[Any] = [{"role": "assistant", "content": draw(st.sampled_from([None, "ok", "a < b", "<think>t</think>"])),
                       "tool_calls": calls, **draw(st.sampled_from([{}, {"reasoning": "why"}]))}]
    for n in names:
        for _ in range(1 if clean else draw(st.sampled_from([1, 1, 1, 1, 1, 1, 1, 1, 0, 2]))):
            out.append({"role": "tool", "tool_call_id": n or _made_id(calls, n), "content": "r"})
        if not clean and draw(st.integers(0, 19)) == 0:
            out.append(draw(st.one_of(_REASONING_ONLY, st.just({"role": "tool", "tool_call_id": "zz", "content": "r"}))))
    return out


_CLEAN_OK: list[Any] = []


def _is_plain(msg: Any) -> bool:
    """A well-formed message that prepare keeps (no error, not left out)."""
    try:
        return len(prepare_conversation([msg])) == 1 and msg.get("role") != "tool"
    except MessageError:
        return False


def _made_id(calls: list[dict[str, Any]], name: str | None) -> str:
    """The id prepare gives a call that came without one (so a clean result answers it)."""
    sent: list[Any] = [{"role": "assistant", "content": None, "tool_calls": calls}]
    done: list[Any] = prepare_conversation(sent)
    missing = [c["id"] for c, raw in zip(done[0]["tool_calls"], calls, strict=True) if "id" not in raw]
    return missing[0] if missing else "call_x"


@st.composite
def _conversations(draw: st.DrawFn) -> list[Any]:
    # clean: every output lines up with its message; late: so far, then not
    kind = draw(st.sampled_from(["clean", "dirty", "late"]))
    rounds = draw(st.lists(_round(kind == "clean"), min_size=4, max_size=16))
    if kind == "late":
        rounds = draw(st.lists(_round(True), min_size=10, max_size=14)) + rounds
    return _HEAD + [m for r in rounds for m in r]


_CONVERSATIONS = _conversations()


def _outcome(messages: list[Any], repair: bool, cache: EncodeCache | None) -> tuple[Any, ...]:
    try:
        out = prepare_conversation(messages, repair=repair, cache=cache)
    except MessageError as exc:
        return ("error", type(exc), str(exc), exc.index)
    return ("ok", repr(out), out)  # repr: key order and types too


def _same(messages: list[Any], repair: bool, cache: EncodeCache) -> None:
    before = copy.deepcopy(messages)
    cached = _outcome(messages, repair, cache)
    assert cached == _outcome(messages, repair, None)
    assert messages == before, "the caller's conversation is never changed"
    if cached[0] == "ok":  # new dicts and new call lists, as without a cache
        theirs = {id(m) for m in messages} | {id(m["tool_calls"]) for m in messages
                                              if isinstance(m, dict) and m.get("tool_calls") is not None}
        assert not [m for m in cached[2] if id(m) in theirs or id(m.get("tool_calls", m)) in theirs]


@settings(max_examples=300, deadline=None)
@given(_CONVERSATIONS, st.booleans(), st.booleans())
def test_a_cache_warmed_by_every_earlier_prefix_changes_nothing(messages, repair, fresh_objects):
    cache = EncodeCache()
    for end in range(len(messages) + 1):
        prefix = messages[:end]
        # as a gateway parses each request anew, or as a Client's caller keeps its objects
        _same(copy.deepcopy(prefix) if fresh_objects else prefix, repair, cache)
    _same(messages, repair, cache)  # the same request again


@settings(max_examples=300, deadline=None)
@given(_CONVERSATIONS, st.lists(_CONVERSATIONS, max_size=3), st.booleans(), st.integers(0, 30), _MESSAGE)
def test_a_cache_warmed_by_other_and_edited_conversations_changes_nothing(messages, others, repair, at, edit):
    cache = EncodeCache(max_entries=8)
    for other in [*others, messages]:
        _same(other, repair, cache)
        _same(other, not repair, cache)
    edited = copy.deepcopy(messages)
    edited[at % len(edited)] = edit  # a history changed in place, then sent again
    _same(edited, repair, cache)
    _same(messages + [edit, edit], repair, cache)
    _same(messages[:-2] + [edit], repair, cache)
