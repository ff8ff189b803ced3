"""Responses codec rules, one behaviour per test."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from modelwire.codecs import Target, responses
from modelwire.errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ContextLengthError,
    MessageError,
    ProtocolError,
    RateLimitError,
    ServerError,
    UnsupportedContentError,
)
from modelwire.events import (
    Finish,
    ReasoningBlock,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from modelwire.providers.profile import ProviderProfile

OPENAI = ProviderProfile(name="openai", api_mode="responses", issuer="openai")
ENC = "gAAAAAB-opaque+/=blob"
RS = {"id": "rs_1", "type": "reasoning", "encrypted_content": ENC, "summary": [{"type": "summary_text", "text": "hm"}]}


def body_of(request, profile=OPENAI, **target):
    encoded = responses.encode_request(request, Target(profile, model="gpt-5", **target))
    return json.loads(encoded.body)


def assistant(**kw):
    return {"role": "assistant", "content": kw.pop("content", None), **kw}


CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}}


# ------------------------------------------------------------------ encoding
def test_leading_system_messages_become_instructions_and_developer_stays_in_input():
    body = body_of({"messages": [
        {"role": "system", "content": "be brief"},
        {"role": "system", "content": [{"type": "text", "text": "be kind"}]},
        {"role": "developer", "content": "dev rule"},
        {"role": "user", "content": "hi"},
    ]})
    assert body["instructions"] == "be brief\n\nbe kind"
    assert body["input"] == [{"role": "developer", "content": "dev rule"}, {"role": "user", "content": "hi"}]


def test_store_is_false_by_default_and_thinking_asks_for_encrypted_reasoning():
    body = body_of({"messages": [{"role": "user", "content": "hi"}], "thinking": "high"})
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert "include" not in body_of({"messages": [{"role": "user", "content": "hi"}]})


@pytest.mark.parametrize("level,wire", [("low", "low"), ("medium", "medium"), ("xhigh", "xhigh"), ("max", "xhigh")])
def test_thinking_levels_map_to_reasoning_effort(level, wire):
    assert body_of({"messages": [], "thinking": level})["reasoning"]["effort"] == wire


def test_replayed_reasoning_goes_first_without_its_id_and_byte_exact():
    body = body_of({"messages": [
        {"role": "user", "content": "q"},
        assistant(tool_calls=[CALL], reasoning_details=[{"issuer": "openai", "block": dict(RS)}]),
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
    ]})
    assert body["input"][1:] == [
        {"type": "reasoning", "encrypted_content": ENC, "summary": RS["summary"]},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": '{"x":1}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "42"},
    ]


def test_stored_responses_keep_item_ids_and_ask_for_no_encrypted_content():
    stored = replace(OPENAI, responses_store=True)
    body = body_of({"thinking": "low", "messages": [
        assistant(content="a", reasoning_details=[{"issuer": "openai", "block": dict(RS)}])]}, stored)
    assert body["store"] is True and "include" not in body
    assert body["input"][0]["id"] == "rs_1"


def test_reasoning_without_a_following_item_is_dropped_as_an_orphan():
    body = body_of({"messages": [
        {"role": "user", "content": "q"},
        assistant(content="", reasoning_details=[{"issuer": "openai", "block": dict(RS)}]),
        {"role": "user", "content": "again"},
    ]})
    assert [i.get("type", i.get("role")) for i in body["input"]] == ["user", "user"]


def test_reasoning_from_a_non_equivalent_issuer_is_never_sent():
    msg = assistant(content="a", reasoning_details=[
        {"issuer": "azure", "block": dict(RS)},
        {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "t", "signature": "s"}},
    ])
    assert body_of({"messages": [msg]})["input"] == [{"role": "assistant", "content": "a"}]
    accepting = replace(OPENAI, accepts_issuers=frozenset({"azure"}))
    assert body_of({"messages": [msg]}, accepting)["input"][0]["encrypted_content"] == ENC


def test_the_same_reasoning_item_is_replayed_once():
    detail = {"issuer": "openai", "block": dict(RS)}
    body = body_of({"messages": [assistant(content="a", reasoning_details=[detail, detail])]})
    assert [i.get("type") for i in body["input"]] == ["reasoning", None]


def test_function_tools_are_flat_and_not_strict_unless_asked():
    sanitizing = replace(OPENAI)
    body = body_of({"messages": [], "tools": [
        {"type": "function", "function": {"name": "a", "description": "d", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}, "strict": True}},
        {"type": "web_search"},
    ], "tool_choice": {"type": "function", "function": {"name": "a"}}, "parallel_tool_calls": False},
        sanitizing)
    assert body["tools"] == [
        {"type": "function", "name": "a", "description": "d", "parameters": {"type": "object"}, "strict": False},
        {"type": "function", "name": "b", "parameters": {"type": "object"}, "strict": True},
        {"type": "web_search"},
    ]
    assert body["tool_choice"] == {"type": "function", "name": "a"}
    assert body["parallel_tool_calls"] is False


def test_tool_schemas_go_through_the_profile_sanitizer():
    class Strict(ProviderProfile):
        def sanitize_tool_schema(self, schema):
            return {**schema, "additionalProperties": False}

    body = body_of({"messages": [], "tools": [{"type": "function", "function": {"name": "a", "parameters": {}}}]},
                   Strict(name="x", api_mode="responses"))
    assert body["tools"][0]["parameters"] == {"additionalProperties": False}


def test_allowed_tools_choice_is_flattened():
    choice = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "a"}}]}}
    assert body_of({"messages": [], "tool_choice": choice})["tool_choice"] == {
        "type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "a"}]}


def test_settings_map_to_their_responses_names():
    body = body_of({"messages": [], "max_tokens": 50, "temperature": 0.2, "top_p": 0.9, "stream": True,
                    "response_format": {"type": "json_schema", "json_schema": {"name": "X", "schema": {}}},
                    "extra": {"service_tier": "flex"}})
    assert body["max_output_tokens"] == 50 and body["temperature"] == 0.2 and body["top_p"] == 0.9
    assert body["text"] == {"format": {"type": "json_schema", "name": "X", "schema": {}}}
    assert body["stream"] is True and body["service_tier"] == "flex"
    assert "max_tokens" not in body and "stream_options" not in body


def test_images_and_files_in_user_turns_and_tool_results():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}}
    body = body_of({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "see", "cache_control": {"type": "ephemeral"}}, image,
                                     {"type": "file", "file": {"file_data": "data:application/pdf;base64,QQ==",
                                                               "filename": "a.pdf"}}]},
        assistant(tool_calls=[CALL]),
        {"role": "tool", "tool_call_id": "call_1", "content": [image]},
    ]})
    assert body["input"][0]["content"] == [
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
        {"type": "input_file", "file_data": "data:application/pdf;base64,QQ==", "filename": "a.pdf"},
    ]
    assert body["input"][2]["output"] == [
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"}]


def test_headers_carry_auth_profile_and_target_headers():
    profile = replace(OPENAI, default_headers=(("x-profile", "1"),))
    encoded = responses.encode_request({"messages": []}, Target(profile, "m", api_key="sk-fake-key-1234",
                                                                  headers=(("x-extra", "2"),)))
    assert encoded.method == "POST" and encoded.path == "/responses"
    assert encoded.headers["authorization"] == "Bearer sk-fake-key-1234"
    assert encoded.headers["x-profile"] == "1" and encoded.headers["x-extra"] == "2"
    assert "sk-fake" not in repr(encoded)


def test_unsendable_content_is_an_error_naming_the_part():
    with pytest.raises(UnsupportedContentError, match="video"):
        body_of({"messages": [{"role": "user", "content": [{"type": "video", "video": {}}]}]})


# ------------------------------------------------------------------ decoding requests
def test_front_door_string_input_and_native_fields_in_extra():
    request = responses.decode_request(json.dumps({
        "model": "gpt-5", "input": "hello", "instructions": "sys", "previous_response_id": "resp_1",
        "reasoning": {"effort": "minimal"}, "store": True, "max_output_tokens": 9,
    }).encode())
    assert request["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
    assert request["thinking"] == "low"  # minimal is clamped up
    assert request["max_tokens"] == 9
    assert request["extra"] == {"previous_response_id": "resp_1", "reasoning": {"effort": "minimal"}, "store": True}


def test_front_door_items_fold_into_one_assistant_turn():
    request = responses.decode_request({"model": "m", "input": [
        {"role": "user", "content": "q"},
        dict(RS),
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "1"},
    ]})
    turn = request["messages"][1]
    assert turn["content"] == "a" and turn["reasoning_content"] == "hm"
    assert [c["id"] for c in turn["tool_calls"]] == ["c1", "c2"]
    assert turn["reasoning_details"] == [{"issuer": "openai", "block": RS}]
    assert turn["passthrough"][0]["block"]["type"] == "web_search_call"
    assert request["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "1"}


@pytest.mark.parametrize("body,error", [
    (b"{not json", ProtocolError),
    (b"[1, 2]", MessageError),
    ({"input": 5}, MessageError),
    ({"input": [3]}, MessageError),
    ({"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {"x": 1}}]}, MessageError),
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, UnsupportedContentError),
    ({"input": "x", "max_output_tokens": "ten"}, MessageError),
    ({"input": "x", "reasoning": {"effort": "ludicrous"}}, MessageError),
], ids=["not-json", "not-object", "input-number", "item-number", "args-object", "item-reference",
        "max-tokens-string", "unknown-effort"])
def test_bad_front_door_input_is_a_typed_error(body, error):
    with pytest.raises(error):
        responses.decode_request(body)


# ------------------------------------------------------------------ responses
def _response(**kw):
    return {"id": "resp_1", "model": "gpt-5", "status": "completed", "output": [], "usage": None, **kw}


@pytest.mark.parametrize("details,reason", [({"reason": "max_output_tokens"}, "length"),
                                            ({"reason": "content_filter"}, "content_filter")])
def test_incomplete_responses_map_to_finish_reasons(details, reason):
    completion = responses.decode_response(_response(status="incomplete", incomplete_details=details))
    assert completion.finish_reason == reason
    assert completion.native_finish_reason == f"incomplete: {details['reason']}"


def test_usage_counts_cached_and_reasoning_tokens():
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 80}, "output_tokens": 20,
             "output_tokens_details": {"reasoning_tokens": 15}, "total_tokens": 120}
    completion = responses.decode_response(_response(usage=usage))
    assert completion.usage == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                                "cache_read_tokens": 80, "cache_write_tokens": 0, "reasoning_tokens": 15,
                                "raw": usage}


def test_a_failed_response_raises_its_error():
    with pytest.raises(RateLimitError, match="slow down"):
        responses.decode_response(_response(status="failed", error={"code": "rate_limit_exceeded",
                                                                    "message": "slow down"}))


@pytest.mark.parametrize("status,code,cls", [
    (429, "rate_limit_exceeded", RateLimitError), (429, "insufficient_quota", BillingError),
    (400, "context_length_exceeded", ContextLengthError), (401, "invalid_api_key", AuthenticationError),
    (500, None, ServerError), (400, "invalid_encrypted_content", BadRequestError), (404, None, BadRequestError),
])
def test_error_classes_come_from_status_and_code(status, code, cls):
    error = responses.decode_error(status, {"X-Request-Id": "req_9", "retry-after": "3"},
                                   {"error": {"message": "nope", "type": "x", "code": code}})
    assert type(error) is cls
    assert (error.status, error.request_id, str(error)) == (status, "req_9", "nope")
    assert error.retry_after == 3


def test_error_body_that_is_not_json_keeps_the_text():
    error = responses.decode_error(502, {}, b"<html>bad gateway</html>")
    assert isinstance(error, ServerError) and "bad gateway" in str(error)


# ------------------------------------------------------------------ streams
def sse(*events: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


CREATED = {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5", "output": []}}
COMPLETED = {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": [],
                                                        "usage": None}}
FC = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}


def decode(raw: bytes):
    decoder = responses.StreamDecoder()
    return decoder.feed(raw) + decoder.close(), decoder


def test_arguments_done_without_deltas_still_yields_the_arguments():
    events, _ = decode(sse(
        CREATED,
        {"type": "response.output_item.added", "output_index": 0, "item": FC},
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc_1", "arguments": '{"a":1}'},
        {"type": "response.output_item.done", "output_index": 0, "item": {**FC, "arguments": '{"a":1}'}},
        COMPLETED))
    assert events == [ToolCallStart(0, "call_1", "f"), ToolCallDelta(0, '{"a":1}'), ToolCallEnd(0),
                      Finish("tool_calls", "completed")]


def test_deltas_are_routed_by_output_index_without_an_item_id():
    events, _ = decode(sse(
        CREATED,
        {"type": "response.output_item.added", "output_index": 0, "item": FC},
        {"type": "response.output_item.added", "output_index": 1, "item": {**FC, "id": "fc_2", "call_id": "call_2"}},
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{}"},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{"},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "}"},
        COMPLETED))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == [ToolCallDelta(1, "{}"), ToolCallDelta(0, "{"), ToolCallDelta(0, "}")]


def test_unknown_events_are_ignored_and_counted():
    events, decoder = decode(sse(CREATED, {"type": "response.brand_new_thing", "x": 1},
                                 {"type": "response.output_text.delta", "item_id": "m", "output_index": 0,
                                  "content_index": 0, "delta": "hi"}, COMPLETED))
    assert decoder.unknown_events == 1
    assert events[0] == TextDelta("hi")


def test_a_truncated_stream_raises_with_the_partial_answer():
    decoder = responses.StreamDecoder()
    decoder.feed(sse(CREATED,
                     {"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0,
                      "delta": "half an ans"},
                     {"type": "response.output_item.added", "output_index": 1, "item": FC},
                     {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '{"a":'}))
    with pytest.raises(ProtocolError, match="truncated") as info:
        decoder.close()
    assert info.value.partial.text == "half an ans"
    assert info.value.partial.tool_calls == []  # an unfinished call is never handed out
    assert info.value.partial.interrupted


def test_an_empty_stream_is_an_error_not_an_empty_answer():
    with pytest.raises(ProtocolError, match="without any event"):
        decode(b"")


def test_response_failed_becomes_a_stream_error():
    events, _ = decode(sse(CREATED, {"type": "response.failed", "response": {
        "id": "resp_1", "status": "failed", "error": {"code": "server_error", "message": "boom"}}}))
    assert isinstance(events[-1], StreamError) and isinstance(events[-1].error, ServerError)
    assert str(events[-1].error) == "boom"


@pytest.mark.parametrize("payload", [
    {"type": "error", "code": "rate_limit_exceeded", "message": "slow", "param": None},
    {"type": "error", "error": {"type": "tokens", "code": "rate_limit_exceeded", "message": "slow", "param": None}},
], ids=["flat-as-documented", "nested-as-sent"])
def test_error_events_in_both_shapes_become_provider_errors(payload):
    events, _ = decode(sse(CREATED, payload))
    error = events[-1].error
    assert isinstance(error, RateLimitError) and str(error) == "slow" and error.status == 429


@pytest.mark.parametrize("raw", [
    b"event: response.created\ndata: {oops\n\n",
    sse(CREATED, {"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "delta": 5}),
    sse(CREATED, {"type": "response.output_item.added", "output_index": 0}),
], ids=["invalid-json", "delta-not-string", "item-missing"])
def test_malformed_events_are_protocol_errors(raw):
    with pytest.raises(ProtocolError):
        decode(raw)


def test_openrouter_framing_without_event_lines_with_comments_and_done():
    raw = b": OPENROUTER PROCESSING\n\n" + b"".join(
        f"data: {json.dumps(e)}\n\n".encode() for e in (CREATED, COMPLETED)) + b"data: [DONE]\n\n"
    events, decoder = decode(raw)
    assert events == [Finish("stop", "completed")] and decoder.id == "resp_1"


def test_reasoning_block_is_the_done_item_not_the_added_one():
    added = {**RS, "encrypted_content": "incomplete"}
    events, _ = decode(sse(CREATED, {"type": "response.output_item.added", "output_index": 0, "item": added},
                           {"type": "response.output_item.done", "output_index": 0, "item": RS}, COMPLETED))
    assert ReasoningBlock("openai", RS) in events


# ------------------------------------------------------------------ encoder
def test_encoder_ends_with_incomplete_when_the_answer_was_cut():
    encoder = responses.StreamEncoder(model="m", id="resp_x")
    raw = encoder.feed(TextDelta("abc")) + encoder.feed(Finish("length")) + encoder.close()
    datas = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert datas[-1]["type"] == "response.incomplete"
    assert datas[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert datas[-2]["item"]["status"] == "incomplete"


def test_encoder_writes_nothing_after_an_error():
    encoder = responses.StreamEncoder(model="m")
    raw = encoder.feed(StreamError(ServerError("down")))
    assert b"event: response.failed\n" in raw and b'"error":{"code":"server_error","message":"down"}' in raw
    assert encoder.feed(TextDelta("late")) == b"" and encoder.close() == b""


def test_hosted_tool_items_are_replayed_only_where_responses_are_stored():
    msg = assistant(content="found it", passthrough=[
        {"issuer": "openai", "block": {"type": "web_search_call", "id": "ws_1", "status": "completed"}}])
    assert body_of({"messages": [msg]})["input"] == [{"role": "assistant", "content": "found it"}]
    stored = body_of({"messages": [msg]}, replace(OPENAI, responses_store=True))
    assert stored["input"][0] == {"type": "web_search_call", "id": "ws_1", "status": "completed"}


def test_replaying_encrypted_reasoning_asks_for_it_again_even_without_a_thinking_level():
    body = body_of({"messages": [assistant(content="a", reasoning_details=[{"issuer": "openai", "block": dict(RS)}])]})
    assert body["include"] == ["reasoning.encrypted_content"]


def test_stream_encoder_echoes_the_request_settings_in_the_response_object():
    request = {"messages": [{"role": "system", "content": "sys"}], "max_tokens": 5,
               "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
    raw = responses.StreamEncoder(model="m", id="resp_e", request=request).close()
    created = json.loads(raw.decode().split("\n")[1][6:])["response"]
    assert created["id"] == "resp_e" and created["status"] == "in_progress"
    assert created["instructions"] == "sys" and created["max_output_tokens"] == 5
    assert created["tools"] == [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}]


def test_response_ids_of_our_own_never_repeat_across_requests():
    assert responses.StreamEncoder(model="m").id != responses.StreamEncoder(model="m").id
    from modelwire.completion import Completion
    from modelwire.types import empty_usage

    bare = Completion(message={"role": "assistant", "content": "x"}, finish_reason="stop", usage=empty_usage(), model="m")
    assert responses.encode_response(bare)["id"] != responses.encode_response(bare)["id"]
    upstream = replace(bare, id="chatcmpl-123")
    assert responses.encode_response(upstream)["id"] == responses.encode_response(upstream)["id"]


def test_arguments_of_a_call_never_announced_are_kept_and_named_at_its_end():
    events, _ = decode(sse(
        CREATED,
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": '{"a":'},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": "1}"},
        {"type": "response.output_item.done", "output_index": 0, "item": {**FC, "arguments": '{"a":1}'}},
        COMPLETED))
    from modelwire.accumulate import Accumulator

    assert events[1] == ToolCallDelta(0, '{"a":')  # streamed as it came, not held to the end
    acc = Accumulator()
    for e in events:
        acc.feed(e)
    assert acc.result().tool_calls == [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]


@pytest.mark.parametrize("fields", [{"include": ["message.output_text.logprobs"]}, {"top_logprobs": 3},
                                    {"include": ["reasoning.encrypted_content", "message.output_text.logprobs"]}])
def test_logprobs_are_refused_not_dropped(fields):
    with pytest.raises(UnsupportedContentError, match="log-probabilities"):
        responses.decode_request({"model": "m", "input": "hi", **fields})


@pytest.mark.parametrize("fields", [{"include": ["reasoning.encrypted_content"]}, {"top_logprobs": 0},
                                    {"top_logprobs": None, "include": []}])
def test_other_includes_and_no_logprobs_pass_as_they_are(fields):
    assert responses.decode_request({"model": "m", "input": "hi", **fields})["extra"] == fields


def test_the_client_refuses_logprobs_in_extra_too():
    with pytest.raises(UnsupportedContentError, match="log-probabilities"):
        responses.encode_request({"messages": [{"role": "user", "content": "hi"}], "extra": {"top_logprobs": 2}},
                                 Target(ProviderProfile("openai"), model="gpt-x"))


def test_an_item_reference_says_what_to_send_instead():
    with pytest.raises(UnsupportedContentError, match=r"input\[0\]: item_reference 'msg_1' points at an item"):
        responses.decode_request({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"},
                                                          {"role": "user", "content": "hi"}]})


# --------------------------------------------------------------- custom tools
CUSTOM = {"type": "custom", "name": "apply_patch", "description": "Apply a patch",
          "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}


def test_a_custom_tool_decodes_to_a_function_of_one_text_argument_and_its_items_to_a_turn():
    req = responses.decode_request({
        "model": "m", "tools": [CUSTOM, {"type": "custom", "name": "note"}],
        "tool_choice": {"type": "custom", "name": "apply_patch"},
        "input": [{"role": "user", "content": "patch it"},
                  {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": 'a "quoted"\nline'},
                  {"type": "custom_tool_call_output", "call_id": "call_1", "output": "ok"}],
    })
    fn = req["tools"][0]["function"]
    assert fn["parameters"]["required"] == ["input"] and fn["parameters"]["properties"]["input"]["type"] == "string"
    assert fn["description"] == "Apply a patch\n\nThe input must follow this lark grammar:\nstart: /.+/"
    assert "description" not in req["tools"][1]["function"]  # no description, no grammar: nothing to say
    assert req["metadata"]["custom_tools"] == ["apply_patch", "note"]
    assert req["tool_choice"] == {"type": "function", "function": {"name": "apply_patch"}}
    call = req["messages"][1]["tool_calls"][0]
    assert (call["id"], json.loads(call["function"]["arguments"])) == ("call_1", {"input": 'a "quoted"\nline'})
    assert req["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    for bad in ({"type": "custom_tool_call", "name": "x", "input": "y"},
                {"type": "custom_tool_call", "call_id": "c", "name": "x", "input": 3},
                {"type": "custom_tool_call_output", "output": "y"}):
        with pytest.raises(MessageError):
            responses.decode_request({"model": "m", "input": [bad]})


def test_a_call_of_a_custom_tool_is_encoded_as_a_custom_tool_call_whole_and_streamed():
    req = responses.decode_request({"model": "m", "tools": [CUSTOM], "input": "patch it"})
    args = json.dumps({"input": "*** Begin Patch\n*** End Patch"})
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "apply_patch", "arguments": args}},
        {"id": "call_2", "type": "function", "function": {"name": "other", "arguments": "{}"}}]}
    from modelwire.completion import Completion
    from modelwire.types import empty_usage

    body = responses.encode_response(Completion(message=message, finish_reason="tool_calls", usage=empty_usage(),
                                                model="m"), req)
    items = [i for i in body["output"] if i["type"] != "message"]
    assert [(i["type"], i.get("input")) for i in items] == [
        ("custom_tool_call", "*** Begin Patch\n*** End Patch"), ("function_call", None)]
    enc = responses.StreamEncoder(model="m", request=req)
    raw = enc.feed(ToolCallStart(0, "call_1", "apply_patch"))
    for piece in (args[:9], args[9:]):
        raw += enc.feed(ToolCallDelta(0, piece))
    raw += enc.feed(ToolCallEnd(0)) + enc.feed(Finish("tool_calls")) + enc.close()
    datas = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    kinds = [d["type"] for d in datas]
    assert "response.function_call_arguments.delta" not in kinds
    done = next(d for d in datas if d["type"] == "response.custom_tool_call_input.done")
    assert done["input"] == "*** Begin Patch\n*** End Patch"
    assert datas[-1]["response"]["output"][0] == {
        "id": datas[-1]["response"]["output"][0]["id"], "type": "custom_tool_call", "status": "completed",
        "call_id": "call_1", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"}
    # a model that did not write {"input": ...} still has its text passed on
    assert responses.encode_response(Completion(message={"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "apply_patch", "arguments": "raw text"}}]},
        finish_reason="tool_calls", usage=empty_usage(), model="m"), req)["output"][-1]["input"] == "raw text"
