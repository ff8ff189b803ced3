"""Bad input never escapes as KeyError/TypeError/AttributeError: decode_request,
decode_response, decode_error and StreamDecoder raise modelwire errors naming the
problem, whatever JSON arrives."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs import anthropic_messages as am
from modelwire.errors import ModelwireError, ProviderError

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
    ["", "x", "user", "assistant", "text", "image", "document", "tool_use", "tool_result", "thinking",
     "redacted_thinking", "base64", "url", "file", "auto", "any", "tool", "enabled", "adaptive",
     "message_start", "content_block_start", "content_block_delta", "text_delta", "input_json_delta",
     "signature_delta", "message_delta", "message_stop", "error", "end_turn"]))
keys = st.sampled_from(["type", "role", "content", "text", "source", "id", "name", "input", "tool_use_id",
                        "messages", "system", "tools", "tool_choice", "thinking", "index", "delta",
                        "content_block", "message", "usage", "stop_reason", "error", "data", "media_type",
                        "input_schema", "budget_tokens", "output_config", "partial_json", "signature"])
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(keys, inner, max_size=5)), max_leaves=25)


blocks = st.lists(st.one_of(json_values, st.dictionaries(keys, json_values, max_size=5)), max_size=3)
messages = st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant", "system"]),
    "content": st.one_of(st.text(max_size=3), blocks, json_values)}), max_size=3)
requests = st.fixed_dictionaries({"messages": messages}, optional={
    k: json_values for k in ("system", "tools", "tool_choice", "thinking", "output_config", "output_format",
                             "max_tokens", "temperature", "stop_sequences", "stream")})
responses = st.fixed_dictionaries({"content": blocks}, optional={
    k: json_values for k in ("usage", "stop_reason", "model", "id", "type", "error")})


@given(st.one_of(requests, st.dictionaries(keys, json_values, max_size=6)))
def test_decode_request_raises_only_modelwire_errors(body):
    try:
        am.decode_request(body)
    except ModelwireError:
        pass


@given(st.one_of(responses, st.dictionaries(keys, json_values, max_size=6)))
def test_decode_response_raises_only_modelwire_errors(body):
    try:
        am.decode_response(body)
    except ModelwireError:
        pass


@given(st.integers(100, 599), json_values)
def test_decode_error_always_returns_a_provider_error(status, body):
    assert isinstance(am.decode_error(status, {}, json.dumps(body).encode()), ProviderError)


@given(st.lists(st.dictionaries(keys, json_values, max_size=5), max_size=6))
def test_stream_decoder_raises_only_modelwire_errors(events):
    data = b"".join(f"event: x\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    dec = am.StreamDecoder()
    try:
        dec.feed(data)
        dec.close()
    except ModelwireError:
        pass


@given(st.fixed_dictionaries({"messages": st.one_of(messages, json_values)}, optional={
    k: json_values for k in ("tools", "tool_choice", "thinking", "max_tokens", "temperature", "stop",
                             "response_format", "parallel_tool_calls")}))
def test_encode_request_raises_only_modelwire_errors(request):
    from modelwire.codecs import Target
    from modelwire.providers.profile import ProviderProfile

    profile = ProviderProfile(name="a", api_mode="anthropic_messages", issuer="anthropic", anthropic_version="2026-10-21")
    try:
        am.encode_request(request, Target(profile, "claude-sonnet-4-6"))
    except ModelwireError:
        pass
