"""Usage crosses protocols through the internal counts, never as the upstream's object.

Anthropic's ``input_tokens`` excludes cache reads and writes; the Responses API's and Chat
Completions' include them. A body of one protocol re-encoded for another door must say the
same counts in the door's own names.
"""

from __future__ import annotations

from modelwire.codecs import anthropic_messages, chat_completions, responses
from modelwire.events import Finish, TextDelta, UsageEvent

ANTHROPIC_BODY = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "42"}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 10, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 100,
              "output_tokens": 7, "service_tier": "standard"},
}
RESPONSES_BODY = {
    "id": "resp_01", "object": "response", "status": "completed", "model": "gpt-5-mini",
    "output": [{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "42", "annotations": []}]}],
    "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100}, "output_tokens": 9,
              "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 129},
}


def test_anthropic_usage_reaches_the_responses_door_with_cache_reads_counted_in_input():
    completion = anthropic_messages.decode_response(ANTHROPIC_BODY)
    assert responses.encode_response(completion)["usage"] == {
        "input_tokens": 115, "input_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 5},
        "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 122,
    }


def test_responses_usage_reaches_the_anthropic_door_with_cache_reads_taken_out_of_input():
    completion = responses.decode_response(RESPONSES_BODY)
    assert anthropic_messages.encode_response(completion)["usage"] == {
        "input_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 100, "output_tokens": 9,
    }


def test_responses_usage_reaches_the_chat_door_in_chat_names():
    completion = responses.decode_response(RESPONSES_BODY)
    assert chat_completions.encode_response(completion)["usage"] == {
        "prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129,
        "prompt_tokens_details": {"cached_tokens": 100}, "completion_tokens_details": {"reasoning_tokens": 4},
    }


def test_streamed_usage_is_converted_the_same_way():
    completion = anthropic_messages.decode_response(ANTHROPIC_BODY)
    encoder = responses.StreamEncoder(model="m")
    sse = b"".join(encoder.feed(e) for e in (TextDelta("42"), UsageEvent(completion.usage), Finish("stop")))
    sse += encoder.close()
    decoder = responses.StreamDecoder()
    usage = [e for e in decoder.feed(sse) + decoder.close() if isinstance(e, UsageEvent)][-1].usage
    assert usage["raw"]["total_tokens"] == 122 and "cache_read_input_tokens" not in usage["raw"]
    back = anthropic_messages.StreamEncoder(model="m")
    sse = b"".join(back.feed(e) for e in (UsageEvent(usage), TextDelta("42"), Finish("stop"))) + back.close()
    assert b'"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100' in sse
    assert b"total_tokens" not in sse
