"""Anthropic stream decoding and encoding: finish reasons, usage, bad input."""

from __future__ import annotations

import json

import pytest

from modelwire.accumulate import Accumulator
from modelwire.codecs import anthropic_messages as am
from modelwire.codecs.sse import SSEDecoder
from modelwire.errors import OverloadedError, ProtocolError
from modelwire.events import (
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.types import empty_usage


def sse(*events: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


START = {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "content": [],
    "stop_reason": None, "stop_sequence": None,
    "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 1}}}


def block_start(i, block):
    return {"type": "content_block_start", "index": i, "content_block": block}


def delta(i, d):
    return {"type": "content_block_delta", "index": i, "delta": d}


def stop(i):
    return {"type": "content_block_stop", "index": i}


def end(reason="end_turn", usage=None):
    return [{"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
             "usage": usage or {"output_tokens": 7}}, {"type": "message_stop"}]


def decode(data: bytes):
    dec = am.StreamDecoder()
    return dec, dec.feed(data) + dec.close()


def fold(events):
    acc = Accumulator()
    for e in events:
        acc.feed(e)
    return acc.result()


def text_stream(*pieces, reason="end_turn"):
    return sse(START, block_start(0, {"type": "text", "text": ""}), {"type": "ping"},
               *[delta(0, {"type": "text_delta", "text": p}) for p in pieces], stop(0), *end(reason))


# ------------------------------------------------------------ finish reasons
@pytest.mark.parametrize("native,reason", [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("tool_use", "tool_calls"), ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"), ("refusal", "content_filter"), ("pause_turn", "stop"),
])
def test_stop_reasons_map_and_the_native_one_stays_visible(native, reason):
    _, events = decode(text_stream("hi", reason=native))
    assert events[-1] == Finish(reason, native=native)
    c = am.decode_response({"content": [], "stop_reason": native, "usage": {"input_tokens": 1, "output_tokens": 0}})
    assert (c.finish_reason, c.native_finish_reason) == (reason, native)


def test_the_stop_sequence_that_ended_the_text_is_carried_both_ways():
    # Anthropic names the sequence; it reaches the Completion and an Anthropic client again
    data = text_stream("17 * 23 = ").replace(b'"stop_reason": "end_turn", "stop_sequence": null',
                                              b'"stop_reason": "stop_sequence", "stop_sequence": "391."')
    _, events = decode(data)
    assert events[-1] == Finish("stop", native="stop_sequence", stop_sequence="391.")
    done = fold(events)
    assert (done.finish_reason, done.stop_sequence) == ("stop", "391.")
    enc = am.StreamEncoder(model="m")
    out = b"".join(enc.feed(e) for e in events) + enc.close()
    assert b'"delta":{"stop_reason":"stop_sequence","stop_sequence":"391."}' in out
    whole = am.decode_response({"content": [{"type": "text", "text": "17 * 23 = "}], "stop_reason": "stop_sequence",
                                "stop_sequence": "391.", "usage": {"input_tokens": 1, "output_tokens": 5}})
    assert whole.stop_sequence == "391."
    body = am.encode_response(whole)
    assert (body["stop_reason"], body["stop_sequence"]) == ("stop_sequence", "391.")
    # any other ending names none, whatever a Completion carries
    import dataclasses

    assert am.encode_response(dataclasses.replace(whole, finish_reason="length", native_finish_reason="max_tokens")
                              )["stop_sequence"] is None


def test_pause_turn_round_trips_through_the_encoder():
    _, events = decode(text_stream("searching", reason="pause_turn"))
    enc = am.StreamEncoder(model="m")
    out = b"".join(enc.feed(e) for e in events) + enc.close()
    assert b'"stop_reason":"pause_turn"' in out


# --------------------------------------------------------------------- usage
def test_usage_counts_cache_in_prompt_tokens_and_latest_message_delta_wins():
    data = sse(START, block_start(0, {"type": "text", "text": ""}), delta(0, {"type": "text_delta", "text": "x"}),
               stop(0), {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 3}},
               *end(usage={"output_tokens": 9, "input_tokens": 10}))
    _, events = decode(data)
    usages = [e.usage for e in events if isinstance(e, UsageEvent)]
    assert usages[0]["prompt_tokens"] == 115  # 10 uncached + 100 read + 5 written
    assert usages[0]["cache_read_tokens"] == 100 and usages[0]["cache_write_tokens"] == 5
    assert usages[-1]["completion_tokens"] == 9  # cumulative: latest, not 3 + 9
    assert usages[-1]["total_tokens"] == 124
    assert fold(events).usage == usages[-1]


# ------------------------------------------------------ thinking, tools, other
def test_interleaved_thinking_between_tool_calls():
    data = sse(
        START,
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "First the weather."}),
        delta(0, {"type": "signature_delta", "signature": "SIG1"}),
        stop(0),
        block_start(1, {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {}}),
        delta(1, {"type": "input_json_delta", "partial_json": ""}),
        delta(1, {"type": "input_json_delta", "partial_json": '{"city": "Par'}),
        delta(1, {"type": "input_json_delta", "partial_json": 'is"}'}),
        stop(1),
        block_start(2, {"type": "redacted_thinking", "data": "REDACTED"}),
        stop(2),
        block_start(3, {"type": "tool_use", "id": "toolu_b", "name": "time", "input": {}}),
        stop(3),  # no deltas at all: the arguments are the start's input
        *end("tool_use"),
    )
    _, events = decode(data)
    assert events[1:5] == [
        ReasoningDelta(text="First the weather."),
        ReasoningDelta(signature="SIG1"),
        ReasoningBlock("anthropic", {"type": "thinking", "thinking": "First the weather.", "signature": "SIG1"}),
        ToolCallStart(0, "toolu_a", "weather"),
    ]
    assert ToolCallStart(1, "toolu_b", "time") in events and ToolCallDelta(1, "{}") in events
    c = fold(events)
    assert [t["function"]["arguments"] for t in c.tool_calls] == ['{"city": "Paris"}', "{}"]
    assert [d["block"]["type"] for d in c.message["reasoning_details"]] == ["thinking", "redacted_thinking"]
    assert c.finish_reason == "tool_calls"


def test_server_tool_blocks_pass_through_verbatim():
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": [{"type": "web_search_result", "url": "https://a", "encrypted_content": "Eo4"}]}
    data = sse(START, block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
               delta(0, {"type": "input_json_delta", "partial_json": '{"query": "x"}'}), stop(0),
               block_start(1, result), stop(1), *end())
    _, events = decode(data)
    assert [e for e in events if isinstance(e, Passthrough)] == [
        Passthrough("anthropic", {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}),
        Passthrough("anthropic", result),
    ]
    assert not any(isinstance(e, ToolCallStart) for e in events)


# ----------------------------------------------------------------- bad input
def test_unknown_event_types_and_deltas_are_ignored_and_counted():
    data = sse(START, {"type": "future_event", "x": 1}, block_start(0, {"type": "text", "text": ""}),
               delta(0, {"type": "hologram_delta", "x": 1}), delta(0, {"type": "text_delta", "text": "ok"}),
               stop(0), *end())
    dec, events = decode(data)
    assert dec.unknown_events == 2
    assert fold(events).text == "ok"


def test_a_truncated_stream_raises_protocol_error_with_the_partial_answer():
    data = sse(START, block_start(0, {"type": "text", "text": ""}), delta(0, {"type": "text_delta", "text": "Hel"}),
               block_start(1, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
               delta(1, {"type": "input_json_delta", "partial_json": '{"a":'}))
    dec = am.StreamDecoder()
    events = dec.feed(data)
    assert TextDelta("Hel") in events
    with pytest.raises(ProtocolError, match="truncated") as info:
        dec.close()
    partial = info.value.partial
    assert partial.text == "Hel" and partial.interrupted
    assert partial.tool_calls == []  # a call that never ended is never handed out
    assert partial.model == "claude-sonnet-4-6"


def test_a_stream_with_no_events_is_an_error_not_an_empty_answer():
    with pytest.raises(ProtocolError, match="no events"):
        decode(b"")
    with pytest.raises(ProtocolError, match="no events"):
        decode(b": keep-alive\n\n")


def test_an_error_event_mid_stream_becomes_stream_error_with_partial():
    data = sse(START, block_start(0, {"type": "text", "text": ""}), delta(0, {"type": "text_delta", "text": "par"}),
               {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    _dec, events = decode(data)
    err = events[-1]
    assert isinstance(err, StreamError) and isinstance(err.error, OverloadedError)
    assert str(err.error) == "Overloaded" and err.error.status == 529
    assert err.error.partial.text == "par"


def test_malformed_json_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="not JSON"):
        decode(b"event: message_start\ndata: {not json\n\n")
    with pytest.raises(ProtocolError, match="never started"):
        decode(sse(START, delta(3, {"type": "text_delta", "text": "x"})))


# ------------------------------------------------------------------ encoder
def _names(data: bytes) -> list[str]:
    d = SSEDecoder()
    return [json.loads(e.data)["type"] for e in d.feed(data) + d.close()]


def test_encoder_produces_the_api_event_sequence_from_another_providers_events():
    """Events as a Chat Completions upstream yields them: reasoning text with no
    signature, text, two tool calls, finish, then usage after the finish."""
    usage = {**empty_usage(), "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150, "cache_read_tokens": 100}
    events = [ReasoningDelta(text="hmm"), TextDelta("Let me check."), ToolCallStart(0, "call_1", "weather"),
              ToolCallDelta(0, '{"city":'), ToolCallDelta(0, '"Oslo"}'), ToolCallEnd(0),
              ToolCallStart(1, "call_2", "time"), ToolCallDelta(1, "{}"), Finish("tool_calls"), UsageEvent(usage)]
    enc = am.StreamEncoder(model="gpt-4.1", id="msg_x")
    out = b"".join(enc.feed(e) for e in events) + enc.close()
    assert _names(out) == [
        "message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop",
    ]
    assert out.startswith(b"event: message_start\ndata: {")
    assert out.endswith(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    # the official SDK folds it into the message a client expects
    from anthropic.lib.streaming._messages import accumulate_event

    snap, bufs = None, {}
    d = SSEDecoder()
    for e in d.feed(out) + d.close():
        data = json.loads(e.data)
        if data["type"] != "ping":
            snap = accumulate_event(event=data, current_snapshot=snap, json_bufs=bufs)
    msg = snap.to_dict()
    assert [b["type"] for b in msg["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert msg["content"][2]["input"] == {"city": "Oslo"}
    assert msg["stop_reason"] == "tool_use"
    assert msg["usage"]["input_tokens"] == 20 and msg["usage"]["cache_read_input_tokens"] == 100
    assert msg["usage"]["output_tokens"] == 30


def test_encoder_reports_an_upstream_error_as_an_error_event():
    enc = am.StreamEncoder(model="m")
    out = enc.feed(TextDelta("a")) + enc.feed(StreamError(OverloadedError("Overloaded", code="overloaded_error")))
    out += enc.close()
    assert _names(out)[-1] == "error"
    assert b'"type":"overloaded_error"' in out
    dec = am.StreamDecoder()
    events = dec.feed(out) + dec.close()
    assert isinstance(events[-1], StreamError) and isinstance(events[-1].error, OverloadedError)


def test_encoder_with_no_events_still_frames_a_whole_message():
    enc = am.StreamEncoder(model="m")
    out = enc.close()
    assert _names(out) == ["message_start", "message_delta", "message_stop"]


def test_interleaved_parallel_calls_from_another_provider_lose_no_fragment():
    """OpenAI-style: deltas of call 1 arrive between deltas of call 0."""
    events = [ToolCallStart(0, "call_a", "f"), ToolCallDelta(0, '{"x":'), ToolCallStart(1, "call_b", "g"),
              ToolCallDelta(1, '{"y": 2}'), ToolCallDelta(0, " 1}"), ToolCallStart(2, "call_c", "h"),
              ToolCallDelta(2, "{}"), Finish("tool_calls")]
    enc = am.StreamEncoder(model="m")
    out = b"".join(enc.feed(e) for e in events) + enc.close()
    dec = am.StreamDecoder()
    c = fold(dec.feed(out) + dec.close())
    assert [(t["id"], t["function"]["arguments"]) for t in c.tool_calls] == [
        ("call_a", '{"x": 1}'), ("call_b", '{"y": 2}'), ("call_c", "{}")]
    assert c.finish_reason == "tool_calls"
