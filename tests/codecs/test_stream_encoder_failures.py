"""The three stream encoders end a failed stream with the error event alone: nothing the
upstream did not finish is closed, and the error names whose failure it was."""

from __future__ import annotations

import json

import pytest

from modelwire.codecs import anthropic_messages, chat_completions, responses
from modelwire.errors import BadRequestError, RateLimitError, ServerError, StreamInterruptedError
from modelwire.events import StreamError, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

# one finished call, then a second one cut after its first fragment
CUT = [TextDelta("Looking."), ToolCallStart(0, "call_a", "get_weather"), ToolCallDelta(0, '{"city": "Paris"}'),
       ToolCallEnd(0), ToolCallStart(1, "call_b", "get_time"), ToolCallDelta(1, '{"city":')]


def _events(codec, error) -> list[dict]:
    encoder = codec.StreamEncoder(model="m")
    raw = b"".join(encoder.feed(e) for e in [*CUT, StreamError(error)]) + encoder.close()
    assert encoder.feed(TextDelta("late")) == b""  # nothing after the error
    return [json.loads(line[6:]) for line in raw.decode().split("\n") if line.startswith("data: {")]


def test_anthropic_encoder_closes_only_the_finished_call():
    events = _events(anthropic_messages, StreamInterruptedError("connection closed mid-stream"))
    starts = {e["index"]: e["content_block"]["type"] for e in events if e["type"] == "content_block_start"}
    stopped = {e["index"] for e in events if e["type"] == "content_block_stop"}
    assert starts == {0: "text", 1: "tool_use", 2: "tool_use"}
    assert stopped == {0, 1}  # the text and the first call; never the half second call
    assert [e["type"] for e in events][-1] == "error"
    assert events[-1]["error"]["type"] == "api_error"


def test_responses_encoder_fails_the_response_with_only_finished_items():
    events = _events(responses, StreamInterruptedError("connection closed mid-stream"))
    added = [e["item"]["id"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["item"]["id"] for e in events if e["type"] == "response.output_item.done"]
    assert len(added) == 3 and done == added[:2]  # the message and the first call
    failed = events[-1]
    assert failed["type"] == "response.failed" and failed["response"]["status"] == "failed"
    assert failed["response"]["error"] == {"code": "server_error", "message": "connection closed mid-stream"}
    assert [item["id"] for item in failed["response"]["output"]] == done


def test_chat_encoder_never_finishes_a_failed_stream():
    events = _events(chat_completions, StreamInterruptedError("connection closed mid-stream"))
    assert all(c["choices"][0]["finish_reason"] is None for c in events if c.get("choices"))
    assert events[-1]["error"]["type"] == "server_error"


@pytest.mark.parametrize(("error", "chat", "anthropic", "responses_code"), [
    (StreamInterruptedError("cut"), "server_error", "api_error", "server_error"),
    (ServerError("boom", status=500), "server_error", "api_error", "server_error"),
    (RateLimitError("slow", status=429), "requests", "rate_limit_error", "rate_limit_exceeded"),
    (BadRequestError("bad", status=400), "invalid_request_error", "invalid_request_error", "invalid_prompt"),
], ids=["cut", "5xx", "rate-limit", "bad-request"])
def test_each_encoder_names_whose_failure_it_was(error, chat, anthropic, responses_code):
    assert _events(chat_completions, error)[-1]["error"]["type"] == chat
    assert _events(anthropic_messages, error)[-1]["error"]["type"] == anthropic
    assert _events(responses, error)[-1]["response"]["error"]["code"] == responses_code
