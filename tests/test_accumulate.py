from __future__ import annotations

from modelwire.accumulate import Accumulator, deterministic_tool_call_id
from modelwire.events import (
    Finish,
    ReasoningBlock,
    ReasoningDelta,
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
