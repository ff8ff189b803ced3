"""The reverse direction: a client that speaks Anthropic (decode_request, encode_response,
decode_error) served from any upstream."""

from __future__ import annotations

import json

import pytest

from modelwire.codecs import anthropic_messages as am
from modelwire.completion import Completion
from modelwire.errors import (
    BadRequestError,
    ContextLengthError,
    MessageError,
    OverloadedError,
    RateLimitError,
    ServerError,
    UnsupportedContentError,
)
from modelwire.types import empty_usage

SIG = "EqEECkYICxgCKkAo3UA4WwDbB8ih=="


def test_decode_request_maps_the_whole_shape():
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Look closer.", "signature": SIG},
                {"type": "text", "text": "Let me zoom."},
                {"type": "tool_use", "id": "toolu_1", "name": "zoom", "input": {"x": 1}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
                 "content": [{"type": "text", "text": "zoomed"}]},
                {"type": "text", "text": "Well?"},
            ]},
        ],
        "tools": [{"name": "zoom", "description": "Zoom in", "input_schema": {"type": "object", "properties": {}}},
                  {"type": "web_search_20250305", "name": "web_search"}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "thinking": {"type": "enabled", "budget_tokens": 16000},
        "temperature": 1,
        "stop_sequences": ["END"],
        "metadata": {"user_id": "u1"},
        "stream": True,
    }
    req = am.decode_request(json.dumps(body).encode(), {"anthropic-version": "2026-10-21",
                                                        "anthropic-beta": "context-1m-2025-08-07"})
    assert req["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}]},
        {"role": "assistant", "content": "Let me zoom.",
         "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "zoom", "arguments": '{"x":1}'}}],
         "reasoning_content": "Look closer.",
         "reasoning_details": [{"issuer": "anthropic", "block": body["messages"][1]["content"][0]}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": [{"type": "text", "text": "zoomed"}], "is_error": False},
        {"role": "user", "content": [{"type": "text", "text": "Well?"}]},
    ]
    assert req["tools"][0] == {"type": "function", "function": {
        "name": "zoom", "description": "Zoom in", "parameters": {"type": "object", "properties": {}}}}
    assert req["tools"][1] == {"type": "web_search_20250305", "name": "web_search"}
    assert req["tool_choice"] == "required" and req["parallel_tool_calls"] is False
    assert req["thinking"] == "high"
    assert req["extra"] == {"thinking": body["thinking"], "metadata": {"user_id": "u1"}}
    assert req["stop"] == ["END"] and req["stream"] is True and req["max_tokens"] == 1024
    assert req["metadata"] == {"source_api": "anthropic_messages", "anthropic_version": "2026-10-21",
                               "anthropic_beta": ["context-1m-2025-08-07"]}


@pytest.mark.parametrize("thinking,output_config,effort", [
    ({"type": "adaptive"}, {"effort": "medium"}, "medium"),
    ({"type": "adaptive"}, None, "high"),
    ({"type": "enabled", "budget_tokens": 2000}, None, "low"),
    ({"type": "enabled", "budget_tokens": 40000}, None, "xhigh"),
    ({"type": "disabled"}, None, None),
])
def test_native_thinking_maps_to_an_effort_and_stays_in_extra(thinking, output_config, effort):
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "thinking": thinking}
    if output_config:
        body["output_config"] = output_config
    req = am.decode_request(body)
    assert req["thinking"] == effort
    assert req["extra"]["thinking"] == thinking


def test_both_auth_headers_and_both_versions_are_accepted():
    assert am.auth_token({"x-api-key": "sk-ant-1"}) == "sk-ant-1"
    assert am.auth_token({"Authorization": "Bearer sk-ant-2"}) == "sk-ant-2"
    assert am.auth_token({}) is None
    for version in ("2023-06-01", "2026-10-21"):
        am.decode_request({"messages": [{"role": "user", "content": "x"}]}, {"Anthropic-Version": version})
    with pytest.raises(MessageError, match="2099-01-01"):
        am.decode_request({"messages": []}, {"anthropic-version": "2099-01-01"})


@pytest.mark.parametrize("body,match", [
    (b"not json", "not JSON"),
    (b"[1]", "not a JSON object"),
    ({"messages": "hi"}, "messages must be a list"),
    ({"messages": [{"role": "system", "content": "x"}]}, "role must be user or assistant"),
    ({"messages": [{"role": "user", "content": 5}]}, "string or a list"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}, "tool_use_id"),
    ({"messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "sometimes"}}, "tool_choice"),
])
def test_bad_requests_raise_typed_errors_naming_the_problem(body, match):
    from modelwire.errors import ModelwireError

    with pytest.raises(ModelwireError, match=match):
        am.decode_request(body)


def test_content_with_no_internal_form_is_refused_by_name():
    body = {"messages": [{"role": "user", "content": [{"type": "search_result", "source": "x", "content": []}]}]}
    with pytest.raises(UnsupportedContentError, match=r"messages\[0\]\.content\[0\]"):
        am.decode_request(body)


def test_encode_response_builds_the_anthropic_body():
    msg = {"role": "assistant", "content": "It is sunny.",
           "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "w", "arguments": '{"c":"x"}'}}],
           "reasoning_content": "Check.",
           "reasoning_details": [{"issuer": "anthropic", "block": {"type": "thinking", "thinking": "Check.", "signature": SIG}}],
           "passthrough": [{"issuer": "anthropic", "block": {"type": "citations", "citations": [{"type": "x"}]}}]}
    usage = {**empty_usage(), "prompt_tokens": 50, "completion_tokens": 5, "cache_read_tokens": 30, "cache_write_tokens": 10}
    body = am.encode_response(Completion(message=msg, finish_reason="tool_calls", usage=usage, model="claude-x", id="msg_9"))
    assert body == {
        "id": "msg_9", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "Check.", "signature": SIG},
            {"type": "text", "text": "It is sunny.", "citations": [{"type": "x"}]},
            {"type": "tool_use", "id": "call_9", "name": "w", "input": {"c": "x"}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 30,
                  "output_tokens": 5},
    }
    again = am.decode_response(body)
    assert again.message["tool_calls"][0]["function"]["name"] == "w"
    assert again.usage["prompt_tokens"] == 50
    assert again.message["reasoning_details"] == msg["reasoning_details"]


def test_foreign_reasoning_is_shown_unsigned_and_never_signed_as_anthropic():
    msg = {"role": "assistant", "content": "ok", "reasoning_content": "deepseek thoughts",
           "reasoning_details": [{"issuer": "deepseek", "block": {"type": "reasoning_content", "text": "deepseek thoughts"}}]}
    body = am.encode_response(Completion(message=msg, finish_reason="stop", usage=empty_usage(), model="m"))
    assert body["content"][0] == {"type": "thinking", "thinking": "deepseek thoughts", "signature": ""}


@pytest.mark.parametrize("status,etype,message,cls", [
    (529, "overloaded_error", "Overloaded", OverloadedError),
    (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", RateLimitError),
    (500, "api_error", "Internal server error", ServerError),
    (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ContextLengthError),
    (400, "invalid_request_error", "messages: roles must alternate", BadRequestError),
    (413, "request_too_large", "Request exceeds the maximum allowed number of bytes", BadRequestError),
])
def test_decode_error_picks_the_class_from_the_error_type(status, etype, message, cls):
    body = {"type": "error", "error": {"type": etype, "message": message}, "request_id": "req_1"}
    err = am.decode_error(status, {"Retry-After": "7", "request-id": "req_h"}, json.dumps(body))
    assert type(err) is cls
    assert str(err) == message and err.status == status and err.request_id == "req_1"
    assert err.retry_after == 7.0
    assert err.headers["retry-after"] == "7"


def test_decode_error_tolerates_a_non_json_body():
    err = am.decode_error(502, {}, b"<html>Bad gateway</html>")
    assert isinstance(err, ServerError) and "Bad gateway" in str(err)


def test_decode_response_refuses_malformed_bodies():
    from modelwire.errors import ProtocolError

    with pytest.raises(ProtocolError, match="content"):
        am.decode_response({"type": "message"})
    with pytest.raises(OverloadedError):
        am.decode_response({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
