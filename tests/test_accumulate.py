from __future__ import annotations

from modelwire.accumulate import Accumulator, deterministic_tool_call_id
from modelwire.errors import ServerError
from modelwire.events import (
    Annotation,
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.types import empty_usage


def test_text_reasoning_and_parallel_tool_calls_fold_into_one_message():
    acc = Accumulator(model="m", provider="p")
    usage = {**empty_usage(), "prompt_tokens": 3}
    for ev in [
        ReasoningDelta("think "), ReasoningDelta("more"), ReasoningDelta(signature="sig"),
        ReasoningBlock("anthropic", {"type": "thinking", "thinking": "think more", "signature": "sig"}),
        TextDelta("Hel"), TextDelta("lo"),
        ToolCallStart(0, "a", "f"), ToolCallStart(1, "b", "g"),
        ToolCallDelta(1, '{"y"'), ToolCallDelta(0, '{"x": 1}'), ToolCallDelta(1, ': 2}'),
        ToolCallEnd(0), ToolCallEnd(1), UsageEvent(usage), Finish("tool_calls", "tool_use"),
    ]:
        acc.feed(ev)
    c = acc.result()
    assert c.message["content"] == "Hello"
    assert c.message["reasoning_content"] == "think more"
    assert c.message["reasoning_details"][0]["block"]["signature"] == "sig"
    assert [t["function"]["arguments"] for t in c.message["tool_calls"]] == ['{"x": 1}', '{"y": 2}']
    assert [t["id"] for t in c.message["tool_calls"]] == ["a", "b"]
    assert c.finish_reason == "tool_calls" and c.native_finish_reason == "tool_use"
    assert c.usage["prompt_tokens"] == 3


def test_unfinished_tool_call_is_not_handed_out_when_interrupted():
    acc = Accumulator()
    acc.feed(ToolCallStart(0, "a", "f"))
    acc.feed(ToolCallDelta(0, '{"x": 1}'))  # parses, but never ended
    c = acc.result(interrupted=True)
    assert "tool_calls" not in c.message and c.interrupted


def test_missing_id_gets_a_deterministic_one():
    acc = Accumulator()
    acc.feed(ToolCallStart(0, "", "f"))
    acc.feed(ToolCallDelta(0, "{}"))
    acc.feed(Finish("tool_calls"))
    call_id = acc.result().message["tool_calls"][0]["id"]
    assert call_id == deterministic_tool_call_id("f", "{}", 0)


# ------------------------------------------------------------------ every field, exactly


def _fold(*events, **kw):
    acc = Accumulator(**kw)
    for ev in events:
        acc.feed(ev)
    return acc


def test_a_plain_answer_is_exactly_its_text_and_finish():
    done = _fold(TextDelta("Hi "), TextDelta("there"), Finish("stop", "end_turn", None),
                 model="m", provider="p", id="msg_1").result()
    assert done.message == {"role": "assistant", "content": "Hi there"}
    assert (done.finish_reason, done.native_finish_reason, done.stop_sequence) == ("stop", "end_turn", None)
    assert (done.model, done.provider, done.id, done.interrupted) == ("m", "p", "msg_1", False)
    assert done.usage == empty_usage()


def test_the_stop_sequence_of_the_finish_is_kept():
    done = _fold(TextDelta("a"), Finish("stop", "stop_sequence", "###")).result()
    assert done.stop_sequence == "###"


def test_refusal_annotations_and_passthrough_are_kept_in_order():
    note = {"type": "url_citation", "url_citation": {"url": "u", "title": "t",
                                                     "start_index": 0, "end_index": 1}}
    block = {"type": "server_tool_use", "id": "s1"}
    msg = _fold(RefusalDelta("I can"), RefusalDelta("not"), Annotation(note), TextDelta("x"),
                Passthrough("anthropic", block), Finish("stop")).message()
    assert msg == {"role": "assistant", "content": "x", "refusal": "I cannot",
                   "annotations": [note], "passthrough": [{"issuer": "anthropic", "block": block}]}


def test_empty_reasoning_deltas_add_nothing():
    msg = _fold(ReasoningDelta(""), ReasoningDelta(signature="s"), TextDelta("x")).message()
    assert "reasoning_content" not in msg


def test_tool_calls_alone_leave_content_none_and_nothing_at_all_leaves_empty_text():
    calls = _fold(ToolCallStart(0, "a", "f"), ToolCallDelta(0, "{}"), ToolCallEnd(0),
                  Finish("tool_calls")).message()
    assert calls["content"] is None and len(calls["tool_calls"]) == 1
    assert _fold(Finish("stop")).message() == {"role": "assistant", "content": ""}


def test_calls_are_ordered_by_index_whatever_order_they_arrived_in():
    msg = _fold(ToolCallStart(2, "c", "h"), ToolCallStart(0, "a", "f"), ToolCallEnd(2),
                ToolCallEnd(0), Finish("tool_calls")).message()
    assert [c["id"] for c in msg["tool_calls"]] == ["a", "c"]
    assert msg["tool_calls"][0] == {"id": "a", "type": "function",
                                    "function": {"name": "f", "arguments": ""}}


def test_a_delta_before_its_start_keeps_its_arguments_and_takes_the_starts_name():
    msg = _fold(ToolCallDelta(0, '{"x"'), ToolCallStart(0, "a", "f"), ToolCallDelta(0, ": 1}"),
                ToolCallEnd(0), Finish("tool_calls")).message()
    assert msg["tool_calls"][0] == {"id": "a", "type": "function",
                                    "function": {"name": "f", "arguments": '{"x": 1}'}}


def test_a_second_start_for_a_slot_does_not_replace_its_id_or_name():
    msg = _fold(ToolCallStart(0, "a", "f"), ToolCallStart(0, "b", "g"), ToolCallEnd(0),
                Finish("tool_calls")).message()
    assert (msg["tool_calls"][0]["id"], msg["tool_calls"][0]["function"]["name"]) == ("a", "f")


def test_an_end_for_an_unknown_slot_is_ignored():
    assert _fold(ToolCallEnd(3), TextDelta("x"), Finish("stop")).message() == {
        "role": "assistant", "content": "x"}


def test_the_latest_usage_wins():
    first, last = {**empty_usage(), "prompt_tokens": 1}, {**empty_usage(), "prompt_tokens": 9}
    assert _fold(UsageEvent(first), UsageEvent(last), Finish("stop")).result().usage == last


def test_a_stream_error_is_kept_and_counts_as_a_start():
    error = StreamError(ServerError("down", status=500))
    acc = _fold(error)
    assert acc.error is error and acc.started and not acc.finished


def test_without_a_finish_ended_calls_are_kept_and_the_reason_follows_them():
    acc = _fold(ToolCallStart(0, "a", "f"), ToolCallEnd(0), ToolCallStart(1, "b", "g"))
    done = acc.result()
    assert [c["id"] for c in done.message["tool_calls"]] == ["a"]  # b never ended
    assert done.finish_reason == "tool_calls" and done.native_finish_reason is None
    assert _fold(TextDelta("x")).result().finish_reason == "stop"


def test_a_cut_stream_has_no_finish_reason_and_only_ended_calls():
    acc = _fold(TextDelta("so"), ToolCallStart(0, "a", "f"), ToolCallEnd(0),
                ToolCallStart(1, "b", "g"), ToolCallDelta(1, '{"x": 1}'))
    done = acc.result(interrupted=True)
    assert done.finish_reason is None and done.interrupted and done.stop_sequence is None
    assert [c["id"] for c in done.message["tool_calls"]] == ["a"]


def test_a_finish_makes_every_call_complete_even_without_an_end():
    done = _fold(ToolCallStart(0, "a", "f"), ToolCallDelta(0, "{}"), Finish("tool_calls")).result(
        interrupted=True)
    assert [c["id"] for c in done.message["tool_calls"]] == ["a"]
    assert done.finish_reason == "tool_calls"


def test_events_are_counted_and_a_fresh_accumulator_has_not_started():
    acc = Accumulator()
    assert (acc.started, acc.finished, acc.events, acc.error) == (False, False, 0, None)
    acc.feed(TextDelta("a"))
    acc.feed(Finish("stop"))
    assert (acc.events, acc.started, acc.finished) == (2, True, True)


def test_deterministic_ids_depend_on_name_arguments_and_index():
    base = deterministic_tool_call_id("f", "{}", 0)
    assert base.startswith("call_") and len(base) == 5 + 24
    assert len({base, deterministic_tool_call_id("g", "{}", 0),
                deterministic_tool_call_id("f", "{ }", 0), deterministic_tool_call_id("f", "{}", 1)}) == 4


# ------------------------------------------------------------------ block order (Anthropic)
def _block(n: int) -> ReasoningBlock:
    return ReasoningBlock("anthropic", {"type": "thinking", "thinking": f"t{n}", "signature": f"s{n}"})


def test_an_ordered_fold_records_interleaved_blocks_in_arrival_order():
    msg = _fold(_block(1), ToolCallStart(0, "a", "f"), ToolCallEnd(0), _block(2),
                ToolCallDelta(1, "{}"), ToolCallStart(1, "b", "g"), ToolCallEnd(1),
                Passthrough("anthropic", {"type": "server_tool_use"}), TextDelta(""), TextDelta("x"),
                Finish("tool_calls"), ordered=True).message()
    assert msg["block_order"] == ["reasoning", "tool_call", "reasoning", "tool_call",
                                  "passthrough", "text"]


def test_an_ordered_fold_in_the_default_grouping_records_nothing():
    msg = _fold(_block(1), TextDelta("x"), ToolCallStart(0, "a", "f"), ToolCallEnd(0),
                Finish("tool_calls"), ordered=True).message()
    assert "block_order" not in msg


def test_an_unordered_fold_never_records_an_order():
    msg = _fold(_block(1), ToolCallStart(0, "a", "f"), _block(2), ToolCallStart(1, "b", "g"),
                Finish("tool_calls")).message()
    assert "block_order" not in msg


def test_message_hands_out_every_call_unless_asked_for_complete_ones():
    acc = _fold(ToolCallStart(0, "a", "f"), ToolCallStart(1, "b", "g"), ToolCallEnd(1))
    assert [c["id"] for c in acc.message()["tool_calls"]] == ["a", "b"]
    assert [c["id"] for c in acc.message(complete_calls_only=True)["tool_calls"]] == ["b"]


def test_a_fresh_accumulator_names_nothing():
    done = Accumulator().result()
    assert (done.model, done.provider, done.id) == ("", "", "")


def test_a_reasoning_block_is_kept_with_its_issuer():
    block = {"type": "thinking", "thinking": "t", "signature": "s"}
    acc = Accumulator()
    acc.feed(ReasoningBlock("anthropic", block))
    assert acc.message()["reasoning_details"] == [{"issuer": "anthropic", "block": block}]


def test_a_call_whose_start_never_came_has_an_empty_name_and_a_derived_id():
    acc = Accumulator()
    acc.feed(ToolCallDelta(0, '{"x": 1}'))
    acc.feed(Finish("tool_calls"))
    assert acc.message()["tool_calls"] == [{
        "id": deterministic_tool_call_id("", '{"x": 1}', 0), "type": "function",
        "function": {"name": "", "arguments": '{"x": 1}'}}]


def test_a_cut_stream_with_only_an_unfinished_call_gives_empty_text():
    acc = Accumulator()
    acc.feed(ToolCallStart(0, "c1", "f"))
    acc.feed(ToolCallDelta(0, '{"x": '))
    assert acc.result(interrupted=True).message == {"role": "assistant", "content": ""}
