"""Kept JSON values (modelwire/kept_json.py): a list and a dict in every way a reader sees,
read-only at their top level, copied into plain changeable values, their ``json`` exactly
orjson's; the encode cache's key for them is that JSON, and for a list of messages that
begins with kept ones the join of theirs and the dumps of the rest."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs.cache import json_key
from modelwire.kept_json import KeptDict, KeptList, kept_json


def _dict(value: dict[str, Any]) -> KeptDict:
    return KeptDict(value, orjson.dumps(value))


def _list(value: list[Any]) -> KeptList:
    return KeptList(value, orjson.dumps(value))


@pytest.mark.parametrize("change", [
    lambda d: d.__setitem__("role", "x"), lambda d: d.__delitem__("role"), lambda d: d.pop("role"),
    lambda d: d.popitem(), lambda d: d.setdefault("new", 1), lambda d: d.update(new=1), lambda d: d.clear(),
    lambda d: d.__ior__({"new": 1}),
])
def test_a_kept_dict_refuses_every_change_and_stays_as_it_was(change) -> None:
    d = _dict({"role": "user", "content": "hi"})
    with pytest.raises(TypeError, match="read-only"):
        change(d)
    assert d == {"role": "user", "content": "hi"} and orjson.dumps(d) == d.json


@pytest.mark.parametrize("change", [
    lambda v: v.__setitem__(0, 9), lambda v: v.__delitem__(0), lambda v: v.append(9), lambda v: v.extend([9]),
    lambda v: v.insert(0, 9), lambda v: v.pop(), lambda v: v.remove(1), lambda v: v.clear(), lambda v: v.sort(),
    lambda v: v.reverse(), lambda v: v.__iadd__([9]), lambda v: v.__imul__(2),
])
def test_a_kept_list_refuses_every_change_and_stays_as_it_was(change) -> None:
    v = _list([1, 2, 3])
    with pytest.raises(TypeError, match="read-only"):
        change(v)
    assert v == [1, 2, 3] and orjson.dumps(v) == v.json


def test_copies_of_kept_values_are_plain_and_can_change() -> None:
    d = _dict({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    v = _list([{"name": "t"}, 2])
    for made in (dict(d), {**d}, copy.copy(d), copy.deepcopy(d), pickle.loads(pickle.dumps(d))):
        assert type(made) is dict and made == d
        made["role"] = "assistant"
    for made_list in (list(v), v[:], copy.copy(v), copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert type(made_list) is list and made_list == v
        made_list.append(3)
    assert copy.deepcopy(d)["content"] is not d["content"]  # deep: nothing shared
    assert d == {"role": "user", "content": [{"type": "text", "text": "hi"}]} and v == [{"name": "t"}, 2]


def test_readers_see_a_list_and_a_dict() -> None:
    d, v = _dict({"a": 1}), _list([1, 2])
    assert isinstance(d, dict) and isinstance(v, list)
    assert d == {"a": 1} and {"a": 1} == d and v == [1, 2] and repr(d) == "{'a': 1}" and repr(v) == "[1, 2]"
    assert orjson.dumps({"m": [d], "t": v}) == b'{"m":[{"a":1}],"t":[1,2]}'
    assert kept_json(d) == b'{"a":1}' and kept_json(v) == b"[1,2]" and kept_json({"a": 1}) is None


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                     max_leaves=8)
_MESSAGES = st.lists(st.dictionaries(st.sampled_from(["role", "content", "x"]), _JSON, min_size=1), min_size=1,
                     max_size=6)


@given(_MESSAGES, st.integers(0, 6))
def test_the_key_of_messages_that_begin_with_kept_ones_is_their_dump(messages, kept) -> None:
    mixed = [_dict(m) if i < max(1, kept) else m for i, m in enumerate(messages)]
    assert json_key(mixed) == orjson.dumps(messages)
    assert json_key(mixed[0]) == orjson.dumps(messages[0])
    assert json_key(_list(messages)) == orjson.dumps(messages)


def test_a_list_with_content_orjson_would_not_key_has_no_key_with_kept_messages_too() -> None:
    import datetime

    mixed = [_dict({"role": "user"}), {"role": "user", "at": datetime.date(2026, 1, 1)}]
    assert json_key(mixed) is None and json_key([mixed[1]]) is None


def test_the_openai_door_hands_kept_messages_on_and_copies_the_callers() -> None:
    from modelwire.codecs.chat_completions import decode_request

    kept = _dict({"role": "user", "content": "hi"})
    plain = {"role": "assistant", "content": "hello"}
    messages: list[Any] = decode_request({"model": "m", "messages": [kept, plain]}).get("messages") or []
    assert messages[0] is kept
    assert messages[1] == plain and messages[1] is not plain
