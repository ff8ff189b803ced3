"""Block order is kept: any interleaving of thinking / reasoning, text and tool calls in an
assistant turn comes out in the same order, signatures on the same blocks, for each pair of
protocols: Anthropic <-> Anthropic (history to upstream, answer to door, streamed fold),
Anthropic <-> Responses both ways (history and answers), Responses <-> Responses, and an
Anthropic answer through the Chat Completions door and back (``block_order`` on the
message). An answer's text is one text at its first place (the Chat Completions shape)."""

from __future__ import annotations

import json

from hypothesis import assume, given
from hypothesis import strategies as st

from modelwire.client.resolution import resolve
from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.events import ReasoningBlock, ReasoningDelta, TextDelta, ToolCallEnd, ToolCallStart
from modelwire.messages import prepare_conversation

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


# ------------------------------------------------------------ across protocols
# One interleaving, seen by each protocol: Anthropic blocks, Responses items, the internal
# kinds. Reasoning that crosses protocols travels sealed; the gateway opens a seal into
# the upstream's own block, which these tests stand in for by swapping the entries.
from modelwire.codecs import chat_completions as cc
from modelwire.codecs import responses as rc
from modelwire.gateway.doors import DOORS, seal_message
from modelwire.gateway.seal import Sealer

_ANTHROPIC_KIND = {"thinking": "reasoning", "redacted_thinking": "reasoning", "text": "text", "tool_use": "tool_call"}
_RESPONSES_KIND = {"reasoning": "reasoning", "message": "text", "function_call": "tool_call"}
_SEALER = Sealer("block-order-props-secret-0123456789")


def _expected(kinds: list[str], *, trailing_reasoning: bool = True) -> list[str]:
    """The internal kinds an answer keeps: one text at the first text's place."""
    out: list[str] = []
    for k in kinds:
        if k != "text" or "text" not in out:
            out.append(k)
    if not trailing_reasoning:
        while out and out[-1] == "reasoning":
            out.pop()  # Responses: a reasoning item needs an item after it
    return out


def _responses_item(n: int, kind: str) -> dict:
    if kind == "reasoning":
        return {"type": "reasoning", "id": f"rs_{n}", "encrypted_content": f"enc-{n}",
                "summary": [{"type": "summary_text", "text": f"why {n}"}]}
    if kind == "text":
        return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": f"text {n}", "annotations": []}]}
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "calc",
            "arguments": "{}", "status": "completed"}


def _swap_reasoning(message: dict, issuer: str, make) -> dict:
    """What opening the client's seals gives the upstream: its own reasoning blocks."""
    details = [{"issuer": issuer, "block": make(n)} for n, _ in enumerate(message.get("reasoning_details") or ())]
    return {**message, "reasoning_details": details} if details else message


_INTERNAL = st.lists(st.sampled_from(["reasoning", "text", "tool_call"]), min_size=1, max_size=8)


def _anthropic_kinds(blocks: list[dict]) -> list[str]:
    return [_ANTHROPIC_KIND[b["type"]] for b in blocks]


def _responses_kinds(items: list[dict]) -> list[str]:
    return [_RESPONSES_KIND[i.get("type", "message")] for i in items]


@given(_KINDS)
def test_anthropic_history_reaches_a_responses_upstream_in_its_order(kinds):
    assume("tool_use" in kinds or "text" in kinds)
    blocks = _blocks(kinds)
    results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "ok"} for b in blocks if b["type"] == "tool_use"]
    req = am.decode_request({"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": blocks},
        {"role": "user", "content": results or "next"}]})
    assistant = _swap_reasoning(req["messages"][1], "openai", lambda n: _responses_item(n, "reasoning"))
    req["messages"] = prepare_conversation([req["messages"][0], assistant, *req["messages"][2:]])
    r = resolve("openai/gpt-5-mini", api_mode="responses")
    body = json.loads(rc.encode_request(req, Target(r.profile, r.model_id, "sk-x", r.profile.base_url, ())).body)
    turn = [i for i in body["input"][1:] if i.get("type") != "function_call_output" and i.get("role") != "user"]
    assert _responses_kinds(turn) == _expected(_anthropic_kinds(blocks), trailing_reasoning=False)


@given(_INTERNAL)
def test_responses_answer_comes_out_of_the_anthropic_door_in_its_order(kinds):
    assume("text" in kinds or "tool_call" in kinds)
    items = [_responses_item(n, k) for n, k in enumerate(kinds)]
    completion = rc.decode_response({"id": "resp_1", "object": "response", "status": "completed", "model": "m",
                                     "output": items, "usage": {"input_tokens": 1, "output_tokens": 1}})
    sealed = seal_message(dict(completion.message), DOORS["anthropic_messages"], _SEALER)
    from dataclasses import replace

    out = am.encode_response(replace(completion, message=sealed))["content"]
    assert _anthropic_kinds(out) == _expected(kinds)


@given(_KINDS)
def test_anthropic_answer_comes_out_of_the_responses_door_in_its_order(kinds):
    assume("text" in kinds or "tool_use" in kinds)
    blocks = _blocks(kinds)
    completion = am.decode_response({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                     "content": blocks, "stop_reason": "end_turn", "stop_sequence": None,
                                     "usage": {"input_tokens": 1, "output_tokens": 1}})
    sealed = seal_message(dict(completion.message), DOORS["responses"], _SEALER)
    from dataclasses import replace

    out = rc.encode_response(replace(completion, message=sealed))["output"]
    assert _responses_kinds(out) == _expected(_anthropic_kinds(blocks))


@given(_INTERNAL)
def test_responses_history_reaches_an_anthropic_upstream_in_its_order(kinds):
    assume("tool_call" in kinds or "text" in kinds)
    assume(kinds.count("text") <= 1)  # one message item per turn (a second starts a turn)
    items = [_responses_item(n, k) for n, k in enumerate(kinds)]
    for item in items:
        item.pop("id"), item.pop("status", None)
    outputs = [{"type": "function_call_output", "call_id": i["call_id"], "output": "ok"} for i in items if i["type"] == "function_call"]
    req = rc.decode_request({"model": "m", "input": [{"role": "user", "content": "go"}, *items, *outputs]})
    messages = list(req["messages"])
    k = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    messages[k] = _swap_reasoning(messages[k], "anthropic", lambda n: {"type": "thinking", "thinking": f"t{n}", "signature": f"s{n}"})
    req["messages"] = prepare_conversation(messages)
    if req["messages"][-1]["role"] == "assistant":
        req["messages"].append({"role": "user", "content": "next"})
    sent = json.loads(am.encode_request(req, _target()).body)["messages"][1]["content"]
    assert _anthropic_kinds(sent) == _expected(kinds)


@given(_INTERNAL)
def test_responses_answer_to_responses_door_and_back_keeps_its_order(kinds):
    assume("text" in kinds or "tool_call" in kinds)
    items = [_responses_item(n, k) for n, k in enumerate(kinds)]
    completion = rc.decode_response({"id": "resp_1", "object": "response", "status": "completed", "model": "m",
                                     "output": items, "usage": {"input_tokens": 1, "output_tokens": 1}})
    out = rc.encode_response(completion)["output"]
    assert _responses_kinds(out) == _expected(kinds)


@given(_KINDS)
def test_anthropic_answer_through_the_chat_door_and_back_keeps_its_order(kinds):
    # the Chat Completions message carries the order in block_order, its text as one string
    assume("tool_use" in kinds)
    blocks = _blocks(kinds)
    completion = am.decode_response({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                     "content": blocks, "stop_reason": "tool_use", "stop_sequence": None,
                                     "usage": {"input_tokens": 1, "output_tokens": 1}})
    message = cc.encode_response(completion)["choices"][0]["message"]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in message["tool_calls"]]
    req = cc.decode_request({"model": "m", "messages": [{"role": "user", "content": "go"}, message, *results]},
                            issuer="anthropic")
    req["messages"] = prepare_conversation(req["messages"])
    sent = json.loads(am.encode_request(req, _target()).body)["messages"][1]["content"]
    assert _anthropic_kinds(sent) == _expected(_anthropic_kinds(blocks))
