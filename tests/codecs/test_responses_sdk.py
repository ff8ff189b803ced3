"""The official ``openai`` SDK accepts what the Responses encoders write.

Bytes go through ``httpx.MockTransport`` into ``openai.OpenAI`` (no network):
``client.responses.stream(...)`` must accept the StreamEncoder's events (its
accumulator checks ids, indexes and ordering) and end with the same text and
tool calls; ``client.responses.create(...)`` must parse encode_response's body.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from conftest import load_corpus

from modelwire.codecs import responses
from modelwire.completion import Completion
from modelwire.errors import RateLimitError
from modelwire.events import (
    Finish,
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

STREAMS = [(n, ex) for n, ex in load_corpus() if ex["api"] == "responses" and "sse" in ex["response"]]


def _client(body: bytes, content_type: str = "text/event-stream") -> openai.OpenAI:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=body)

    return openai.OpenAI(
        api_key="sk-test-not-a-real-key",
        base_url="http://127.0.0.1:9/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        max_retries=0,
    )


def _encode(events, **kw) -> bytes:
    encoder = responses.StreamEncoder(model="gpt-test", **kw)
    return b"".join(encoder.feed(e) for e in events) + encoder.close()


@pytest.mark.parametrize("name,ex", STREAMS, ids=[n for n, _ in STREAMS])
def test_sdk_stream_parser_accepts_reencoded_corpus_streams(name, ex):
    decoder = responses.StreamDecoder()
    events = decoder.feed(ex["response"]["sse"].encode()) + decoder.close()
    ours = Completion_of(events)
    client = _client(_encode(events, id=decoder.id))
    with client.responses.stream(model="gpt-test", input="hi") as stream:
        seen = [e.type for e in stream]
        if ours.finish_reason == "length":
            assert seen[-1] == "response.incomplete"  # the SDK has no final response then
            return
        final = stream.get_final_response()
    assert seen[0] == "response.created" and seen[-1] == "response.completed"
    assert final.id == decoder.id
    assert final.output_text == ours.text
    calls = [(o.call_id, o.name, o.arguments) for o in final.output if o.type == "function_call"]
    assert calls == [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in ours.tool_calls]
    encrypted = [o.encrypted_content for o in final.output if o.type == "reasoning" and o.encrypted_content]
    assert encrypted == [d["block"]["encrypted_content"] for d in ours.message.get("reasoning_details", [])
                         if d["block"].get("encrypted_content")]


def Completion_of(events) -> Completion:
    from modelwire.accumulate import Accumulator

    acc = Accumulator()
    for e in events:
        acc.feed(e)
    return acc.result()


def test_sdk_sees_reasoning_summary_text_and_parallel_calls_from_foreign_events():
    """Events as another protocol's decoder would emit them (no Responses items)."""
    events = [
        ReasoningDelta("thinking about it"),
        ReasoningBlock("anthropic", {"type": "thinking", "thinking": "x", "signature": "sig"}),
        TextDelta("Calling two tools."),
        ToolCallStart(0, "toolu_1", "add"),
        ToolCallStart(1, "toolu_2", "mul"),
        ToolCallDelta(0, '{"a":'),
        ToolCallDelta(1, '{"b":'),
        ToolCallDelta(0, "1}"),
        ToolCallDelta(1, "2}"),
        ToolCallEnd(1),
        ToolCallEnd(0),
        UsageEvent({**empty_usage(), "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
        Finish("tool_calls"),
    ]
    with _client(_encode(events, id="resp_abc")).responses.stream(model="gpt-test", input="hi") as stream:
        summary = "".join(e.delta for e in stream if e.type == "response.reasoning_summary_text.delta")
        final = stream.get_final_response()
    assert summary == "thinking about it"
    assert final.output_text == "Calling two tools."
    assert [(o.call_id, o.arguments) for o in final.output if o.type == "function_call"] == [
        ("toolu_1", '{"a":1}'), ("toolu_2", '{"b":2}')]
    assert final.usage.input_tokens == 10 and final.usage.total_tokens == 15
    reasoning = [o for o in final.output if o.type == "reasoning"]
    # the Anthropic signature cannot travel here: summary only, no encrypted_content
    assert [s.text for s in reasoning[0].summary] == ["thinking about it"]
    assert reasoning[0].encrypted_content is None


def test_sdk_sees_a_mid_stream_failure_as_response_failed():
    # as the API ends a response that fails while streaming: response.failed, its error
    # inside the response (the SDK yields it, as it does for the API's own)
    events = [TextDelta("partial"), StreamError(RateLimitError("slow down", status=429))]
    client = _client(_encode(events, id="resp_f"))
    with client.responses.stream(model="gpt-test", input="hi") as stream:
        seen = list(stream)
    assert [e.type for e in seen if e.type.startswith("response.") and "text" not in e.type][-1] == "response.failed"
    failed = seen[-1]
    assert failed.response.id == "resp_f" and failed.response.status == "failed"
    assert (failed.response.error.code, failed.response.error.message) == ("rate_limit_exceeded", "slow down")
    assert "response.output_item.done" not in [e.type for e in seen]  # the message never finished


def test_sdk_parses_encode_response_body():
    completion = responses.decode_response(
        next(ex for n, ex in load_corpus() if n.startswith("azure_openai__responses__thinking-azure"))["response"]["body"]
    )
    body = responses.encode_response(completion)
    final = _client(json.dumps(body).encode(), "application/json").responses.create(model="gpt-test", input="hi")
    assert final.id == completion.id
    calls = [(o.call_id, o.name, o.arguments) for o in final.output if o.type == "function_call"]
    assert calls == [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in completion.tool_calls]
    reasoning = [o for o in final.output if o.type == "reasoning"]
    assert reasoning[0].encrypted_content == completion.message["reasoning_details"][0]["block"]["encrypted_content"]
    assert final.usage.output_tokens_details.reasoning_tokens == completion.usage["reasoning_tokens"]
