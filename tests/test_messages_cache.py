"""apply_cache_layout: system + last 3 breakpoints, on copies."""

from __future__ import annotations

import copy

import pytest

from modelwire.messages import apply_cache_layout

EPHEMERAL = {"type": "ephemeral"}


def marked(messages: list[dict]) -> list[int]:
    """Indexes of messages that carry a breakpoint (on a part or the envelope)."""
    out = []
    for i, m in enumerate(messages):
        content = m.get("content")
        parts = content if isinstance(content, list) else []
        if "cache_control" in m or any(isinstance(p, dict) and "cache_control" in p for p in parts):
            out.append(i)
    return out


def conversation(n: int) -> list[dict]:
    msgs: list[dict] = [{"role": "system", "content": "You are terse."}]
    for k in range(n):
        msgs.append({"role": "user" if k % 2 == 0 else "assistant", "content": f"m{k}"})
    return msgs


def test_system_and_last_three_messages_get_breakpoints() -> None:
    messages = conversation(6)
    before = copy.deepcopy(messages)
    out = apply_cache_layout(messages)
    assert marked(out) == [0, 4, 5, 6]
    assert out[0]["content"] == [{"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}]
    assert out[6]["content"] == [{"type": "text", "text": "m5", "cache_control": EPHEMERAL}]
    assert out[1] is messages[1]  # unmarked messages are not copied needlessly
    assert messages == before  # the caller's messages are untouched


def test_without_a_system_message_the_last_four_get_breakpoints() -> None:
    out = apply_cache_layout(conversation(6)[1:])
    assert marked(out) == [2, 3, 4, 5]


def test_short_conversations_mark_every_message() -> None:
    assert marked(apply_cache_layout(conversation(2))) == [0, 1, 2]


@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_ttl_is_carried_on_every_marker(ttl: str) -> None:
    out = apply_cache_layout(conversation(1), ttl=ttl)  # type: ignore[arg-type]
    assert out[1]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": ttl}


def test_unknown_ttl_is_rejected() -> None:
    with pytest.raises(ValueError, match="ttl must be '5m' or '1h'"):
        apply_cache_layout(conversation(1), ttl="2h")  # type: ignore[arg-type]


def test_list_content_marks_its_last_part_and_keeps_existing_markers() -> None:
    own = {"type": "ephemeral", "ttl": "1h"}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
        {"role": "user", "content": [{"type": "text", "text": "b", "cache_control": own}]},
    ]
    out = apply_cache_layout(messages)
    assert out[0]["content"][0] == {"type": "text", "text": "a"}
    assert out[0]["content"][1]["cache_control"] == EPHEMERAL
    assert out[1]["content"][0]["cache_control"] == own
    assert "cache_control" not in messages[0]["content"][1]


def test_assistant_with_only_tool_calls_gets_an_envelope_marker() -> None:
    msg = {"role": "assistant", "content": None,
           "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    out = apply_cache_layout([msg])
    assert out[0]["cache_control"] == EPHEMERAL
    assert out[0]["content"] is None


def test_max_breakpoints_is_respected() -> None:
    assert marked(apply_cache_layout(conversation(6), max_breakpoints=2)) == [0, 6]
    assert marked(apply_cache_layout(conversation(6), max_breakpoints=1)) == [0]
    assert marked(apply_cache_layout(conversation(6), max_breakpoints=0)) == []
    assert apply_cache_layout([]) == []


def test_a_leading_developer_message_gets_the_system_breakpoint() -> None:
    msgs = [{"role": "developer", "content": "rules"}, {"role": "user", "content": "hi"}]
    out = apply_cache_layout(msgs)
    assert out[0]["content"] == [{"type": "text", "text": "rules", "cache_control": EPHEMERAL}]
    assert marked(out) == [0, 1]


def test_later_system_and_developer_messages_take_no_tail_breakpoint() -> None:
    msgs = [{"role": "user", "content": "a"}, {"role": "developer", "content": "d"},
            {"role": "system", "content": "s"}, {"role": "user", "content": "b"}]
    assert marked(apply_cache_layout(msgs, max_breakpoints=2)) == [0, 3]


def test_the_marker_goes_on_the_last_part_and_keeps_the_others() -> None:
    first = {"type": "text", "text": "one"}
    msgs = [{"role": "user", "content": [first, {"type": "text", "text": "two"}]}]
    out = apply_cache_layout(msgs)
    assert out[0]["content"] == [first, {"type": "text", "text": "two", "cache_control": EPHEMERAL}]


def test_empty_content_carries_the_marker_on_the_envelope_once() -> None:
    msgs = [{"role": "assistant", "content": [], "tool_calls": []},
            {"role": "assistant", "content": None, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    out = apply_cache_layout(msgs)
    assert out[0]["cache_control"] == EPHEMERAL and out[0]["content"] == []
    assert out[1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}  # its own kept


def test_a_message_of_many_parts_has_only_its_last_part_marked() -> None:
    parts = [{"type": "text", "text": t} for t in ("a", "b", "c")]
    out = apply_cache_layout([{"role": "user", "content": parts}])
    assert out[0]["content"] == [parts[0], parts[1], {**parts[2], "cache_control": EPHEMERAL}]
