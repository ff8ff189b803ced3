"""An agent's tools list parsed once (gateway/kept_tools.py): a body whose tools are a
kept list's bytes is parsed exactly as ``orjson.loads`` parses it; anything else is
parsed whole. Through the gateway, every door's upstream gets the same tools each turn,
and the kept list is never changed by a request."""

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
from modelwire.gateway.depth import tools_shallow
from modelwire.gateway.kept_tools import MAX_KEPT_BYTES, MAX_LIST_BYTES, MIN_BYTES, KeptTools
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


def _kept() -> KeptTools:
    return KeptTools(lambda tools: tools_shallow(tools, 64))


def _keep(kept: KeptTools, body: bytes) -> None:
    """An agent's first three turns with ``body``'s tools: seen, passed over, kept."""
    for _ in range(3):
        data, hit = kept.loads(body)
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
            data, hit = kept.loads(raw)
            assert data == orjson.loads(raw)
            assert hit == (first or turn > 1)  # the second layout is learned on its first body
    assert kept.hits == 9


def test_a_changed_tool_is_parsed_again_and_then_kept() -> None:
    kept = _kept()
    first = orjson.dumps({"messages": _history(2), "tools": _tools()})
    _keep(kept, first)
    assert kept.loads(first)[1]
    changed = orjson.dumps({"messages": _history(2), "tools": _tools(extra="x")})
    _keep(kept, changed)
    data, hit = kept.loads(changed)
    assert hit and data["tools"] == _tools(extra="x")
    # one byte of the same length changed inside a description
    same_length = changed.replace(b"Reads a file", b"Reads a fild", 1)
    data, hit = kept.loads(same_length)
    assert not hit and data == orjson.loads(same_length)


def test_tools_that_change_every_turn_are_never_kept_and_looked_at_less_and_less(monkeypatch) -> None:
    from modelwire.gateway import kept_tools

    looked: list[int] = []
    find = kept_tools._compact_value_at
    monkeypatch.setattr(kept_tools, "_compact_value_at", lambda body: looked.append(1) or find(body))
    kept = _kept()
    for turn in range(100):
        body = orjson.dumps({"messages": _history(2), "tools": _tools(count=30, extra=f"-{turn}")})
        data, hit = kept.loads(body)
        assert not hit and data == orjson.loads(body)
    assert kept.lists == 0 and kept.hits == 0
    # bodies 1, 3, 6, 11, 20, 37, 54, 71 and 88: 1, 2, 4, 8 then 16 passed over each time
    assert len(looked) == 9
    # then a list that comes again is still kept, within two of the longest pauses
    stable = orjson.dumps({"messages": _history(2), "tools": _tools()})
    hits = [kept.loads(stable)[1] for _ in range(40)]
    assert hits[-1] and hits.index(True) <= 2 * 16 + 3


def test_the_kept_bytes_elsewhere_in_the_body_are_not_taken_for_its_tools() -> None:
    kept = _kept()
    tools = _tools()
    _keep(kept, orjson.dumps({"messages": _history(2), "tools": tools}))
    # the same bytes at the same distance from the end, but as metadata: the body's tools are others
    other = [{"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}]
    body = orjson.dumps({"messages": _history(2), "tools": other, "metadata": tools})
    data, hit = kept.loads(body)
    assert not hit and data == orjson.loads(body)
    body = orjson.dumps({"metadata": tools, "messages": _history(2)})  # no tools at all
    data, hit = kept.loads(body)
    assert not hit and data == orjson.loads(body) and "tools" not in data


def test_a_body_that_is_not_json_is_refused_as_before() -> None:
    kept = _kept()
    good = orjson.dumps({"messages": _history(2), "tools": _tools()})
    _keep(kept, good)
    for bad in (good[:-1], good + b"x", good.replace(b'"messages"', b'"messages', 1), good[:-1] + b",}"):
        with pytest.raises(orjson.JSONDecodeError):
            kept.loads(bad)


def test_tools_a_client_writes_with_spaces_are_not_kept_and_not_looked_for_again() -> None:
    kept = _kept()
    body = json.dumps({"messages": _history(2), "tools": _tools()}).encode()  # Python's ", " and ": "
    for _ in range(3):
        data, hit = kept.loads(body)
        assert not hit and data == orjson.loads(body)
    assert kept.hits == 0


def test_tools_whose_bytes_differ_from_a_compact_dump_are_not_kept_and_dumped_less_and_less(monkeypatch) -> None:
    from modelwire.gateway import kept_tools

    dumped: list[int] = []

    class Counting:  # orjson as kept_tools sees it, its dumps counted
        JSONEncodeError = orjson.JSONEncodeError

        @staticmethod
        def dumps(value: Any) -> bytes:
            dumped.append(1)
            return orjson.dumps(value)

        loads = staticmethod(orjson.loads)

    monkeypatch.setattr(kept_tools, "orjson", Counting)
    kept = _kept()
    # compact, but with non-ASCII escaped (json.dumps' ensure_ascii): orjson writes it raw
    tools = _tools(extra="-café")
    body = json.dumps({"messages": _history(2), "tools": tools}, separators=(",", ":")).encode()
    assert b"\\u00e9" in body
    for _ in range(40):
        data, hit = kept.loads(body)
        assert not hit and data == orjson.loads(body)
    assert len(dumped) == 1 + 6 and kept.lists == 0  # its placeholder, then bodies 1, 3, 6, 11, 20, 37


def test_a_tools_list_too_deep_for_the_schema_limit_is_never_kept() -> None:
    kept = KeptTools(lambda tools: tools_shallow(tools, 3))
    body = orjson.dumps({"messages": _history(2), "tools": _tools()})
    for _ in range(3):
        assert kept.loads(body)[1] is False


def test_what_a_caller_does_with_a_first_bodys_tools_does_not_reach_the_kept_list() -> None:
    kept = _kept()
    body = orjson.dumps({"messages": _history(2), "tools": _tools()})
    kept.loads(body)
    kept.loads(body)
    data, _ = kept.loads(body)  # the third: kept
    data["tools"][0]["function"]["name"] = "changed"
    data, hit = kept.loads(body)
    assert hit and data["tools"] == _tools()


def test_what_is_kept_is_bounded_in_bytes_the_most_recent_first() -> None:
    kept = _kept()
    huge = _tools(count=2000)
    assert len(orjson.dumps(huge)) > MAX_LIST_BYTES
    body = orjson.dumps({"messages": _history(2), "tools": huge})
    for _ in range(2):
        data, hit = kept.loads(body)
        assert not hit and data["tools"] == huge
    # lists of ~600 KB: three fit in 2 MiB, the fourth drops the least recently used
    lists = [_tools(count=1000, extra=f"-{j}") for j in range(4)]
    bodies = [orjson.dumps({"messages": _history(2), "tools": t}) for t in lists]
    assert 3 * len(orjson.dumps(lists[0])) <= MAX_KEPT_BYTES < 4 * len(orjson.dumps(lists[0])) <= MAX_LIST_BYTES * 4
    for b in bodies:
        _keep(kept, b)
    assert sum(len(k.raw) for k in kept._kept) <= MAX_KEPT_BYTES
    assert [kept.loads(b)[1] for b in bodies[::-1]] == [True, True, True, False]


_BASE = orjson.dumps({"model": "m", "messages": _history(4), "tools": _tools(), "stream": False})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_BASE)), st.integers(0, 40), st.binary(max_size=12)), max_size=3))
def test_any_edit_of_a_kept_body_parses_as_orjson_parses_it(edits: list[tuple[int, int, bytes]]) -> None:
    kept = _kept()
    _keep(kept, _BASE)
    assert kept.loads(_BASE)[1]
    body = _BASE
    for at, cut, insert in edits:
        at = min(at, len(body))
        body = body[:at] + insert + body[at + cut:]
    try:
        expected: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        expected = "refused"
    try:
        got: Any = kept.loads(body)[0]
    except orjson.JSONDecodeError:
        got = "refused"
    assert got == expected


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
    kept: KeptTools = gw.gateway.kept_tools
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
            hits = kept.hits
            for turn in range(4):
                call(turn, model)
            # each door's list is kept on its third turn and used from its fourth, whichever
            # model it goes to
            assert kept.hits - hits == (1 if model == "chat" else 4), (door, model)
            upstream_tools = [s["tools"] for s in seen]
            assert len(upstream_tools) == 4 and all(t == upstream_tools[0] for t in upstream_tools)
            assert [t.get("name") or t["function"]["name"] for t in upstream_tools[0]] == \
                [f"tool_{i}" for i in range(40)]
    for entry in kept._kept:
        assert orjson.dumps(entry.value) == entry.raw  # no request changed a kept list
