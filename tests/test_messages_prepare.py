"""prepare_conversation: the invariants every codec relies on, repaired or rejected."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelwire.accumulate import deterministic_tool_call_id
from modelwire.errors import MessageError
from modelwire.messages import STUB_RESULT, prepare_conversation


def call(id: str | None, name: str = "get_weather", arguments: str | None = '{"city":"Paris"}') -> dict:
    c: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if id is not None:
        c["id"] = id
    return c


def asst(*calls: dict, content: Any = None, **extra: Any) -> dict:
    m: dict[str, Any] = {"role": "assistant", "content": content, **extra}
    if calls:
        m["tool_calls"] = list(calls)
    return m


def result(id: str, content: Any = "sunny") -> dict:
    return {"role": "tool", "tool_call_id": id, "content": content}


USER = {"role": "user", "content": "weather?"}


def roles(messages: list[dict]) -> list[str]:
    return [m["role"] if m["role"] != "tool" else f"tool:{m['tool_call_id']}" for m in messages]


# --------------------------------------------------------------- happy path
def test_valid_conversation_comes_back_equal_in_a_new_list() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "developer", "content": "dev note"},
        USER,
        asst(call("a"), call("b")),
        result("a"),
        result("b"),
        {"role": "assistant", "content": "Sunny in Paris."},
    ]
    before = copy.deepcopy(messages)
    out = prepare_conversation(messages)
    assert out == before
    assert out is not messages
    assert all(o is not m for o, m in zip(out, messages))
    assert messages == before  # the caller's list and dicts are untouched


def test_developer_role_is_kept_as_is() -> None:
    out = prepare_conversation([{"role": "developer", "content": "x"}, USER])
    assert out[0] == {"role": "developer", "content": "x"}


def test_results_may_come_in_any_order() -> None:
    out = prepare_conversation([USER, asst(call("a"), call("b")), result("b"), result("a")])
    assert roles(out) == ["user", "assistant", "tool:b", "tool:a"]


# ----------------------------------------------------------------- reasoning
def test_reasoning_is_normalized_on_assistant_messages() -> None:
    out = prepare_conversation([USER, {"role": "assistant", "content": "<think>p</think>Hi",
                                       "reasoning": "p"}])
    assert out[1] == {"role": "assistant", "content": "Hi", "reasoning_content": "p"}


def test_reasoning_only_assistant_message_is_not_sent() -> None:
    messages = [USER, {"role": "assistant", "content": "", "reasoning_content": "thinking..."},
                {"role": "user", "content": "again"}]
    out = prepare_conversation(messages)
    assert roles(out) == ["user", "user"]
    assert len(messages) == 3  # still in the caller's history


def test_inline_think_only_message_is_not_sent() -> None:
    out = prepare_conversation([USER, {"role": "assistant", "content": "<think>only this</think>"}])
    assert roles(out) == ["user"]


def test_reasoning_only_message_between_call_and_result_does_not_break_the_pair() -> None:
    out = prepare_conversation(
        [USER, asst(call("a")), {"role": "assistant", "content": None, "reasoning": "r"}, result("a")]
    )
    assert roles(out) == ["user", "assistant", "tool:a"]


def test_assistant_with_tool_calls_and_only_reasoning_is_kept() -> None:
    # Groq recorded this: reasoning inline, a tool call, no text.
    out = prepare_conversation([USER, asst(call("a"), content="<think>\nplan\n</think>"), result("a")])
    assert out[1]["content"] is None
    assert out[1]["reasoning_content"] == "plan"
    assert out[1]["tool_calls"][0]["id"] == "a"


# --------------------------------------------------------------- tool pairs
def test_result_without_a_call_is_dropped() -> None:
    out = prepare_conversation([USER, result("ghost"), {"role": "assistant", "content": "hi"}])
    assert roles(out) == ["user", "assistant"]


def test_result_after_an_intervening_user_message_is_an_orphan() -> None:
    # Tool messages must follow their assistant turn directly; the user turn
    # closed it, so the call gets a stub and the late result is dropped.
    out = prepare_conversation([USER, asst(call("a")), {"role": "user", "content": "hurry"}, result("a")])
    assert roles(out) == ["user", "assistant", "tool:a", "user"]
    assert out[2]["content"] == STUB_RESULT


def test_result_for_an_earlier_turns_call_is_dropped() -> None:
    out = prepare_conversation(
        [USER, asst(call("a")), result("a"), asst(call("b")), result("a"), result("b")]
    )
    assert roles(out) == ["user", "assistant", "tool:a", "assistant", "tool:b"]


def test_missing_results_get_stubs_after_the_real_ones_in_call_order() -> None:
    out = prepare_conversation(
        [USER, asst(call("a"), call("b"), call("c")), result("b"), {"role": "user", "content": "next"}]
    )
    assert roles(out) == ["user", "assistant", "tool:b", "tool:a", "tool:c", "user"]
    assert out[3] == {"role": "tool", "tool_call_id": "a", "content": STUB_RESULT}


def test_unanswered_calls_at_the_end_get_stubs() -> None:
    # An interrupted agent left calls open (hermes: "[Result unavailable]").
    out = prepare_conversation([USER, asst(call("a"))])
    assert out[-1] == {"role": "tool", "tool_call_id": "a", "content": STUB_RESULT}


def test_duplicate_result_keeps_the_first() -> None:
    out = prepare_conversation([USER, asst(call("a")), result("a", "first"), result("a", "second")])
    assert [m["content"] for m in out if m["role"] == "tool"] == ["first"]


def test_call_without_id_gets_the_deterministic_id() -> None:
    out = prepare_conversation([USER, asst(call(None), call(None, name="other", arguments="{}"))])
    ids = [c["id"] for c in out[1]["tool_calls"]]
    assert ids == [
        deterministic_tool_call_id("get_weather", '{"city":"Paris"}', 0),
        deterministic_tool_call_id("other", "{}", 1),
    ]
    assert prepare_conversation([USER, asst(call(None))])[1]["tool_calls"][0]["id"] == ids[0]
    # the calls, unanswered, are stubbed under those ids
    assert [m["tool_call_id"] for m in out[2:]] == ids


def test_repeated_call_id_in_one_turn_gets_a_fresh_id() -> None:
    out = prepare_conversation([USER, asst(call("a"), call("a", name="g")), result("a")])
    second = out[1]["tool_calls"][1]["id"]
    assert second == deterministic_tool_call_id("g", '{"city":"Paris"}', 1)
    assert roles(out) == ["user", "assistant", "tool:a", f"tool:{second}"]


def test_malformed_argument_json_is_kept_raw() -> None:
    out = prepare_conversation([USER, asst(call("a", arguments='{"city": "Par')), result("a")])
    assert out[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Par'


def test_null_arguments_become_an_empty_object() -> None:
    out = prepare_conversation([USER, asst(call("a", arguments=None)), result("a")])
    assert out[1]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_empty_tool_name_is_renamed_so_the_pair_stays_intact() -> None:
    out = prepare_conversation([USER, asst(call("a", name="")), result("a")])
    assert out[1]["tool_calls"][0]["function"]["name"] == "invalid_tool_call"
    assert roles(out) == ["user", "assistant", "tool:a"]


def test_empty_tool_calls_list_is_removed() -> None:
    out = prepare_conversation([USER, {"role": "assistant", "content": "hi", "tool_calls": []}])
    assert out[1] == {"role": "assistant", "content": "hi"}


def test_extra_keys_on_calls_and_messages_pass_through() -> None:
    c = {**call("a"), "extra_content": {"google": {"thought_signature": "sig"}}}
    out = prepare_conversation([USER, asst(c, content="x", name="bot"), result("a")])
    assert out[1]["name"] == "bot"
    assert out[1]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig"}}


# ------------------------------------------------------------- repair=False
@pytest.mark.parametrize(
    ("messages", "index", "words"),
    [
        pytest.param([USER, result("ghost")], 1, "'ghost'", id="orphan-result"),
        pytest.param([USER, asst(call("a")), USER], 1, "no tool result", id="missing-result"),
        pytest.param([USER, asst(call("a"))], 1, "no tool result", id="missing-at-end"),
        pytest.param([USER, asst(call("a")), result("a"), result("a")], 3, "second time",
                     id="duplicate-result"),
        pytest.param([USER, asst(call("a"), call("a")), result("a")], 1, "repeats", id="repeated-id"),
        pytest.param([USER, asst(call("a", arguments=None)), result("a")], 1,
                     "messages[1].tool_calls[0].function.arguments is missing", id="null-arguments"),
        pytest.param([USER, asst(call("a", name="")), result("a")], 1, "name is empty",
                     id="empty-name"),
    ],
)
def test_without_repair_each_repair_is_an_error_naming_the_index(
    messages: list[dict], index: int, words: str
) -> None:
    with pytest.raises(MessageError) as info:
        prepare_conversation(messages, repair=False)
    assert info.value.index == index
    assert f"messages[{index}]" in str(info.value)
    assert words in str(info.value)


def test_without_repair_a_valid_conversation_passes() -> None:
    messages = [USER, asst(call("a")), result("a"), {"role": "assistant", "content": "done"}]
    assert prepare_conversation(messages, repair=False) == messages


def test_without_repair_reasoning_only_messages_are_still_left_out() -> None:
    out = prepare_conversation([USER, {"role": "assistant", "content": "", "reasoning": "r"}],
                               repair=False)
    assert roles(out) == ["user"]


# --------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("message", "text"),
    [
        pytest.param("hello", "messages[1] must be a dict, got str", id="not-a-dict"),
        pytest.param({"role": "robot", "content": "x"}, "messages[1].role must be one of", id="role"),
        pytest.param({"role": "function", "content": "x", "name": "f"}, "(use 'tool')",
                     id="legacy-function-role"),
        pytest.param({"content": "x"}, "messages[1].role", id="no-role"),
        pytest.param({"role": "user", "content": None},
                     "messages[1].content must be a string or a list of content parts", id="user-none"),
        pytest.param({"role": "user", "content": 5}, "messages[1].content must be", id="user-int"),
        pytest.param({"role": "user", "content": [{"text": "x"}]},
                     "messages[1].content[0] must be a content part with a string 'type'",
                     id="part-no-type"),
        pytest.param({"role": "user", "content": [{"type": "text", "text": 3}]},
                     "messages[1].content[0].text must be a string", id="part-text-type"),
        pytest.param({"role": "tool", "content": "x"},
                     "messages[1].tool_call_id must be a non-empty string", id="tool-no-id"),
        pytest.param({"role": "assistant", "content": 1}, "messages[1].content must be",
                     id="assistant-int"),
        pytest.param(asst(call("a", arguments={"city": "Paris"})),  # type: ignore[arg-type]
                     "messages[1].tool_calls[0].function.arguments must be a string",
                     id="arguments-dict"),
        pytest.param({"role": "assistant", "tool_calls": {"id": "a"}},
                     "messages[1].tool_calls must be a list", id="tool-calls-dict"),
        pytest.param({"role": "assistant", "tool_calls": [{"id": "a"}]},
                     "messages[1].tool_calls[0].function must be a dict", id="no-function"),
        pytest.param(asst({"id": "a", "function": {"arguments": "{}"}}),
                     "messages[1].tool_calls[0].function.name must be a string", id="no-name"),
        pytest.param(asst({"id": 7, "function": {"name": "f", "arguments": "{}"}}),
                     "messages[1].tool_calls[0].id must be a string", id="id-int"),
    ],
)
@pytest.mark.parametrize("repair", [True, False], ids=["repair", "strict"])
def test_broken_messages_raise_message_error_naming_index_and_field(
    message: Any, text: str, repair: bool
) -> None:
    with pytest.raises(MessageError) as info:
        prepare_conversation([USER, message], repair=repair)
    assert info.value.index == 1
    assert text in str(info.value)


def test_messages_must_be_a_list() -> None:
    with pytest.raises(MessageError, match="messages must be a list, got dict"):
        prepare_conversation({"role": "user", "content": "x"})  # type: ignore[arg-type]


def test_empty_conversation_is_empty() -> None:
    assert prepare_conversation([]) == []


# ------------------------------------------- bugs seen in the system we re-imagine
def test_composite_ids_are_matched_exactly_not_split() -> None:
    # hermes #63000 / #93251: composite "call_x|fc_y" ids made a sanitizer drop
    # the real result and insert a stub; the model then made up the output.
    cid = "call_abc|fc_def"
    out = prepare_conversation([USER, asst(call(cid)), result(cid, "real output")])
    assert [m["content"] for m in out if m["role"] == "tool"] == ["real output"]


def test_interrupted_parallel_calls_keep_answered_results() -> None:
    # An agent interrupted after the first of three results: the answered one
    # stays real, the rest are stubbed, nothing is silently lost.
    out = prepare_conversation([USER, asst(call("a"), call("b"), call("c")), result("a", "done")])
    tool_contents = {m["tool_call_id"]: m["content"] for m in out if m["role"] == "tool"}
    assert tool_contents == {"a": "done", "b": STUB_RESULT, "c": STUB_RESULT}


# --------------------------------------------------------------- exact wording, sharing
def test_error_texts_name_every_role_and_every_missing_call() -> None:
    with pytest.raises(MessageError) as role:
        prepare_conversation([USER, {"role": "robot", "content": "x"}])
    assert str(role.value).startswith(
        "messages[1].role must be one of system, developer, user, assistant, tool, got 'robot'")
    assert str(role.value).endswith("'robot'")  # the 'use tool' hint is for 'function' only
    with pytest.raises(MessageError) as missing:
        prepare_conversation([USER, asst(call("a"), call("b"))], repair=False)
    assert str(missing.value) == "messages[1] has tool calls with no tool result: 'a', 'b'"
    with pytest.raises(MessageError) as orphan:
        prepare_conversation([USER, result("ghost")], repair=False)
    assert str(orphan.value) == ("messages[1] answers tool_call_id 'ghost', which is not a tool "
                                 "call of the assistant message right before it")


def test_well_formed_calls_are_shared_and_ill_formed_ones_are_copied_with_a_type() -> None:
    good = call("a")
    untyped = {"id": "b", "function": {"name": "get_weather", "arguments": "{}"}}
    out = prepare_conversation([USER, asst(good, untyped), result("a"), result("b")])
    calls = out[1]["tool_calls"]
    assert calls[0] is good
    assert calls[1] == {"id": "b", "type": "function", "function": untyped["function"]}
    assert calls[1] is not untyped and "type" not in untyped


@pytest.mark.parametrize("bad", [
    {"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    {"type": "function", "function": {"name": "f", "arguments": "{}"}},
    {"id": "a", "type": "function", "function": {"name": "", "arguments": "{}"}},
    {"id": "a", "type": "function", "function": {"name": "f", "arguments": None}},
], ids=["empty-id", "no-id", "empty-name", "null-arguments"])
def test_a_call_needing_repair_is_never_shared(bad: dict) -> None:
    original = copy.deepcopy(bad)
    out = prepare_conversation([USER, asst(bad)])
    assert out[1]["tool_calls"][0] is not bad and bad == original


def test_reasoning_details_alone_make_a_message_reasoning_only() -> None:
    block = {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "t", "signature": "s"}}
    out = prepare_conversation([USER, {"role": "assistant", "content": "", "reasoning_details": [block]}])
    assert roles(out) == ["user"]


def test_a_non_text_part_needs_no_text() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    msg = {"role": "user", "content": [{"type": "text", "text": "look"}, image]}
    assert prepare_conversation([msg]) == [msg]


def test_missing_results_at_the_very_end_are_stubbed_in_order() -> None:
    out = prepare_conversation([USER, asst(call("a"), call("b"))])
    assert [(m["role"], m.get("tool_call_id"), m.get("content")) for m in out[2:]] == [
        ("tool", "a", STUB_RESULT), ("tool", "b", STUB_RESULT)]


def test_a_function_role_is_told_to_use_tool() -> None:
    with pytest.raises(MessageError) as info:
        prepare_conversation([USER, {"role": "function", "content": "x"}])
    assert str(info.value) == ("messages[1].role must be one of system, developer, user, assistant, "
                               "tool, got 'function' (use 'tool')")


def test_a_tool_call_that_is_not_an_object_is_a_message_error() -> None:
    with pytest.raises(MessageError) as info:
        prepare_conversation([USER, asst("get_weather")])
    assert str(info.value) == "messages[1].tool_calls[0].function must be a dict"


def test_a_repaired_call_keeps_its_own_type() -> None:
    odd = {"type": "custom_kind", "function": {"name": "f", "arguments": "{}"}}  # no id
    out = prepare_conversation([USER, asst(odd)])
    assert out[1]["tool_calls"][0]["type"] == "custom_kind"


def test_calls_left_unanswered_before_the_next_assistant_turn_get_stubs() -> None:
    out = prepare_conversation([USER, asst(call("a")), asst(content="let me try again")])
    assert roles(out) == ["user", "assistant", "tool:a", "assistant"]
    assert out[2] == {"role": "tool", "tool_call_id": "a", "content": STUB_RESULT}
    with pytest.raises(MessageError, match=r"^messages\[1\] has tool calls with no tool result: 'a'$"):
        prepare_conversation([USER, asst(call("a")), asst(content="again")], repair=False)
