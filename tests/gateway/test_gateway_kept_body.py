"""An agent's tools and history parsed once (gateway/kept_body.py): a body holding a kept
tools list's bytes, or a kept history front's, is parsed exactly as ``orjson.loads``
parses it; anything else is parsed whole. Through the gateway, every door's upstream gets
the same request as from a body parsed whole, and what is kept is never changed by a
request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.config import load_config
from modelwire.gateway.depth import check_depth
from modelwire.gateway.errors import GatewayError
from modelwire.gateway.kept_body import (
    MAX_FRONT_BYTES,
    MAX_HISTORY_BYTES,
    MAX_KEPT_BYTES,
    MAX_LIST_BYTES,
    MIN_BYTES,
    KeptBody,
)
from modelwire.gateway.testing import RunningGateway

from .canned import canned_upstream

KEY = "gw-kept-tools-key-0123456789"


def _tools(count: int = 40, extra: str = "") -> list[dict[str, Any]]:
    return [{"type": "function", "function": {
        "name": f"tool_{i}{extra}", "description": "Reads a file from the workspace. " * 12,
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "where the file is"},
            "limit": {"type": "integer", "minimum": 1}}, "required": ["path"]}}} for i in range(count)]


def _history(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(n)]


def _long_history(n: int, extra: str = "") -> list[dict[str, Any]]:
    """``n`` messages of an agent's conversation, ~2 KB each: a front worth keeping."""
    return [{"role": "user" if i % 2 == 0 else "assistant",
             "content": f"message {i}{extra}: " + "the file says x = x * 2 and returns it. " * 50}
            for i in range(n)]


def _check(raw: bytes, data: Any) -> None:  # the door's checks, as the gateway runs them
    if not isinstance(data, dict):
        raise GatewayError(400, "request body must be a JSON object", "invalid_json")
    check_depth(raw, data, 128, 64)


class _Loads:
    """A KeptBody and a load that tells what was found: (data, tools kept, front kept)."""

    def __init__(self, kept: KeptBody | None = None) -> None:
        self.kept = kept or KeptBody()

    def __call__(self, body: bytes, history: str = "messages", check: Any = _check) -> tuple[Any, bool, bool]:
        tools, fronts = self.kept.tools_hits, self.kept.history_hits
        data = self.kept.loads(body, history, check)
        return data, self.kept.tools_hits > tools, self.kept.history_hits > fronts


def _kept() -> _Loads:
    return _Loads()


def _keep(loads: _Loads, body: bytes) -> None:
    """An agent's first three turns with ``body``'s tools: seen, passed over, kept."""
    for _ in range(3):
        data, hit, _ = loads(body)
        assert not hit and data == orjson.loads(body)


def test_the_same_tools_are_parsed_once_as_history_grows_behind_or_before_them() -> None:
    kept = _kept()
    tools = _tools()
    assert len(orjson.dumps(tools)) >= MIN_BYTES
    _keep(kept, orjson.dumps({"model": "m", "messages": _history(1), "tools": tools, "max_tokens": 9}))
    for turn in range(1, 6):
        # Claude Code's order: the history before the tools; then a client that puts them first
        for first, body in ((True, {"model": "m", "messages": _history(turn * 2), "tools": tools, "max_tokens": 9}),
                            (False, {"tools": tools, "model": "m", "messages": _history(turn * 2)})):
            raw = orjson.dumps(body)
            data, hit, _ = kept(raw)
            assert data == orjson.loads(raw)
            assert hit == (first or turn > 1)  # the second layout is learned on its first body
    assert kept.kept.tools_hits == 9


def test_a_changed_tool_is_parsed_again_and_then_kept() -> None:
    kept = _kept()
    first = orjson.dumps({"messages": _history(2), "tools": _tools()})
    _keep(kept, first)
    assert kept(first)[1]
    changed = orjson.dumps({"messages": _history(2), "tools": _tools(extra="x")})
    _keep(kept, changed)
    data, hit, _ = kept(changed)
    assert hit and data["tools"] == _tools(extra="x")
    # one byte of the same length changed inside a description
    same_length = changed.replace(b"Reads a file", b"Reads a fild", 1)
    data, hit, _ = kept(same_length)
    assert not hit and data == orjson.loads(same_length)


def test_tools_that_change_every_turn_are_never_kept_and_looked_at_less_and_less(monkeypatch) -> None:
    from modelwire.gateway import kept_body

    looked: list[int] = []
    find = kept_body._compact_values_at
    monkeypatch.setattr(kept_body, "_compact_values_at", lambda body, key: looked.append(1) or find(body, key))
    kept = _kept()
    for turn in range(100):
        body = orjson.dumps({"messages": _history(2), "tools": _tools(count=30, extra=f"-{turn}")})
        data, hit, _ = kept(body)
        assert not hit and data == orjson.loads(body)
    assert kept.kept.lists == 0 and kept.kept.tools_hits == 0
    # bodies 1, 3, 6, 11, 20, 37, 54, 71 and 88: 1, 2, 4, 8 then 16 passed over each time
    assert len(looked) == 9
    # then a list that comes again is still kept, within two of the longest pauses
    stable = orjson.dumps({"messages": _history(2), "tools": _tools()})
    hits = [kept(stable)[1] for _ in range(40)]
    assert hits[-1] and hits.index(True) <= 2 * 16 + 3


def test_the_kept_bytes_elsewhere_in_the_body_are_not_taken_for_its_tools() -> None:
    kept = _kept()
    tools = _tools()
    _keep(kept, orjson.dumps({"messages": _history(2), "tools": tools}))
    # the same bytes at the same distance from the end, but as metadata: the body's tools are others
    other = [{"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}]
    body = orjson.dumps({"messages": _history(2), "tools": other, "metadata": tools})
    data, hit, _ = kept(body)
    assert not hit and data == orjson.loads(body)
    body = orjson.dumps({"metadata": tools, "messages": _history(2)})  # no tools at all
    data, hit, _ = kept(body)
    assert not hit and data == orjson.loads(body) and "tools" not in data


def test_a_body_that_is_not_json_is_refused_as_before() -> None:
    kept = _kept()
    good = orjson.dumps({"messages": _history(2), "tools": _tools()})
    _keep(kept, good)
    for bad in (good[:-1], good + b"x", good.replace(b'"messages"', b'"messages', 1), good[:-1] + b",}"):
        with pytest.raises(orjson.JSONDecodeError):
            kept(bad)


def test_tools_a_client_writes_with_spaces_are_not_kept_and_not_looked_for_again() -> None:
    kept = _kept()
    body = json.dumps({"messages": _history(2), "tools": _tools()}).encode()  # Python's ", " and ": "
    for _ in range(3):
        data, hit, _ = kept(body)
        assert not hit and data == orjson.loads(body)
    assert kept.kept.tools_hits == 0


def test_tools_whose_bytes_differ_from_a_compact_dump_are_not_kept_and_dumped_less_and_less(monkeypatch) -> None:
    from modelwire.gateway import kept_body

    dumped: list[int] = []

    class Counting:  # orjson as kept_body sees it, the dumps of each list counted once
        JSONEncodeError = orjson.JSONEncodeError

        @staticmethod
        def dumps(value: Any) -> bytes:
            if isinstance(value, dict) and value.get("function", {}).get("name") == "tool_0-café":
                dumped.append(1)
            return orjson.dumps(value)

        loads = staticmethod(orjson.loads)

    monkeypatch.setattr(kept_body, "orjson", Counting)
    kept = _kept()
    # compact, but with non-ASCII escaped (json.dumps' ensure_ascii): orjson writes it raw
    tools = _tools(extra="-café")
    body = json.dumps({"messages": _history(2), "tools": tools}, separators=(",", ":")).encode()
    assert b"\\u00e9" in body
    for _ in range(40):
        data, hit, _ = kept(body)
        assert not hit and data == orjson.loads(body)
    assert len(dumped) == 6 and kept.kept.lists == 0  # bodies 1, 3, 6, 11, 20 and 37


def test_a_tools_list_too_deep_for_the_schema_limit_is_refused_every_time_and_never_kept() -> None:
    kept = _kept()
    body = orjson.dumps({"messages": _history(2), "tools": _tools()})

    def strict(raw: bytes, data: Any) -> None:
        check_depth(raw, data, 128, 2)
    for _ in range(4):
        with pytest.raises(GatewayError, match="max_schema_depth"):
            kept(body, check=strict)
    assert kept.kept.lists == 0


def test_what_a_caller_does_with_a_first_bodys_tools_does_not_reach_the_kept_list() -> None:
    kept = _kept()
    body = orjson.dumps({"messages": _history(2), "tools": _tools()})
    kept(body)
    kept(body)
    data = kept(body)[0]  # the third: kept
    data["tools"][0]["function"]["name"] = "changed"
    data, hit, _ = kept(body)
    assert hit and data["tools"] == _tools()


def test_what_is_kept_is_bounded_in_bytes_the_most_recent_first() -> None:
    kept = _kept()
    huge = _tools(count=2000)
    assert len(orjson.dumps(huge)) > MAX_LIST_BYTES
    body = orjson.dumps({"messages": _history(2), "tools": huge})
    for _ in range(2):
        data, hit, _ = kept(body)
        assert not hit and data["tools"] == huge
    assert kept.kept.lists == 0
    kept = _kept()  # (after a list too long to keep, the door looks less often)
    # lists of ~600 KB: three fit in 2 MiB, the fourth drops the least recently used
    lists = [_tools(count=1000, extra=f"-{j}") for j in range(4)]
    bodies = [orjson.dumps({"messages": _history(2), "tools": t}) for t in lists]
    assert 3 * len(orjson.dumps(lists[0])) <= MAX_KEPT_BYTES < 4 * len(orjson.dumps(lists[0])) <= MAX_LIST_BYTES * 4
    for b in bodies:
        _keep(kept, b)
    assert sum(len(raw) for raw, _ in kept.kept.kept_values()) <= MAX_KEPT_BYTES
    assert [kept(b)[1] for b in bodies[::-1]] == [True, True, True, False]


_BASE = orjson.dumps({"model": "m", "messages": _history(4), "tools": _tools(), "stream": False})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_BASE)), st.integers(0, 40), st.binary(max_size=12)), max_size=3))
def test_any_edit_of_a_kept_body_parses_as_orjson_parses_it(edits: list[tuple[int, int, bytes]]) -> None:
    kept = _kept()
    _keep(kept, _BASE)
    assert kept(_BASE)[1]
    _parses_as_orjson_does(kept, _BASE, edits)


def _parses_as_orjson_does(kept: _Loads, base: bytes, edits: list[tuple[int, int, bytes]]) -> None:
    """``base`` with ``edits`` made (at, bytes cut, bytes put in) parses as orjson parses it."""
    body = base
    for at, cut, insert in edits:
        at = min(at, len(body))
        body = body[:at] + insert + body[at + cut:]
    try:
        expected: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        expected = "refused"
    try:
        got: Any = kept(body, check=lambda raw, data: None)[0]
    except orjson.JSONDecodeError:
        got = "refused"
    assert got == expected


# ------------------------------------------------------------------ history fronts
def _turn(n: int, **more: Any) -> bytes:
    """Turn ``n`` of a growing conversation: two more messages each turn."""
    return orjson.dumps({"model": "m", "messages": _long_history(10 + 2 * n), **more, "max_tokens": 9})


def test_a_growing_conversation_is_parsed_once_its_front_grows_with_it() -> None:
    kept = _kept()
    found = []
    for n in range(8):
        body = _turn(n)
        data, _, front = kept(body)
        assert data == orjson.loads(body)
        found.append(front)
    # turn 0 notes the conversation, turn 1 keeps its front, every later turn finds it
    assert found == [False, False, True, True, True, True, True, True]
    assert kept.kept.fronts == 1
    (raw, value), = kept.kept.kept_values()
    assert len(value) == 10 + 2 * 7 - 2 and orjson.dumps(value)[:-1] == raw  # grown to turn 7's front


def test_what_is_found_is_handed_on_read_only_with_its_json() -> None:
    from modelwire.kept_json import KeptDict, KeptList

    kept = _kept()
    body = _turn(3, tools=_tools())
    for _ in range(3):
        kept(body)
    data, tools, front = kept(body)
    assert tools and front
    assert type(data["tools"]) is KeptList and data["tools"].json == orjson.dumps(_tools())
    messages = data["messages"]
    assert all(type(m) is KeptDict and m.json == orjson.dumps(m) for m in messages[:-2])
    assert [type(m) for m in messages[-2:]] == [dict, dict]  # the last two are the body's own
    with pytest.raises(TypeError):
        messages[0]["content"] = "changed"
    messages[-1]["content"] = "changed"  # the request's own: it may


def test_the_same_body_again_is_found_and_its_last_two_messages_may_change() -> None:
    kept = _kept()
    body = _turn(3, tools=_tools())
    for _ in range(3):
        kept(body)
    data, tools, front = kept(body)
    assert tools and front and data == orjson.loads(body)
    # Claude Code moves its cache marks on the last messages: they are never kept
    messages = _long_history(16)
    messages[-1] = {**messages[-1], "cache_control": {"type": "ephemeral"}}
    messages[-2] = {"role": "user", "content": [{"type": "text", "text": "moved"}]}
    changed = orjson.dumps({"model": "m", "messages": messages, "tools": _tools(), "max_tokens": 9})
    data, tools, front = kept(changed)
    assert tools and front and data == orjson.loads(changed)


def test_conversations_that_begin_alike_are_each_found_by_the_longest_front() -> None:
    kept = _kept()
    short, long = _turn(2), _turn(40)  # the same beginning: subagents, a fork, a retried turn
    for _ in range(3):
        kept(short)
        kept(long)
    found = []
    for _ in range(10):
        for body in (short, long):
            data, _, front = kept(body)
            assert data == orjson.loads(body)
            found.append(front)
    assert all(found) and kept.kept.fronts == 2
    # each found whole: the long one by its own front, not grown again from the short one's
    assert sorted(len(value) for _, value in kept.kept.kept_values()) == [12, 88]


def test_a_rewritten_history_is_parsed_whole() -> None:
    kept = _kept()
    for n in range(3):
        kept(_turn(n))
    assert kept(_turn(3))[2]  # the conversation's front is kept and found
    compacted = _long_history(14)
    compacted[3] = {"role": "assistant", "content": "a summary of what came before"}
    body = orjson.dumps({"model": "m", "messages": compacted, "max_tokens": 9})
    data, _, front = kept(body)
    assert not front and data == orjson.loads(body)


def test_kept_front_bytes_elsewhere_are_not_taken_for_the_history() -> None:
    kept = _kept()
    for _ in range(3):
        kept(_turn(2))
    assert kept(_turn(2))[2]  # kept, and found in its own place
    messages = _long_history(14)
    # the same bytes at the same place, but the field is another one, then no history at all
    for body in (orjson.dumps({"model": "m", "messagez": messages, "messages": _history(2)}),
                 orjson.dumps({"model": "m", "messagez": messages}),
                 orjson.dumps({"model": "m", "messages": [messages]})):
        data, _, front = kept(body)
        assert not front and data == orjson.loads(body)


def test_a_body_with_a_kept_front_and_a_too_deep_message_is_refused() -> None:
    kept = _kept()
    for _ in range(3):
        kept(_turn(2))
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    messages = _long_history(14)
    messages[-1] = {"role": "user", "content": [{"type": "text", "text": "hi", "extra": deep}]}
    with pytest.raises(GatewayError, match="max_json_depth"):
        kept(orjson.dumps({"model": "m", "messages": messages, "max_tokens": 9}))
    assert kept.kept.history_hits == 1  # found, then refused: the same answer as a whole parse


def test_the_responses_door_keeps_its_input_front() -> None:
    kept = _kept()
    for n in range(4):
        body = orjson.dumps({"model": "m", "input": _long_history(10 + 2 * n), "store": False})
        data, _, front = kept(body, history="input")
        assert data == orjson.loads(body)
    assert front and kept.kept.history_hits == 2
    body = orjson.dumps({"model": "m", "input": "just text", "messages": _long_history(12)})
    data, _, front = kept(body, history="input")  # its input is no list: the front is not the history
    assert not front and data == orjson.loads(body)


def test_a_history_written_with_spaces_is_not_kept() -> None:
    kept = _kept()
    for n in range(5):
        body = json.dumps({"model": "m", "messages": _long_history(10 + 2 * n)}).encode()
        data, _, front = kept(body)
        assert not front and data == orjson.loads(body)
    assert kept.kept.fronts == 0


def test_conversations_sent_once_are_kept_less_and_less_often(monkeypatch) -> None:
    from modelwire.gateway import kept_body

    dumped: list[int] = []
    dumps = orjson.dumps

    class Counting:  # orjson as kept_body sees it, the dumps of each front counted once
        JSONEncodeError = orjson.JSONEncodeError

        @staticmethod
        def dumps(value: Any) -> bytes:
            if isinstance(value, dict) and value.get("role") == "system":
                dumped.append(1)
            return dumps(value)

        loads = staticmethod(orjson.loads)

    monkeypatch.setattr(kept_body, "orjson", Counting)
    kept = _kept()
    # one system prompt (longer than the bytes a conversation is known by), then each
    # request a new conversation, sent once: an eval run, a batch
    system = {"role": "system", "content": "You are a careful coding agent. " * 100}
    for j in range(100):
        body = orjson.dumps({"model": "m", "messages": [system, *_long_history(12, extra=f"-{j}")]})
        data, _, front = kept(body)
        assert not front and data == orjson.loads(body)
    # learned on bodies 2, 3, 5, 8, 13, 22, 39, 56, 73 and 90: from the second on, each
    # because the one before was never found again, with 1, 2, 4, 8 then 16 passed over
    assert len(dumped) == 10
    # a conversation that comes back is still found, within two of the longest pauses
    found = [kept(_turn(4))[2] for _ in range(40)]
    assert found[-1] and found.index(True) <= 2 * 16 + 3


def test_what_is_kept_of_histories_is_bounded_in_bytes() -> None:
    kept = _kept()
    huge = orjson.dumps({"model": "m", "messages": _long_history(1100)})
    assert len(huge) > MAX_FRONT_BYTES
    for _ in range(3):
        assert not kept(huge)[2]
    assert kept.kept.fronts == 0
    # fronts of ~1.1 MB: three fit in 4 MiB, the fourth drops the least recently used
    bodies = [orjson.dumps({"model": "m", "messages": _long_history(550, extra=f"-{j}")}) for j in range(4)]
    for b in bodies:
        assert [kept(b)[2] for _ in range(3)] == [False, False, True]  # noted, learned, found
    assert kept.kept.fronts == 3
    assert sum(len(raw) for raw, _ in kept.kept.kept_values()) <= MAX_HISTORY_BYTES
    assert [kept(b)[2] for b in bodies[::-1]] == [True, True, True, False]


def test_a_history_or_tools_list_past_the_bounds_is_not_dumped_whole_to_learn_it(monkeypatch) -> None:
    from modelwire.gateway import kept_body

    written: list[int] = []

    class Counting:  # orjson as kept_body sees it, the bytes it writes counted
        JSONEncodeError = orjson.JSONEncodeError

        @staticmethod
        def dumps(value: Any) -> bytes:
            raw = orjson.dumps(value)
            written.append(len(raw))
            return raw

        loads = staticmethod(orjson.loads)

    monkeypatch.setattr(kept_body, "orjson", Counting)
    kept = _kept()
    # 8 MB of history and 4 MB of tools, sent again and again
    body = orjson.dumps({"model": "m", "messages": _long_history(4000), "tools": _tools(count=2400)})
    assert len(body) > 3 * (MAX_FRONT_BYTES + MAX_LIST_BYTES)
    for _ in range(8):
        data, tools, front = kept(body)
        assert not tools and not front and data == orjson.loads(body)
    # the first body notes the conversation; each later look stops a little past each
    # bound, and then the door looks less often: bodies 2, 4 and 7 for the history, 1, 3
    # and 6 for the tools (a dump of the body's history and tools would be 9.7 MB each time)
    looks = 3
    assert sum(written) <= looks * (MAX_FRONT_BYTES + MAX_LIST_BYTES + 2 * 4096) + 1024


def test_what_a_caller_does_with_the_body_a_front_was_learned_from_does_not_reach_it() -> None:
    kept = _kept()
    kept(_turn(2))
    data = kept(_turn(2))[0]  # learned from this one
    data["messages"][0]["content"] = "changed"
    data, _, front = kept(_turn(2))
    assert front and data == orjson.loads(_turn(2))


_TURN = orjson.dumps({"model": "m", "messages": _long_history(12), "tools": _tools(), "stream": False})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_TURN)), st.integers(0, 40), st.binary(max_size=12)), max_size=3))
def test_any_edit_of_a_body_with_a_kept_front_parses_as_orjson_parses_it(edits: list[tuple[int, int, bytes]]) -> None:
    kept = _kept()
    for _ in range(3):
        kept(_TURN)
    assert kept(_TURN)[1:] == (True, True)
    _parses_as_orjson_does(kept, _TURN, edits)


# ------------------------------------------------------------------ through the gateway
@pytest.fixture(scope="module")
def gateway_and_seen() -> Iterator[tuple[RunningGateway, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    def answer(path: str, asked: dict[str, Any]) -> tuple[str, bytes]:
        seen.append(asked)
        if path.endswith("/messages"):
            return "application/json", json.dumps({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1}}).encode()
        return "application/json", json.dumps({
            "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-x",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}).encode()

    mp = pytest.MonkeyPatch()
    mp.setenv("KEPT_UP_KEY", "sk-kept-0123456789")
    try:
        with canned_upstream(answer) as base_url, pytest.MonkeyPatch.context():
            import tempfile
            from pathlib import Path

            path = Path(tempfile.mkdtemp(prefix="gw-kept-")) / "modelwire.yaml"
            path.write_text(
                "models:\n"
                f"  chat: {{provider: custom, api_mode: chat_completions, model: gpt-x, base_url: '{base_url}', "
                "api_key_env: KEPT_UP_KEY}\n"
                f"  claude: {{provider: custom, api_mode: anthropic_messages, model: claude-x, "
                f"base_url: '{base_url[:-3]}', api_key_env: KEPT_UP_KEY}}\n"
                "gateway: {keys_env: KEPT_KEYS}\n")
            with RunningGateway(load_config(str(path)), environ={"KEPT_KEYS": KEY}) as gw:
                yield gw, seen
    finally:
        mp.undo()


def _anthropic_tools() -> list[dict[str, Any]]:
    return [{"name": t["function"]["name"], "description": t["function"]["description"],
             "input_schema": t["function"]["parameters"]} for t in _tools()]


def _responses_tools() -> list[dict[str, Any]]:
    return [{"type": "function", **t["function"]} for t in _tools()]


def test_every_door_sends_the_same_tools_upstream_each_turn_and_keeps_its_list_intact(gateway_and_seen) -> None:
    gw, seen = gateway_and_seen
    kept: KeptBody = gw.gateway.kept_body
    # compact JSON, as Claude Code (JSON.stringify) and Codex (serde) write it
    def post(path: str, body: dict[str, Any]) -> None:
        reply = httpx.post(gw.base_url + path, content=orjson.dumps(body), timeout=30,
                           headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
        assert reply.status_code == 200, reply.text

    calls = {
        "chat": lambda turn, model: post("/v1/chat/completions", {
            "model": model, "messages": _history(turn * 2 + 1), "tools": _tools()}),
        "messages": lambda turn, model: post("/v1/messages", {
            "model": model, "max_tokens": 50, "messages": _history(turn * 2 + 1), "tools": _anthropic_tools()}),
        "responses": lambda turn, model: post("/v1/responses", {
            "model": model, "input": _history(turn * 2 + 1), "tools": _responses_tools()}),
    }
    for door, call in calls.items():
        for model in ("chat", "claude"):
            seen.clear()
            hits = kept.tools_hits
            for turn in range(4):
                call(turn, model)
            # each door's list is kept on its third turn and used from its fourth, whichever
            # model it goes to
            assert kept.tools_hits - hits == (1 if model == "chat" else 4), (door, model)
            upstream_tools = [s["tools"] for s in seen]
            assert len(upstream_tools) == 4 and all(t == upstream_tools[0] for t in upstream_tools)
            assert [t.get("name") or t["function"]["name"] for t in upstream_tools[0]] == \
                [f"tool_{i}" for i in range(40)]
    for raw, value in kept.kept_values():
        assert orjson.dumps(value) in (raw, raw + b"]")  # no request changed a kept list or front


_LONG = "the function doubles its argument and returns it; the tests pass. " * 24


def _door_history(door: str, rounds: int, who: str) -> list[dict[str, Any]]:
    """A conversation of tool rounds as each door's clients write it."""
    first = f"{who}: fix the failing test. " + _LONG
    if door == "chat":
        out: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."},
                                     {"role": "user", "content": first}]
        for i in range(rounds):
            out += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{i}", "type": "function",
                     "function": {"name": "tool_0", "arguments": orjson.dumps({"path": f"f{i}.py"}).decode()}}]},
                    {"role": "tool", "tool_call_id": f"call_{i}", "content": _LONG},
                    {"role": "assistant", "content": f"step {i} done. " + _LONG},
                    {"role": "user", "content": f"go on {i}"}]
        return out
    if door == "messages":
        out = [{"role": "user", "content": [{"type": "text", "text": first}]}]
        for i in range(rounds):
            out += [{"role": "assistant", "content": [{"type": "text", "text": f"step {i}"},
                     {"type": "tool_use", "id": f"toolu_{i}", "name": "tool_0", "input": {"path": f"f{i}.py"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                                  "content": _LONG}]}]
        return out
    out = [{"role": "user", "content": first}]
    for i in range(rounds):
        out += [{"type": "function_call", "call_id": f"call_{i}", "name": "tool_0",
                 "arguments": orjson.dumps({"path": f"f{i}.py"}).decode()},
                {"type": "function_call_output", "call_id": f"call_{i}", "output": _LONG},
                {"role": "assistant", "content": [{"type": "output_text", "text": f"step {i}. " + _LONG}]},
                {"role": "user", "content": f"go on {i}"}]
    return out


def test_every_door_sends_upstream_what_a_body_parsed_whole_sends_as_a_history_grows(gateway_and_seen) -> None:
    gw, seen = gateway_and_seen
    kept: KeptBody = gw.gateway.kept_body

    def post(path: str, body: dict[str, Any], compact: bool) -> None:
        # Python's spaced JSON is never looked at: the same request, parsed whole
        content = orjson.dumps(body) if compact else json.dumps(body).encode()
        reply = httpx.post(gw.base_url + path, content=content, timeout=30,
                           headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
        assert reply.status_code == 200, reply.text

    def body(door: str, turn: int, model: str) -> tuple[str, dict[str, Any]]:
        history = _door_history(door, 10 + turn, f"{door}-{model}")
        if door == "chat":
            return "/v1/chat/completions", {"model": model, "messages": history, "tools": _tools(2)}
        if door == "messages":
            return "/v1/messages", {"model": model, "max_tokens": 50, "messages": history,
                                    "tools": _anthropic_tools()[:2]}
        return "/v1/responses", {"model": model, "input": history, "tools": _responses_tools()[:2]}

    for door in ("chat", "messages", "responses"):
        for model in ("chat", "claude"):
            hits = kept.history_hits
            for turn in range(6):
                path, payload = body(door, turn, model)
                seen.clear()
                post(path, payload, compact=False)
                post(path, payload, compact=True)
                assert len(seen) == 2 and seen[0] == seen[1], (door, model, turn)
            # noted on the first turn, kept on the second, found on every later one
            assert kept.history_hits - hits == 4, (door, model)
    for raw, value in kept.kept_values():
        assert orjson.dumps(value) in (raw, raw + b"]")  # no request changed what is kept


def test_a_kept_front_holds_about_its_bytes_in_memory() -> None:
    # each message's JSON is kept at its own size: a dump's bytes hold at least 4 KiB
    # whatever their length, 200 x 4 KiB for a front of 200 short messages
    import tracemalloc

    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: " + "x = x * 2. " * 24}
               for i in range(202)]
    body = orjson.dumps({"model": "m", "messages": history})
    kept = _kept()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert [kept(body)[2] for _ in range(3)] == [False, False, True]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    front = sum(len(raw) for raw, _ in kept.kept.kept_values())
    assert front > 50_000
    # the bytes twice (the front, each message's), the parsed messages, little else
    assert held < 6 * front, (held, front)  # 4.3x here; 16x with 4 KiB per message
