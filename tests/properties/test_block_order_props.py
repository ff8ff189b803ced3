"""Block order is kept: any interleaving of thinking, redacted_thinking, text and tool_use in
an Anthropic assistant turn comes out in the same order, signatures on the same blocks, on
the Anthropic paths (client history -> upstream request; upstream answer -> the door's
answer, streamed and not)."""

from __future__ import annotations

import json

from hypothesis import assume, given
from hypothesis import strategies as st

from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.events import ReasoningBlock, ReasoningDelta, TextDelta, ToolCallEnd, ToolCallStart
from modelwire.messages import prepare_conversation
from modelwire.providers.resolve import resolve

_KINDS = st.lists(st.sampled_from(["thinking", "redacted_thinking", "text", "tool_use"]), min_size=1, max_size=8)


def _blocks(kinds: list[str]) -> list[dict]:
    out = []
    for n, kind in enumerate(kinds):
        if kind == "thinking":
            out.append({"type": "thinking", "thinking": f"step {n}", "signature": f"sig-{n}"})
        elif kind == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": f"data-{n}"})
        elif kind == "text":
            out.append({"type": "text", "text": f"text {n}"})
        else:
            out.append({"type": "tool_use", "id": f"toolu_{n}", "name": "calc", "input": {"n": n}})
    return out


def _target(model: str = "anthropic/claude-opus-4-8") -> Target:
    r = resolve(model)
    return Target(r.profile, r.model_id, "sk-ant-fake", r.profile.base_url, ())


@given(_KINDS)
def test_history_turn_reaches_an_anthropic_upstream_in_its_order(kinds):
    assume(set(kinds) & {"text", "tool_use"})  # a thinking-only turn is not sent (messages.py)
    blocks = _blocks(kinds)
    uses = [b for b in blocks if b["type"] == "tool_use"]
    results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "ok"} for b in uses]
    body = {"model": "claude-opus-4-8", "max_tokens": 1000, "tools": [{"name": "calc", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": blocks},
                         {"role": "user", "content": results or "next"}]}
    req = am.decode_request(body)
    req["messages"] = prepare_conversation(req["messages"])
    sent = json.loads(am.encode_request(req, _target()).body)["messages"][1]["content"]
    assert _adjacent_text_joined(sent) == _adjacent_text_joined(blocks)


def _adjacent_text_joined(blocks: list[dict]) -> list[dict]:
    """Neighbouring text blocks are one text (the same prompt to the model); nothing moves."""
    out: list[dict] = []
    for b in blocks:
        if b["type"] == "text" and out and out[-1]["type"] == "text":
            out[-1] = {"type": "text", "text": out[-1]["text"] + b["text"]}
        else:
            out.append(b)
    return out


@given(_KINDS)
def test_upstream_answer_comes_out_of_the_door_in_its_order(kinds):
    blocks = _blocks(kinds)
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
              "content": blocks, "stop_reason": "end_turn", "stop_sequence": None,
              "usage": {"input_tokens": 1, "output_tokens": 1}}
    out = am.encode_response(am.decode_response(answer))["content"]
    assert out == _joined_text(blocks)


def _joined_text(blocks: list[dict]) -> list[dict]:
    """What an answer's blocks become: every block in its place, except that the text
    runs are one content string (the Chat Completions shape), at the first run's place."""
    texts = [b for b in blocks if b["type"] == "text"]
    expected = [b for b in blocks if b["type"] != "text"]
    if texts:
        first = next(i for i, b in enumerate(blocks) if b["type"] == "text")
        expected.insert(first, {"type": "text", "text": "".join(t["text"] for t in texts)})
    return expected


@given(_KINDS)
def test_streamed_answer_folds_to_the_same_order(kinds):
    blocks = _blocks(kinds)
    events = []
    calls = 0
    for b in blocks:
        if b["type"] in ("thinking", "redacted_thinking"):
            if b["type"] == "thinking":
                events += [ReasoningDelta(text=b["thinking"]), ReasoningDelta(signature=b["signature"])]
            events.append(ReasoningBlock("anthropic", b))
        elif b["type"] == "text":
            events.append(TextDelta(b["text"]))
        else:
            events += [ToolCallStart(calls, b["id"], b["name"]), ToolCallEnd(calls)]
            calls += 1
    from modelwire.accumulate import Accumulator

    acc = Accumulator(ordered=True)
    for ev in events:
        acc.feed(ev)
    message = acc.message()
    expected = _joined_text(blocks)
    from modelwire.completion import Completion
    from modelwire.types import empty_usage

    out = am.encode_response(Completion(message=message, finish_reason="stop", usage=empty_usage(), model="m"))["content"]
    for b in out:
        if b["type"] == "tool_use":
            b["input"] = {"n": int(b["id"].split("_")[1])}  # the stream carried no arguments
    assert out == expected
