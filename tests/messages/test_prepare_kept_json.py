"""prepare_conversation on a history the gateway's door kept (its messages KeptDict, read-
only): the same output as on plain copies, with or without a cache, however warm; a kept
message is handed on as it is where prepare would copy it or its calls, and never changed
(it would raise); the caller's other messages are copied as always."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs.cache import EncodeCache
from modelwire.errors import MessageError
from modelwire.kept_json import KeptDict
from modelwire.messages import prepare_conversation

from .test_prepare_kept_props import _CONVERSATIONS


def _kept(messages: list[Any], fresh: int) -> list[Any]:
    """``messages`` as a kept history brings them: every dict but the last ``fresh`` kept."""
    cut = len(messages) - fresh
    return [KeptDict(copy.deepcopy(m), orjson.dumps(m)) if i < cut and type(m) is dict else copy.deepcopy(m)
            for i, m in enumerate(messages)]


def _outcome(messages: list[Any], repair: bool, cache: EncodeCache | None) -> tuple[Any, ...]:
    try:
        out = prepare_conversation(messages, repair=repair, cache=cache)
    except MessageError as exc:
        return ("error", type(exc), str(exc), exc.index)
    return ("ok", repr(out), out)


@settings(max_examples=200, deadline=None)
@given(_CONVERSATIONS, st.booleans(), st.sampled_from([0, 2]))
def test_a_kept_history_prepares_as_plain_messages_do_turn_after_turn(messages, repair, fresh) -> None:
    cache = EncodeCache()
    for end in range(len(messages) + 1):
        turn = _kept(messages[:end], fresh)
        plain = copy.deepcopy(messages[:end])
        expected = _outcome(plain, repair, None)
        for _ in range(2):  # the turn, then the same turn again (every message kept)
            got = _outcome(turn, repair, cache)
            assert got[:2] == expected[:2]
        assert _outcome(turn, repair, None)[:2] == expected[:2]
        if got[0] == "ok":
            theirs = {id(m) for m in turn if type(m) is not KeptDict}
            assert not [m for m in got[2] if id(m) in theirs]  # the caller's plain messages: copied
            assert all(m == orjson.loads(m.json) for m in turn if type(m) is KeptDict)  # unchanged


def test_kept_messages_are_handed_on_and_compared_by_identity() -> None:
    history: list[Any] = [{"role": "system", "content": "sys"}]
    for i in range(20):
        history += [{"role": "user", "content": f"q{i}"},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": "r"}]
    turn = _kept(history, 2)
    cache = EncodeCache()
    for _ in range(3):
        out = prepare_conversation(turn, cache=cache)
    assert out == prepare_conversation(copy.deepcopy(history))
    # every kept message goes on as the kept object, an assistant's calls too (nothing
    # changes them); the last two, not kept, are the turn's own copies
    assert all(out[i] is turn[i] for i in range(len(turn) - 2))
    assert out[-1] is not turn[-1] and out[-1] == turn[-1]
