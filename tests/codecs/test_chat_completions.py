"""Chat Completions requests: every profile-driven rule, and bad input."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest

from modelwire.codecs import Target
from modelwire.codecs import chat_completions as cc
from modelwire.errors import MessageError, ProtocolError, UnsupportedContentError
from modelwire.providers.profile import ProviderProfile

IMG = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def body_for(request: dict[str, Any], profile: ProviderProfile | None = None, model: str = "m",
             **target: Any) -> dict[str, Any]:
    encoded = cc.encode_request(request, Target(profile or ProviderProfile("p"), model=model, **target))
    return json.loads(encoded.body)


def call(id: str, name: str = "f", args: str = "{}") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def tool_turn(reasoning: str | None = None, details: list[dict[str, Any]] | None = None,
              calls: bool = True) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": None if calls else "done"}
    if calls:
        msg["tool_calls"] = [call("call_1")]
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    if details is not None:
        msg["reasoning_details"] = details
    return msg


def convo(*assistant: dict[str, Any]) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    for a in assistant:
        msgs.append(a)
        for c in a.get("tool_calls", []):
            msgs.append({"role": "tool", "tool_call_id": c["id"], "content": "ok"})
    return {"model": "m", "messages": msgs}


# ------------------------------------------------------------------ basics
def test_body_headers_and_path() -> None:
    profile = ProviderProfile("p", default_headers=(("X-Title", "modelwire"),))
    encoded = cc.encode_request(
        {"model": "ignored", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2,
         "response_format": {"type": "json_object"}, "stop": ["x"], "metadata": {"ours": 1}},
        Target(profile, model="gpt-x", api_key="sk-test-abcdefgh", headers=(("X-Trace", "1"),)),
    )
    assert encoded.method == "POST" and encoded.path == "/chat/completions"
    assert encoded.headers == {"content-type": "application/json", "authorization": "Bearer sk-test-abcdefgh",
                               "x-title": "modelwire", "x-trace": "1"}
    assert json.loads(encoded.body) == {
        "model": "gpt-x", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2,
        "response_format": {"type": "json_object"}, "stop": ["x"],
    }  # metadata is ours: never sent


def test_max_tokens_goes_in_the_field_the_profile_names() -> None:
    req = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 99}
    assert body_for(req)["max_tokens"] == 99
    new = body_for(req, ProviderProfile("openai", max_tokens_field="max_completion_tokens"))
    assert new["max_completion_tokens"] == 99 and "max_tokens" not in new


def test_stream_asks_for_usage_only_where_the_endpoint_accepts_it() -> None:
    req = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
    assert body_for(req)["stream_options"] == {"include_usage": True}
    strict = body_for(req, ProviderProfile("p", stream_usage=False))
    assert strict["stream"] is True and "stream_options" not in strict
    assert "stream" not in body_for({**req, "stream": False})


def test_extra_is_merged_last_after_patch_body() -> None:
    @dataclass(frozen=True, slots=True)
    class Patched(ProviderProfile):
        def patch_body(self, body: dict[str, Any], target: Any) -> dict[str, Any]:
            return {**body, "patched": True, "temperature": 1}

    body = body_for({"messages": [{"role": "user", "content": "hi"}], "temperature": 0.5,
                     "extra": {"temperature": 0.1, "seed": 7}}, Patched("p"))
    assert body["patched"] is True and body["temperature"] == 0.1 and body["seed"] == 7


def test_developer_role_becomes_system_where_unsupported() -> None:
    req = {"messages": [{"role": "developer", "content": "be brief"}, {"role": "user", "content": "hi"}]}
    assert body_for(req)["messages"][0]["role"] == "system"
    assert body_for(req, ProviderProfile("openai", developer_role=True))["messages"][0]["role"] == "developer"


def test_underscore_keys_and_internal_fields_never_reach_the_wire() -> None:
    msg = {"role": "assistant", "content": "x", "_scaffold": 1, "passthrough": [{"issuer": "a", "block": {}}],
           "reasoning": "r", "finish_reason": "stop", "annotations": []}
    body = body_for({"messages": [{"role": "user", "content": "hi", "_x": 1}, msg]})
    assert body["messages"] == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]


def test_a_refusal_only_turn_goes_back_as_content() -> None:
    body = body_for({"messages": [{"role": "user", "content": "hi"},
                                  {"role": "assistant", "content": None, "refusal": "I can't help."},
                                  {"role": "user", "content": "ok"}]})
    assert body["messages"][1] == {"role": "assistant", "content": "I can't help."}


# -------------------------------------------------------------- reasoning echo
OWN = {"issuer": "deepseek", "block": {"type": "reasoning_content", "text": "mine"}}
FOREIGN = {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "theirs", "signature": "sig"}}


def echo(policy: str, msg: dict[str, Any], **kw: Any) -> dict[str, Any]:
    profile = ProviderProfile("deepseek", issuer="deepseek", reasoning_echo=policy, **kw)  # type: ignore[arg-type]
    return body_for(convo(msg), profile)["messages"][1]


def test_echo_none_strips_every_reasoning_field() -> None:
    sent = echo("none", tool_turn("mine", [OWN]))
    assert "reasoning_content" not in sent and "reasoning_details" not in sent


def test_echo_reasoning_content_sends_own_reasoning_only() -> None:
    assert echo("reasoning_content", tool_turn("mine", [OWN]))["reasoning_content"] == "mine"
    assert "reasoning_content" not in echo("reasoning_content", tool_turn("theirs", [FOREIGN]))
    # text with no block says nothing about who wrote it: never sent as the endpoint's own
    assert "reasoning_content" not in echo("reasoning_content", tool_turn("typed by caller"))
    # a client's echo through decode_request is tagged with the issuer it came from
    req = cc.decode_request({"model": "m", "messages": convo(tool_turn("echoed"))["messages"]}, issuer="deepseek")
    assert req["messages"][1]["reasoning_details"] == [
        {"issuer": "deepseek", "block": {"type": "reasoning_content", "text": "echoed"}}]
    profile = ProviderProfile("deepseek", issuer="deepseek", reasoning_echo="reasoning_content")
    assert body_for(req, profile)["messages"][1]["reasoning_content"] == "echoed"


def test_echo_required_pads_tool_call_turns_with_a_single_space() -> None:
    assert echo("required", tool_turn("mine", [OWN]))["reasoning_content"] == "mine"
    assert echo("required", tool_turn("theirs", [FOREIGN]))["reasoning_content"] == " "  # never leaked
    # a plain history (reasoning_content, no block: unattributed) goes back as it is
    assert echo("required", tool_turn("unknown origin"))["reasoning_content"] == "unknown origin"
    assert echo("required", tool_turn("   "))["reasoning_content"] == " "
    assert echo("required", tool_turn())["reasoning_content"] == " "
    assert echo("required", tool_turn(""))["reasoning_content"] == " "  # DeepSeek V4 rejects ""
    assert "reasoning_content" not in echo("required", tool_turn(calls=False))
    assert echo("required", tool_turn("mine", [OWN], calls=False))["reasoning_content"] == "mine"


def test_echo_reasoning_details_sends_equivalent_issuers_blocks_verbatim() -> None:
    item = {"type": "reasoning.encrypted", "data": "EjQK", "format": "google-gemini-v1", "index": 0}
    details = [{"issuer": "openrouter", "block": item}, FOREIGN,
               {"issuer": "openrouter", "block": {"type": "reasoning_content", "text": "plain"}}]
    profile = ProviderProfile("openrouter", issuer="openrouter", reasoning_echo="reasoning_details")
    sent = body_for(convo(tool_turn("text", details)), profile)["messages"][1]
    assert sent["reasoning_details"] == [item]
    assert "reasoning_content" not in sent
    # a profile that also accepts another issuer takes its blocks too
    wide = ProviderProfile("or", issuer="openrouter", accepts_issuers=frozenset({"anthropic"}),
                           reasoning_echo="reasoning_details")
    assert body_for(convo(tool_turn("t", details)), wide)["messages"][1]["reasoning_details"] == \
        [item, FOREIGN["block"]]


# ------------------------------------------------------------ thinking levels
@pytest.mark.parametrize(("model", "level", "sent"), [
    ("gpt-5", "low", "low"),
    ("gpt-5", "xhigh", "high"),
    ("o3", "max", "high"),
    ("gpt-5.1", "xhigh", "high"),
    ("gpt-5.1-codex-max", "xhigh", "xhigh"),
    ("gpt-5.2", "max", "xhigh"),
    ("openai/gpt-5.4-mini", "xhigh", "xhigh"),
])
def test_openai_reasoning_effort_caps_levels_the_model_does_not_accept(model: str, level: str, sent: str) -> None:
    profile = ProviderProfile("openai", reasoning_request="reasoning_effort")
    req = {"messages": [{"role": "user", "content": "hi"}], "thinking": level}
    assert body_for(req, profile, model=model)["reasoning_effort"] == sent


@pytest.mark.parametrize(("mode", "level", "expected"), [
    ("openrouter", "high", {"reasoning": {"effort": "high"}}),
    ("openrouter", "max", {"reasoning": {"effort": "xhigh"}}),
    ("thinking_flag", "low", {"thinking": {"type": "enabled"}}),
    ("enable_thinking", "medium", {"enable_thinking": True}),
    ("none", "high", {}),
])
def test_thinking_level_uses_the_profiles_knob(mode: str, level: str, expected: dict[str, Any]) -> None:
    profile = ProviderProfile("p", reasoning_request=mode)  # type: ignore[arg-type]
    body = body_for({"messages": [{"role": "user", "content": "hi"}], "thinking": level}, profile)
    assert {k: body[k] for k in ("reasoning", "thinking", "enable_thinking", "reasoning_effort") if k in body} \
        == expected


def test_no_thinking_level_sends_no_knob() -> None:
    profile = ProviderProfile("p", reasoning_request="thinking_flag")
    body = body_for({"messages": [{"role": "user", "content": "hi"}], "thinking": None}, profile)
    assert "thinking" not in body


def test_front_door_native_knob_is_replaced_by_the_endpoints_own() -> None:
    req = cc.decode_request({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                             "reasoning_effort": "high"})
    assert req["thinking"] == "high" and req["extra"] == {"reasoning_effort": "high"}
    openrouter = body_for(req, ProviderProfile("or", reasoning_request="openrouter"))
    assert openrouter["reasoning"] == {"effort": "high"} and "reasoning_effort" not in openrouter
    same = body_for(req, ProviderProfile("oa", reasoning_request="reasoning_effort"))
    assert same["reasoning_effort"] == "high"
    # a library caller's own extra is never second-guessed
    mine = body_for({"messages": [{"role": "user", "content": "hi"}], "extra": {"reasoning_effort": "low"}},
                    ProviderProfile("or", reasoning_request="openrouter"))
    assert mine["reasoning_effort"] == "low"


# ---------------------------------------------------------------- tools
def test_mistral_tool_ids_are_mapped_the_same_on_call_and_result() -> None:
    profile = ProviderProfile("mistral", tool_id_format="mistral9")
    req = convo({"role": "assistant", "content": None,
                 "tool_calls": [call("toolu_01L8DKSzJDJUgSqUJ6TDqfCH"), call("abcDEF123")]})
    msgs = body_for(req, profile)["messages"]
    first, kept = (c["id"] for c in msgs[1]["tool_calls"])
    assert len(first) == 9 and first.isalnum() and kept == "abcDEF123"
    assert [m["tool_call_id"] for m in msgs[2:]] == [first, kept]
    assert body_for(req, profile)["messages"][1]["tool_calls"][0]["id"] == first  # stable across requests


def test_anthropic_tool_id_format_keeps_only_safe_characters() -> None:
    profile = ProviderProfile("p", tool_id_format="anthropic")
    msgs = body_for(convo({"role": "assistant", "content": None, "tool_calls": [call("functions.weather:0")]}),
                    profile)["messages"]
    assert msgs[1]["tool_calls"][0]["id"] == msgs[2]["tool_call_id"] == "functions_weather_0"


def test_duplicate_tool_names_keep_the_first_definition(caplog: pytest.LogCaptureFixture) -> None:
    tools = [{"type": "function", "function": {"name": "a", "description": "first"}},
             {"type": "function", "function": {"name": "a", "description": "second"}},
             {"type": "function", "function": {"name": "b"}}]
    req = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}
    with caplog.at_level(logging.WARNING, "modelwire.codecs.chat_completions"):
        sent = body_for(req, ProviderProfile("deepseek", unique_tool_names=True))["tools"]
    assert [t["function"].get("description") for t in sent] == ["first", None]
    assert "duplicate tool name 'a'" in caplog.text
    assert len(body_for(req)["tools"]) == 2  # for every target, not only flagged ones
    assert tools[1]["function"]["description"] == "second"  # the caller's list is untouched


def test_tool_schema_goes_through_the_profiles_sanitizer() -> None:
    @dataclass(frozen=True, slots=True)
    class NoFormat(ProviderProfile):
        def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in schema.items() if k != "format"}

    params = {"type": "object", "format": "x", "properties": {}}
    req = {"messages": [{"role": "user", "content": "hi"}],
           "tools": [{"type": "function", "function": {"name": "f", "parameters": params}}]}
    assert body_for(req, NoFormat("p"))["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {}}
    assert params["format"] == "x"


@pytest.mark.parametrize(("choice", "allowed", "sent"), [
    ("required", {"auto", "none", "required", "function"}, "required"),
    ("required", {"auto", "none"}, "auto"),
    ("required", {"auto", "none", "any", "function"}, "any"),
    ({"type": "function", "function": {"name": "f"}}, {"auto", "required"}, "required"),
    ({"type": "function", "function": {"name": "f"}}, {"auto"}, "auto"),
])
def test_tool_choice_falls_back_to_what_the_endpoint_takes(choice: Any, allowed: set[str], sent: Any) -> None:
    req = {"messages": [{"role": "user", "content": "hi"}], "tool_choice": choice,
           "tools": [{"type": "function", "function": {"name": "f"}}]}
    assert body_for(req, ProviderProfile("p", tool_choice_values=frozenset(allowed)))["tool_choice"] == sent


def test_tool_choice_none_without_that_value_sends_no_tools() -> None:
    req = {"messages": [{"role": "user", "content": "hi"}], "tool_choice": "none",
           "tools": [{"type": "function", "function": {"name": "f"}}]}
    body = body_for(req, ProviderProfile("p", tool_choice_values=frozenset({"auto"})))
    assert "tools" not in body and "tool_choice" not in body


def test_parallel_tool_calls_only_where_supported() -> None:
    req = {"messages": [{"role": "user", "content": "hi"}], "parallel_tool_calls": False,
           "tools": [{"type": "function", "function": {"name": "f"}}]}
    assert body_for(req)["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in body_for(req, ProviderProfile("p", parallel_tool_calls=False))


def test_gemini_thought_signature_on_a_call_goes_only_to_gemini() -> None:
    sig = {"google": {"thought_signature": "AVSo"}}
    req = convo({"role": "assistant", "content": None, "tool_calls": [{**call("c1"), "extra_content": sig}]})
    gemini = ProviderProfile("gemini", issuer="gemini")
    assert body_for(req, gemini)["messages"][1]["tool_calls"][0]["extra_content"] == sig
    assert "extra_content" not in body_for(req)["messages"][1]["tool_calls"][0]


# ---------------------------------------------------------------- vision
def test_images_need_a_vision_profile() -> None:
    req = {"messages": [{"role": "user", "content": [{"type": "text", "text": "look"}, IMG]}]}
    with pytest.raises(UnsupportedContentError, match=r"messages\[0\]\.content\[1\] is an image") as info:
        body_for(req, ProviderProfile("textonly", vision=False))
    assert info.value.index == 0
    assert body_for(req)["messages"][0]["content"][1] == IMG


def test_image_tool_results_move_to_one_user_turn_after_the_results() -> None:
    req = {"model": "m", "messages": [
        {"role": "user", "content": "shoot"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a photo"}, IMG]},
        {"role": "tool", "tool_call_id": "c2", "content": "no image"},
        {"role": "user", "content": "well?"},
    ]}
    msgs = body_for(req)["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert msgs[2]["content"] == "a photo\n(attachments follow in the next user message)"
    assert msgs[4]["content"] == [{"type": "text", "text": "Attachments from tool call c1:"}, IMG]
    kept = body_for(req, ProviderProfile("p", vision_in_tool_results=True))["messages"]
    assert kept[2]["content"][1] == IMG and len(kept) == 5
    with pytest.raises(UnsupportedContentError, match="in a tool result"):
        body_for(req, ProviderProfile("p", vision=False))


# ------------------------------------------------------------- decode_request
def test_decode_request_keeps_unknown_fields_in_extra() -> None:
    req = cc.decode_request(json.dumps({
        "model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 5,
        "n": 1, "seed": 3, "metadata": {"k": "v"}, "stream": True,
        "stream_options": {"include_usage": True}, "tool_choice": "auto",
    }).encode())
    assert req["model"] == "gpt-4o" and req["max_tokens"] == 5 and req["stream"] is True
    assert req["extra"] == {"n": 1, "seed": 3, "metadata": {"k": "v"}}
    assert req["metadata"] == {"source_api": "chat_completions", "stream_options": {"include_usage": True}}


@pytest.mark.parametrize(("native", "level"), [
    ({"reasoning_effort": "minimal"}, "low"),
    ({"reasoning_effort": "none"}, None),
    ({"reasoning": {"effort": "xhigh"}}, "xhigh"),
    ({"reasoning": {"enabled": True}}, "medium"),
    ({"thinking": {"type": "enabled"}}, "medium"),
    ({"thinking": {"type": "disabled"}}, None),
    ({"enable_thinking": True}, "medium"),
])
def test_decode_request_maps_native_thinking_to_a_level(native: dict[str, Any], level: Any) -> None:
    req = cc.decode_request({"model": "m", "messages": [{"role": "user", "content": "hi"}], **native})
    assert req["thinking"] == level
    assert req["extra"] == native
    assert req["metadata"]["native_thinking"] == next(iter(native))


def test_decode_request_tags_reasoning_details_with_the_issuer() -> None:
    item = {"type": "reasoning.text", "text": "t", "signature": "s", "index": 0}
    internal = {"issuer": "anthropic", "block": {"type": "thinking"}}
    req = cc.decode_request({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "reasoning_details": [item, internal]},
    ]}, issuer="openrouter")
    assert req["messages"][1]["reasoning_details"] == [{"issuer": "openrouter", "block": item}, internal]


@pytest.mark.parametrize(("body", "error", "match"), [
    (b"{not json", ProtocolError, "request body is not valid JSON"),
    (b"[1, 2]", ProtocolError, "must be a JSON object"),
    ({"messages": [{"role": "user", "content": "x"}]}, MessageError, "model is required"),
    ({"model": "m", "messages": "hi"}, MessageError, "messages is required"),
    ({"model": "m", "messages": ["hi"]}, MessageError, r"messages\[0\] must be an object"),
    ({"model": "m", "messages": [{"content": "x"}]}, MessageError, r"messages\[0\]\.role"),
    ({"model": "m", "messages": [{"role": "user", "content": 5}]}, MessageError, r"messages\[0\]\.content"),
    ({"model": "m", "messages": [{"role": "tool", "content": "x"}]}, MessageError, "tool_call_id"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": "9"}, MessageError,
     "max_tokens must be an integer"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, MessageError,
     "temperature must be a number"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": {}}, MessageError,
     "tools must be a list"),
])
def test_decode_request_names_what_is_wrong(body: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        cc.decode_request(body)


@pytest.mark.parametrize(("messages", "match"), [
    ([{"role": "robot", "content": "x"}], r"messages\[0\]\.role 'robot'"),
    ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": 3}}]}],
     r"messages\[0\]\.tool_calls\[0\]\.function\.name"),
    ([{"role": "assistant", "tool_calls": [{"id": 1, "function": {"name": "f", "arguments": "{}"}}]}],
     r"messages\[0\]\.tool_calls\[0\]\.id"),
    ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 7}}]}],
     r"arguments must be a JSON string"),
])
def test_encode_request_names_what_is_wrong(messages: list[Any], match: str) -> None:
    with pytest.raises(MessageError, match=match):
        body_for({"messages": messages})


def test_parsed_arguments_from_a_caller_are_serialized() -> None:
    msgs = body_for(convo({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}))["messages"]
    assert msgs[1]["tool_calls"][0]["function"]["arguments"] == '{"x":1}'


def test_a_decoded_mapping_never_shares_the_callers_message_dicts() -> None:
    # bytes are parsed into dicts the request owns; a caller's mapping is copied, so
    # what later steps do to the request cannot reach the caller's objects
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    req = cc.decode_request({"model": "m", "messages": messages})
    req["messages"][0]["content"] = "changed"
    assert messages[0] == {"role": "user", "content": "hi"}
    assert all(a is not b for a, b in zip(req["messages"], messages))
    from_bytes = cc.decode_request(json.dumps({"model": "m", "messages": messages}).encode())
    assert from_bytes["messages"] == messages


def test_tool_calls_go_out_whole_and_the_callers_call_is_untouched() -> None:
    plain = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'},
             "extra_content": {"google": {"thought_signature": "sig"}}, "index": 0}
    parsed = {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": {"b": 2}}}
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [plain, parsed]},
            {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
            {"role": "tool", "tool_call_id": "call_2", "content": "r2"}]
    before = json.dumps(msgs)
    sent = body_for({"model": "m", "messages": msgs})["messages"][1]["tool_calls"]
    assert sent == [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'},
                     "index": 0},  # no extra_content for an endpoint that does not take Gemini's
                    {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": '{"b":2}'}}]
    assert json.dumps(msgs) == before


# ------------------------------------------------------- one choice per answer
_HI = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("fields,named", [
    ({"n": 2}, "n=2"), ({"n": 5, "stream": True}, "n=5"), ({"logprobs": True}, "logprobs"),
    ({"logprobs": True, "top_logprobs": 3}, "logprobs"), ({"top_logprobs": 2}, "logprobs"),
    ({"modalities": ["text", "audio"], "audio": {"voice": "alloy", "format": "wav"}}, "audio output"),
    ({"modalities": ["audio"]}, "audio output")])
def test_several_choices_logprobs_or_audio_are_refused_not_dropped(fields, named):
    # the answer is one text message: a translation would drop choices 1.., the
    # log-probabilities or the audio, so the request is refused, naming the field
    with pytest.raises(UnsupportedContentError) as info:
        cc.decode_request({"model": "m", "messages": _HI, **fields})
    assert named in str(info.value)


@pytest.mark.parametrize("n", ["2", 0, -1, 1.5, True])
def test_a_malformed_n_is_a_plain_message_error(n):
    with pytest.raises(MessageError) as info:
        cc.decode_request({"model": "m", "messages": _HI, "n": n})
    assert not isinstance(info.value, UnsupportedContentError)
    assert "n must be a positive integer" in str(info.value)


@pytest.mark.parametrize("fields", [{"n": 1}, {"n": None}, {"logprobs": False}, {"logprobs": None, "top_logprobs": 0},
                                    {"modalities": ["text"]}, {"audio": None}])
def test_one_choice_and_no_logprobs_pass_as_they_are(fields):
    req = cc.decode_request({"model": "m", "messages": _HI, **fields})
    assert req["extra"] == fields
    body = json.loads(cc.encode_request(req, Target(ProviderProfile("openai"), model="gpt-x")).body)
    assert {k: body[k] for k in fields} == fields


def test_the_client_refuses_several_choices_in_extra_too():
    # Client users reach the same encode through extra=
    target = Target(ProviderProfile("openai"), model="gpt-x")
    with pytest.raises(UnsupportedContentError, match="n=3"):
        cc.encode_request({"messages": _HI, "extra": {"n": 3}}, target)


_CALC = {"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}}
_OTHER = {"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}
_ALLOWED = {"type": "allowed_tools", "allowed_tools": {"mode": "required",
                                                       "tools": [{"type": "function", "function": {"name": "calc"}}]}}


def test_allowed_tools_goes_as_it_is_to_openai_and_as_a_smaller_list_elsewhere():
    request = {"messages": _HI, "tools": [_CALC, _OTHER], "tool_choice": _ALLOWED}
    openai_body = json.loads(cc.encode_request(request, Target(ProviderProfile("openai", tool_choice_values=frozenset(
        {"auto", "none", "required", "function", "allowed_tools"})), model="gpt-x")).body)
    assert openai_body["tool_choice"] == _ALLOWED and len(openai_body["tools"]) == 2
    other = json.loads(cc.encode_request(request, Target(ProviderProfile("groq"), model="m")).body)
    assert [t["function"]["name"] for t in other["tools"]] == ["calc"] and other["tool_choice"] == "required"
