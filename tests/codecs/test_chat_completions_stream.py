"""Chat Completions streams, response bodies and error bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from modelwire.accumulate import Accumulator
from modelwire.codecs import chat_completions as cc
from modelwire.completion import Completion
from modelwire.errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ContextLengthError,
    OverloadedError,
    ProtocolError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from modelwire.events import (
    Finish,
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


def sse(*chunks: Any, done: bool = True) -> bytes:
    out = b""
    for c in chunks:
        out += b"data: " + (c if isinstance(c, bytes) else json.dumps(c, ensure_ascii=False).encode()) + b"\n\n"
    return out + (b"data: [DONE]\n\n" if done else b"")


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "choices": choices, **top}


def tc(index: int | None = None, id: str | None = None, name: str | None = None,
       args: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"function": {}}
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"], out["type"] = id, "function"
    if name is not None:
        out["function"]["name"] = name
    if args is not None:
        out["function"]["arguments"] = args
    return out


def decode(data: bytes, **kw: Any) -> list[Any]:
    dec = cc.StreamDecoder(**kw)
    return dec.feed(data) + dec.close()


def fold(events: list[Any]) -> Completion:
    acc = Accumulator()
    for e in events:
        acc.feed(e)
    return acc.result()


# ------------------------------------------------------------ tool-call deltas
def test_id_less_deltas_route_by_index_and_parallel_calls_keep_their_order() -> None:
    events = decode(sse(
        chunk({"role": "assistant", "tool_calls": [tc(0, "call_a", "get", "")]}),
        chunk({"tool_calls": [tc(1, "call_b", "put", '{"k"')]}),
        chunk({"tool_calls": [tc(0, args='{"x": 1}')]}),
        chunk({"tool_calls": [tc(1, args=': 2}')]}),
        chunk({}, "tool_calls"),
    ))
    assert events == [
        ToolCallStart(0, "call_a", "get"), ToolCallStart(1, "call_b", "put"), ToolCallDelta(1, '{"k"'),
        ToolCallDelta(0, '{"x": 1}'), ToolCallDelta(1, ": 2}"),
        ToolCallEnd(0), ToolCallEnd(1), Finish("tool_calls"),
    ]
    assert [(c["id"], c["function"]["arguments"]) for c in fold(events).tool_calls] == \
        [("call_a", '{"x": 1}'), ("call_b", '{"k": 2}')]


def test_a_new_id_at_an_index_in_use_opens_a_new_call() -> None:
    # Ollama sends every call whole at index 0
    events = decode(sse(
        chunk({"tool_calls": [tc(0, "call_1", "a", '{"n": 1}')]}),
        chunk({"tool_calls": [tc(0, "call_2", "b", '{"n": 2}')]}),
        chunk({}, "stop"),
    ))
    calls = fold(events).tool_calls
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == \
        [("call_1", "a", '{"n": 1}'), ("call_2", "b", '{"n": 2}')]
    assert fold(events).finish_reason == "tool_calls"  # Ollama says "stop" for a tool turn


def test_names_are_assigned_not_appended_and_a_brace_with_the_name_is_kept() -> None:
    # MiniMax via NIM resends the full name; llama.cpp sends "{" with the name
    events = decode(sse(
        chunk({"tool_calls": [tc(0, "c1", "read_file", "{")]}),
        chunk({"tool_calls": [tc(0, "c1", "read_file", '"p": 1')]}),
        chunk({"tool_calls": [tc(0, name="read_file", args="}")]}),
        chunk({}, "tool_calls"),
    ))
    call = fold(events).tool_calls[0]
    assert call["function"] == {"name": "read_file", "arguments": '{"p": 1}'}


def test_mistral_calls_without_an_index_are_told_apart_by_id() -> None:
    events = decode(sse(
        chunk({"tool_calls": [tc(id="AAAAAAAA1", name="f", args='{"a":1}')]}),
        chunk({"tool_calls": [tc(id="AAAAAAAA2", name="g", args='{"b":2}')]}),
        chunk({}, "tool_calls"),
    ))
    assert [c["function"]["name"] for c in fold(events).tool_calls] == ["f", "g"]


def test_a_call_ends_only_at_the_finish_never_when_its_json_parses() -> None:
    dec = cc.StreamDecoder()
    first = dec.feed(sse(chunk({"tool_calls": [tc(0, "c1", "f", "{}")]}), done=False))
    assert not any(isinstance(e, ToolCallEnd) for e in first)
    rest = dec.feed(sse(chunk({}, "tool_calls"))) + dec.close()
    assert rest[:2] == [ToolCallEnd(0), Finish("tool_calls")]


def test_arguments_before_the_name_are_held_until_it_arrives() -> None:
    events = decode(sse(chunk({"tool_calls": [tc(0, args='{"a"')]}),
                        chunk({"tool_calls": [tc(0, "c1", "f", ": 1}")]}), chunk({}, "tool_calls")))
    assert events[:3] == [ToolCallStart(0, "c1", "f"), ToolCallDelta(0, '{"a"'), ToolCallDelta(0, ": 1}")]


# ------------------------------------------------------------ text and reasoning
def test_reasoning_fields_in_deltas_become_reasoning() -> None:
    events = decode(sse(
        chunk({"role": "assistant", "reasoning_content": "think "}),
        chunk({"reasoning": "more"}),  # Groq / Cerebras / OpenRouter
        chunk({"content": "answer"}),
        chunk({}, "stop"),
    ), issuer="deepseek")
    assert events == [
        ReasoningDelta("think "), ReasoningDelta("more"),
        # the block is complete when the answer starts, not at the end of the stream
        ReasoningBlock("deepseek", {"type": "reasoning_content", "text": "think more"}),
        TextDelta("answer"), Finish("stop"),
    ]


def test_openrouter_reasoning_details_pieces_join_into_one_signed_block() -> None:
    def piece(**kw: Any) -> dict[str, Any]:
        return {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0, **kw}

    events = decode(b": OPENROUTER PROCESSING\n\n" + sse(
        chunk({"reasoning": "2+2", "reasoning_details": [piece(text="2+2", signature="")]}),
        chunk({"reasoning": " is 4", "reasoning_details": [piece(text=" is 4")]}),
        chunk({"reasoning": None, "reasoning_details": [piece(text="", signature="Et0B")]}),
        chunk({"content": "4"}),
        chunk({}, "stop"),
    ), issuer="openrouter")
    blocks = [e for e in events if isinstance(e, ReasoningBlock)]
    assert blocks == [ReasoningBlock("openrouter", piece(text="2+2 is 4", signature="Et0B"))]
    msg = fold(events).message
    assert msg["reasoning_content"] == "2+2 is 4" and msg["content"] == "4"


def test_inline_think_tags_are_reasoning_under_any_chunking() -> None:
    data = sse(chunk({"content": "<think>plan</think>\n\nHello"}), chunk({}, "stop"))
    whole = fold(decode(data)).message
    assert whole["content"] == "Hello" and whole["reasoning_content"] == "plan"
    dec = cc.StreamDecoder()
    events = [e for i in range(len(data)) for e in dec.feed(data[i:i + 1])] + dec.close()
    assert fold(events).message == whole


def test_mistral_thinking_parts_are_reasoning() -> None:
    events = decode(sse(
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}]}),
        chunk({"content": "4"}), chunk({}, "stop"),
    ))
    assert events[:3] == [ReasoningDelta("hmm"), ReasoningBlock("openai", {"type": "reasoning_content",
                                                                          "text": "hmm"}), TextDelta("4")]


def test_refusal_deltas() -> None:
    events = decode(sse(chunk({"role": "assistant", "refusal": "I can't"}), chunk({"refusal": " help."}),
                        chunk({}, "stop")))
    assert fold(events).message["refusal"] == "I can't help."
    assert events[0] == RefusalDelta("I can't")


# -------------------------------------------------------------------- usage
@pytest.mark.parametrize(("usage", "expected"), [
    ({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
      "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 3}},
     (10, 5, 15, 4, 0, 3)),
    ({"prompt_tokens": 563, "completion_tokens": 116, "total_tokens": 679, "prompt_cache_hit_tokens": 512,
      "prompt_cache_miss_tokens": 51}, (563, 116, 679, 512, 0, 0)),  # DeepSeek
    ({"prompt_tokens": 254, "completion_tokens": 93, "total_tokens": 347, "num_cached_tokens": 48},
     (254, 93, 347, 48, 0, 0)),  # Mistral
    ({"prompt_tokens": 654, "completion_tokens": 25, "total_tokens": 731,
      "completion_tokens_details": {"reasoning_tokens": 52}}, (654, 77, 731, 0, 0, 52)),  # xAI
    ({"prompt_tokens": 76, "completion_tokens": 47, "total_tokens": 123,
      "prompt_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 12}}, (76, 47, 123, 64, 12, 0)),
])
def test_usage_chunk_variants(usage: dict[str, Any], expected: tuple[int, ...]) -> None:
    events = decode(sse(chunk({"content": "x"}), chunk({}, "stop"), chunk(usage=usage)))
    got = [e for e in events if isinstance(e, UsageEvent)]
    assert len(got) == 1 and events[-1] is got[0]
    u = got[0].usage
    assert (u["prompt_tokens"], u["completion_tokens"], u["total_tokens"], u["cache_read_tokens"],
            u["cache_write_tokens"], u["reasoning_tokens"]) == expected
    assert u["raw"] == usage


def test_groq_usage_in_x_groq() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    events = decode(sse(chunk({"content": "x"}, "stop", x_groq={"id": "r", "usage": usage})))
    assert fold(events).usage["total_tokens"] == 5


# ------------------------------------------------------------- stream shape
def test_a_finish_without_done_is_a_complete_stream_and_done_without_finish_too() -> None:
    assert fold(decode(sse(chunk({"content": "a"}, "length"), done=False))).finish_reason == "length"
    events = decode(sse(chunk({"content": "a"})))
    assert events[-1] == Finish("stop")


def test_error_inside_a_200_stream_is_a_stream_error() -> None:
    err = {"error": {"message": "Provider returned error", "code": 502,
                     "metadata": {"raw": "upstream died"}}}
    events = decode(sse(chunk({"content": "partial"}), err, done=False))
    assert isinstance(events[-1], StreamError)
    assert isinstance(events[-1].error, ServerError) and events[-1].error.status == 502
    assert str(events[-1].error) == "Provider returned error: upstream died"


def test_unknown_chunks_are_ignored_and_counted() -> None:
    dec = cc.StreamDecoder()
    events = dec.feed(sse({"object": "keepalive"}, chunk({"content": "a"}), chunk({}, "stop"))) + dec.close()
    assert dec.unknown_events == 1 and dec.id == "chatcmpl-1" and dec.model == "m"
    assert fold(events).text == "a"


def test_malformed_json_line_is_a_protocol_error_with_the_partial() -> None:
    dec = cc.StreamDecoder()
    dec.feed(sse(chunk({"content": "so far"}), done=False))
    with pytest.raises(ProtocolError, match="not valid JSON") as info:
        dec.feed(b"data: {oops\n\n")
    assert info.value.partial is not None and info.value.partial.text == "so far"


def test_wrong_json_type_in_a_stream_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="must be a JSON object, got list"):
        cc.StreamDecoder().feed(b"data: [1, 2]\n\n")


def test_truncated_stream_is_a_protocol_error_without_unfinished_calls() -> None:
    dec = cc.StreamDecoder()
    dec.feed(sse(chunk({"content": "Let me"}), chunk({"tool_calls": [tc(0, "c1", "f", '{"a": ')]}),
                 done=False))
    with pytest.raises(ProtocolError, match="truncated") as info:
        dec.close()
    partial = info.value.partial
    assert partial.text == "Let me" and partial.tool_calls == []  # a partial call is never handed out


@pytest.mark.parametrize("data", [b"", b": comment only\n\n", b"data: [DONE]\n\n"])
def test_a_stream_with_no_events_is_an_error(data: bytes) -> None:
    dec = cc.StreamDecoder()
    dec.feed(data)
    with pytest.raises(ProtocolError, match="without any event"):
        dec.close()


def test_invalid_utf8_split_across_chunks() -> None:
    text = "héllo".encode()
    data = sse(chunk({"content": "héllo"}), chunk({}, "stop"))
    cut = data.index(text) + 2  # inside the é
    dec = cc.StreamDecoder()
    events = dec.feed(data[:cut]) + dec.feed(data[cut:]) + dec.close()
    assert fold(events).text == "héllo"
    with pytest.raises(ProtocolError, match="UTF-8"):
        cc.StreamDecoder().feed(b"data: \xff\xfe\n\n")


# ------------------------------------------------------------ stream encoder
def test_stream_encoder_speaks_openais_chunk_shape() -> None:
    usage = {**empty_usage(), "prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    enc = cc.StreamEncoder(model="gpt-x", id="chatcmpl-9", created=1700000000,
                           request={"metadata": {"stream_options": {"include_usage": True}}})
    events = [TextDelta("Hi"), ToolCallStart(0, "call_1", "f"), ToolCallDelta(0, "{}"), ToolCallEnd(0),
              Finish("tool_calls"), UsageEvent(usage)]
    data = b"".join(enc.feed(e) for e in events) + enc.close()
    frames = data.decode().split("\n\n")[:-1]
    assert frames[-1] == "data: [DONE]"
    chunks = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    for c in chunks:
        ChatCompletionChunk.model_validate(c)  # the official SDK accepts every chunk
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[2]["choices"][0]["delta"]["tool_calls"] == [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]
    assert chunks[4]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[5]["choices"] == [] and chunks[5]["usage"]["total_tokens"] == 7
    assert {c["id"] for c in chunks} == {"chatcmpl-9"} and {c["created"] for c in chunks} == {1700000000}


def test_stream_encoder_sends_usage_only_when_the_client_asked() -> None:
    enc = cc.StreamEncoder(model="m", request={"metadata": {}})
    data = enc.feed(TextDelta("a")) + enc.feed(Finish("stop")) + enc.feed(UsageEvent(empty_usage())) + enc.close()
    assert b'"usage"' not in data and data.endswith(b"data: [DONE]\n\n")


def test_stream_encoder_error_ends_the_stream_in_openais_error_shape() -> None:
    enc = cc.StreamEncoder(model="m")
    data = enc.feed(TextDelta("a")) + enc.feed(StreamError(RateLimitError("slow down", code="rate_limit")))
    assert json.loads(data.split(b"\n\n")[-2].removeprefix(b"data: "))["error"]["message"] == "slow down"
    assert enc.close() == b""
    events = cc.StreamDecoder().feed(data)
    assert isinstance(events[-1], StreamError) and isinstance(events[-1].error, RateLimitError)


# ------------------------------------------------------------------ responses
def test_decode_response_reasoning_refusal_and_missing_ids() -> None:
    body = {"id": "r1", "model": "m", "object": "chat.completion", "created": 1,
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "<think>why</think>Sure", "refusal": "",
                "tool_calls": [{"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
    c = cc.decode_response(json.dumps(body).encode(), issuer="groq")
    assert c.text == "Sure" and c.message["reasoning_content"] == "why"
    assert c.message["reasoning_details"] == [{"issuer": "groq", "block": {"type": "reasoning_content",
                                                                          "text": "why"}}]
    assert c.tool_calls[0]["id"].startswith("call_") and "refusal" not in c.message
    assert c.id == "r1" and c.provider == "" and c.usage["total_tokens"] == 3
    again = cc.decode_response(json.dumps(body).encode(), issuer="groq")
    assert again.tool_calls[0]["id"] == c.tool_calls[0]["id"]  # deterministic


def test_encode_response_is_what_the_official_sdk_parses() -> None:
    c = Completion(message={"role": "assistant", "content": None, "reasoning_content": "r",
                            "tool_calls": [{"id": "c1", "type": "function",
                                            "function": {"name": "f", "arguments": "{}"}}]},
                   finish_reason="tool_calls", usage={**empty_usage(), "cache_read_tokens": 2}, model="m", id="x")
    body = cc.encode_response(c, created=5)
    parsed = ChatCompletion.model_validate(body)
    assert parsed.choices[0].message.tool_calls[0].function.name == "f"
    assert parsed.usage.prompt_tokens_details.cached_tokens == 2 and parsed.created == 5


@pytest.mark.parametrize(("body", "match"), [
    (b"nope", "response body is not valid JSON"),
    (b"[]", "must be a JSON object"),
    (b'{"choices": []}', "no choices"),
    (b'{"choices": [{"message": "hi"}]}', r"choices\[0\]\.message"),
])
def test_decode_response_bad_input(body: bytes, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        cc.decode_response(body)


def test_an_error_body_with_status_200_raises_the_provider_error() -> None:
    with pytest.raises(RateLimitError, match="busy"):
        cc.decode_response({"error": {"message": "busy", "code": 429}})


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize(("status", "body", "cls", "message"), [
    (400, {"error": {"message": "too long", "type": "invalid_request_error",
                     "code": "context_length_exceeded"}}, ContextLengthError, "too long"),
    (429, {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}},
     BillingError, "quota"),
    (402, {"error": {"message": "Insufficient Balance", "type": "unknown_error"}}, BillingError,
     "Insufficient Balance"),  # DeepSeek
    (422, {"object": "error", "message": "bad field", "type": "invalid_request_error", "code": None},
     BadRequestError, "bad field"),  # Mistral, flat
    (422, {"detail": [{"loc": ["body", "x"], "msg": "extra"}]}, BadRequestError, "extra"),
    (429, [{"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}],
     RateLimitError, "Resource exhausted"),  # Gemini's compat endpoint: a list
    (503, b"<html>Service Unavailable</html>", ServerError, "Service Unavailable"),
    (529, {"error": {"type": "overloaded_error", "message": "Overloaded"}}, OverloadedError, "Overloaded"),
    (401, {"error": {"message": "bad key", "code": "invalid_api_key"}}, AuthenticationError, "bad key"),
])
def test_decode_error_shapes(status: int, body: Any, cls: type[ProviderError], message: str) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    err = cc.decode_error(status, {"X-Request-Id": "req_1", "retry-after": "7"}, raw)
    assert type(err) is cls and err.status == status
    assert message in str(err)
    assert err.request_id == "req_1" and err.retry_after == 7


# ------------------------------------------------------- Gemini thought signatures
SIG = {"google": {"thought_signature": "AVSoXO4"}}


def test_gemini_signatures_survive_a_stream_and_go_back_on_their_call() -> None:
    from modelwire.codecs import Target
    from modelwire.providers.profile import ProviderProfile

    events = decode(sse(
        chunk({"tool_calls": [{**tc(0, "c1", "f", "{}"), "extra_content": SIG}]}),
        chunk({"extra_content": {"google": {"thought_signature": "MSG"}}}),
        chunk({}, "tool_calls"),
    ), issuer="gemini")
    msg = fold(events).message
    assert msg["reasoning_details"] == [
        {"issuer": "gemini", "block": {"type": "gemini_extra_content", "extra_content": SIG, "tool_call_id": "c1"}},
        {"issuer": "gemini", "block": {"type": "gemini_extra_content",
                                       "extra_content": {"google": {"thought_signature": "MSG"}}}},
    ]
    history = {"model": "g", "messages": [{"role": "user", "content": "hi"}, msg,
                                          {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    gemini = json.loads(cc.encode_request(history, Target(ProviderProfile("gemini", issuer="gemini"), "g")).body)
    sent = gemini["messages"][1]
    assert sent["tool_calls"][0]["extra_content"] == SIG
    assert sent["extra_content"] == {"google": {"thought_signature": "MSG"}}
    assert "reasoning_details" not in sent
    other = json.loads(cc.encode_request(history, Target(ProviderProfile("openai", issuer="openai"), "g")).body)
    assert "extra_content" not in other["messages"][1] and "extra_content" not in other["messages"][1]["tool_calls"][0]
    # a Chat Completions client (through the gateway) gets them with their issuer,
    # so its echo goes back to Gemini and nowhere else
    body = cc.encode_response(fold(events))
    assert body["choices"][0]["message"]["reasoning_details"] == msg["reasoning_details"]
    assert cc.decode_response(body).message == msg


def test_gemini_non_stream_signature_with_an_empty_call_id() -> None:
    body = {"id": "x", "model": "gemini-2.5-pro", "object": "chat.completion", "created": 1,
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "extra_content": SIG, "thought_signature": "AVSoXO4",
                "tool_calls": [{"id": "", "type": "function", "function": {"name": "now", "arguments": "{}"}}]}}]}
    msg = cc.decode_response(body, issuer="gemini").message
    assert msg["tool_calls"][0]["id"].startswith("call_")
    assert msg["reasoning_details"] == [{"issuer": "gemini", "block": {"type": "gemini_extra_content",
                                                                       "extra_content": SIG}}]


def test_sse_error_events_and_unknown_events() -> None:
    dec = cc.StreamDecoder()
    events = dec.feed(b"event: ping\n\n" + sse(chunk({"content": "a"}), done=False)
                      + b"event: error\ndata: upstream timed out\n\n") + dec.close()
    assert dec.unknown_events == 1
    assert isinstance(events[-1], StreamError) and isinstance(events[-1].error, ServerError)
    assert str(events[-1].error) == "upstream timed out"


def test_reasoning_blocks_keep_their_issuer_through_a_chat_client() -> None:
    """The gateway's Chat Completions door: blocks leave tagged and come back tagged."""
    thinking = {"type": "thinking", "thinking": "t", "signature": "EqUD"}
    enc = cc.StreamEncoder(model="m")
    data = b"".join(enc.feed(e) for e in [ReasoningDelta("t"), ReasoningBlock("anthropic", thinking),
                                          TextDelta("hi"), Finish("stop")]) + enc.close()
    events = decode(data)  # the decoder's own issuer does not overwrite a tagged block
    assert ReasoningBlock("anthropic", thinking) in events
    msg = fold(events).message
    echoed = cc.decode_request({"model": "m", "messages": [{"role": "user", "content": "q"},
                                                           cc.encode_response(fold(events))["choices"][0]["message"]]})
    assert echoed["messages"][1]["reasoning_details"] == msg["reasoning_details"] == [
        {"issuer": "anthropic", "block": thinking}]


def test_vllm_names_the_stop_sequence_in_stop_reason_and_it_reaches_an_anthropic_client():
    # vLLM and SGLang: finish_reason "stop" plus stop_reason = the stop string that ended the
    # text (a token id for a stop token, null otherwise: the recorded Hugging Face answer)
    from modelwire.codecs import anthropic_messages as am

    last = {**chunk({}, "stop"), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "stop_reason": "391."}]}
    events = decode(sse(chunk({"role": "assistant", "content": "17 * 23 = "}), last))
    assert events[-1] == Finish("stop", None, "391.")
    done = fold(events)
    assert done.stop_sequence == "391."
    enc = am.StreamEncoder(model="m")
    wire = b"".join(enc.feed(e) for e in events) + enc.close()
    assert b'"delta":{"stop_reason":"stop_sequence","stop_sequence":"391."}' in wire
    for stop_reason, matched in (("391.", "391."), (128009, None), (None, None)):
        body = {"id": "c1", "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "stop_reason": stop_reason,
                                                       "message": {"role": "assistant", "content": "17 * 23 = "}}]}
        whole = cc.decode_response(body)
        assert whole.stop_sequence == matched
        assert (am.encode_response(whole)["stop_reason"], am.encode_response(whole)["stop_sequence"]) == (
            ("stop_sequence", "391.") if matched else ("end_turn", None))
    # a stop_reason beside another ending (length) names no sequence
    cut = {"id": "c1", "model": "m", "choices": [{"index": 0, "finish_reason": "length", "stop_reason": "391.",
                                                  "message": {"role": "assistant", "content": "17"}}]}
    assert cc.decode_response(cut).stop_sequence is None
