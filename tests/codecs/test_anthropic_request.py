"""encode_request for Anthropic Messages: one test (or a few) per rule."""

from __future__ import annotations

import importlib.util
import json
import logging
import pathlib

import pytest

from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.codecs.anthropic_messages._models import family_for, normalize_model_id
from modelwire.errors import MessageError, UnsupportedContentError
from modelwire.providers.profile import ProviderProfile

_spec = importlib.util.spec_from_file_location("anthropic_rules", pathlib.Path(__file__).with_name("anthropic_rules.py"))
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)

DIRECT = ProviderProfile(name="anthropic", api_mode="anthropic_messages", auth_style="x-api-key",
                         issuer="anthropic", anthropic_version="2026-10-21")
OLD_API = ProviderProfile(name="anthropic-2023", api_mode="anthropic_messages", auth_style="x-api-key",
                          issuer="anthropic", anthropic_version="2023-06-01")
MINIMAX = ProviderProfile(name="minimax", api_mode="anthropic_messages", auth_style="bearer",
                          issuer="minimax", anthropic_version="2023-06-01", fine_grained_tool_streaming=False)
DEEPSEEK = ProviderProfile(name="deepseek", api_mode="anthropic_messages", auth_style="x-api-key",
                           issuer="deepseek", anthropic_version="2023-06-01", unsigned_thinking_echo=True)
SIG = "EqEECkYICxgCKkAo3UA4WwDbB8ihhpykVCsPx6iMzwNTNP8dePIgYjNpu2EWrt5JbApWWONEZaf5w46939Vu1SDU1//mDyr2/Vw+Egz=="


def encode(request: dict, profile: ProviderProfile = DIRECT, model: str = "claude-sonnet-4-6", **kw):
    enc = am.encode_request(request, Target(profile, model, api_key="sk-ant-api03-fake-key", **kw))
    return enc, json.loads(enc.body)


def body_of(request: dict, profile: ProviderProfile = DIRECT, model: str = "claude-sonnet-4-6") -> dict:
    return encode(request, profile, model)[1]


def user(text="hi"):
    return {"role": "user", "content": text}


def call(cid, name="get_weather", args='{"city": "Paris"}'):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def thinking(issuer="anthropic", text="Let me think.", sig=SIG):
    return {"issuer": issuer, "block": {"type": "thinking", "thinking": text, "signature": sig}}


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


# ----------------------------------------------------------- 1. API versions
def test_version_header_and_path_follow_the_profile():
    enc, _ = encode({"messages": [user()]})
    assert enc.path == "/v1/messages"
    assert enc.headers["anthropic-version"] == "2026-10-21"
    assert enc.headers["x-api-key"] == "sk-ant-api03-fake-key"
    assert encode({"messages": [user()]}, OLD_API)[0].headers["anthropic-version"] == "2023-06-01"
    assert encode({"messages": [user()]}, MINIMAX)[0].headers["authorization"] == "Bearer sk-ant-api03-fake-key"


def test_version_2026_drops_sampling_parameters_with_a_warning(caplog):
    req = {"messages": [user()], "temperature": 0.2, "top_p": 0.9}
    with caplog.at_level(logging.WARNING):
        body = body_of(req, DIRECT, "claude-sonnet-4-5")
    assert "temperature" not in body and "top_p" not in body
    assert "sampling" in caplog.text
    old = body_of(req, OLD_API, "claude-sonnet-4-5")
    assert old["temperature"] == 0.2 and old["top_p"] == 0.9


def test_opus_4_7_rejects_sampling_even_on_the_2023_api():
    assert "temperature" not in body_of({"messages": [user()], "temperature": 0.5}, OLD_API, "claude-opus-4-7")


def test_version_2026_drops_citations_on_user_text_and_documents_in_assistant_turns(caplog):
    pdf = {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="}}
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "see", "citations": {"enabled": True}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, pdf]},
        user(),
    ]
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": msgs})
    assert "citations" not in body["messages"][0]["content"][0]
    assert [b["type"] for b in body["messages"][1]["content"]] == ["text"]
    assert "2026-10-21" in caplog.text
    old = body_of({"messages": msgs}, OLD_API, "claude-sonnet-4-5")
    assert old["messages"][0]["content"][0]["citations"] == {"enabled": True}
    assert [b["type"] for b in old["messages"][1]["content"]] == ["text", "document"]


# ------------------------------------------------------------------ 2. system
def test_system_and_developer_messages_move_to_the_system_parameter():
    body = body_of({"messages": [{"role": "system", "content": "Be brief."},
                                 {"role": "developer", "content": "Use French."}, user()]})
    assert body["system"] == "Be brief.\n\nUse French."
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_system_blocks_keep_cache_control():
    cc = {"type": "ephemeral", "ttl": "1h"}
    body = body_of({"messages": [{"role": "system", "content": [{"type": "text", "text": "Rules", "cache_control": cc}]},
                                 user()]})
    assert body["system"] == [{"type": "text", "text": "Rules", "cache_control": cc}]


# -------------------------------------------------------------- 3. tool calls
def test_tool_calls_become_tool_use_with_parsed_input():
    msgs = [user(), {"role": "assistant", "content": "Checking.", "tool_calls": [call("toolu_1")]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "22C"}]
    body = body_of({"messages": msgs, "tools": TOOLS})
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "22C"}]


@pytest.mark.parametrize("args", ["not json", "[1, 2]", '"text"'])
def test_malformed_arguments_become_an_empty_object_with_a_warning(args, caplog):
    msgs = [user(), {"role": "assistant", "tool_calls": [call("c1", args=args)]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": msgs, "tools": TOOLS})
    assert body["messages"][1]["content"][0]["input"] == {}
    assert "not a JSON object" in caplog.text


def test_tool_ids_are_sanitized_the_same_way_on_call_and_result():
    msgs = [user(), {"role": "assistant", "tool_calls": [call("functions.get:0"), call("functions.get|0")]},
            {"role": "tool", "tool_call_id": "functions.get:0", "content": "a"},
            {"role": "tool", "tool_call_id": "functions.get|0", "content": "b"}]
    body = body_of({"messages": msgs, "tools": TOOLS})
    uses = [b["id"] for b in body["messages"][1]["content"]]
    results = [b["tool_use_id"] for b in body["messages"][2]["content"]]
    assert uses == results
    assert all(rules._ID.match(i) for i in uses)
    assert uses[0] != uses[1]  # distinct ids stay distinct


# ------------------------------------------------------------ 4. tool results
def test_consecutive_tool_results_merge_into_one_user_turn_first_in_it():
    msgs = [user(), {"role": "assistant", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            user("and now?")]
    body = body_of({"messages": msgs, "tools": TOOLS})
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    kinds = [b["type"] for b in body["messages"][2]["content"]]
    assert kinds == ["tool_result", "tool_result", "text"]
    assert rules.violations(body, version="2026-10-21") == []


def test_images_in_tool_results_become_image_blocks():
    msgs = [user(), {"role": "assistant", "tool_calls": [call("a", "screenshot", "{}")]},
            {"role": "tool", "tool_call_id": "a", "content": [
                {"type": "text", "text": "here"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}]}]
    body = body_of({"messages": msgs, "tools": TOOLS})
    assert body["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": "here"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
    ]


# ------------------------------------------------------ 5. placeholders, merges
def test_empty_content_gets_a_placeholder_and_empty_text_is_never_sent():
    msgs = [{"role": "user", "content": [{"type": "text", "text": " "}]},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": ""},
            {"role": "assistant", "tool_calls": [call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": ""}]
    body = body_of({"messages": msgs, "tools": TOOLS})
    assert body["messages"][0]["content"] == [{"type": "text", "text": "(empty message)"}]
    assert body["messages"][1]["content"] == [{"type": "text", "text": "(empty)"}]
    assert body["messages"][2]["content"] == "(empty message)"
    assert body["messages"][4]["content"][0]["content"] == "(no output)"
    assert rules.violations(body, version="2026-10-21") == []


def test_same_role_neighbours_merge_and_the_second_assistant_loses_its_thinking():
    msgs = [user("a"), user("b"),
            {"role": "assistant", "content": "one", "reasoning_details": [thinking(text="first")]},
            {"role": "assistant", "content": "two", "reasoning_details": [thinking(text="second")]},
            user("c")]
    body = body_of({"messages": msgs})
    assert body["messages"][0] == {"role": "user", "content": "a\nb"}
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "first", "signature": SIG},
        {"type": "text", "text": "one"},
        {"type": "text", "text": "two"},
    ]


# --------------------------------------------------------------- 6. thinking
def _loop(details_first, details_second=None):
    return [
        user("q1"),
        {"role": "assistant", "content": "earlier", "reasoning_details": details_first},
        user("q2"),
        {"role": "assistant", "tool_calls": [call("t1")], "reasoning_details": details_second or details_first},
        {"role": "tool", "tool_call_id": "t1", "content": "r"},
    ]


def test_thinking_from_an_equivalent_issuer_goes_back_byte_exact_in_order():
    redacted = {"issuer": "anthropic", "block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}}
    enc, body = encode({"messages": _loop([thinking(), redacted]), "tools": TOOLS})
    assert body["messages"][3]["content"][:2] == [thinking()["block"], redacted["block"]]
    assert json.dumps(SIG).encode() in enc.body
    bedrock = ProviderProfile(name="bedrock", api_mode="anthropic_messages", issuer="bedrock",
                              accepts_issuers=frozenset({"anthropic"}), anthropic_version="bedrock-2023-05-31")
    assert body_of({"messages": _loop([thinking()]), "tools": TOOLS}, bedrock)["messages"][3]["content"][0] == thinking()["block"]


def test_foreign_thinking_is_dropped_never_turned_into_text():
    body = body_of({"messages": _loop([thinking("minimax")]), "tools": TOOLS})
    sent = json.dumps(body)
    assert "Let me think." not in sent
    # and an endpoint's own blocks go back to it
    own = body_of({"messages": _loop([thinking("minimax")]), "tools": TOOLS}, MINIMAX, "MiniMax-M2")
    assert own["messages"][3]["content"][0] == thinking("minimax")["block"]


def test_earlier_turns_keep_thinking_unless_the_profile_drops_it():
    keep = body_of({"messages": _loop([thinking(text="old")], [thinking(text="now")]), "tools": TOOLS})
    assert keep["messages"][1]["content"][0]["thinking"] == "old"
    dropping = ProviderProfile(name="a", api_mode="anthropic_messages", issuer="anthropic",
                               anthropic_version="2026-10-21", drop_earlier_thinking=True)
    dropped = body_of({"messages": _loop([thinking(text="old")], [thinking(text="now")]), "tools": TOOLS}, dropping)
    assert dropped["messages"][1]["content"] == [{"type": "text", "text": "earlier"}]
    assert dropped["messages"][3]["content"][0]["thinking"] == "now"  # current tool loop: always kept


def test_unsigned_thinking_is_rebuilt_from_reasoning_content_for_deepseek():
    msgs = [user(), {"role": "assistant", "tool_calls": [call("a")], "reasoning_content": "I should look."},
            {"role": "tool", "tool_call_id": "a", "content": "r"}]
    body = body_of({"messages": msgs, "tools": TOOLS}, DEEPSEEK, "deepseek-chat")
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "I should look."}
    assert body_of({"messages": msgs, "tools": TOOLS})["messages"][1]["content"][0]["type"] == "tool_use"


def test_thinking_is_turned_off_when_the_tool_loop_turn_has_no_thinking_to_send(caplog):
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": _loop([thinking("openai")]), "tools": TOOLS, "thinking": "high"})
    assert "thinking" not in body
    assert "output_config" not in body
    assert "thinking turned off" in caplog.text
    kept = body_of({"messages": _loop([thinking()]), "tools": TOOLS, "thinking": "high"})
    assert kept["thinking"]["type"] == "adaptive"


# ------------------------------------------------------------------ 7. images
def test_images_and_documents():
    msgs = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="}, "title": "Spec"},
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGVsbG8="}},
        {"type": "file", "file": {"file_id": "file_011"}},
    ]}]
    content = body_of({"messages": msgs})["messages"][0]["content"]
    assert content == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
         "title": "Spec"},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hello"}},
        {"type": "document", "source": {"type": "file", "file_id": "file_011"}},
    ]


def test_images_to_a_profile_without_vision_raise_naming_the_part():
    blind = ProviderProfile(name="blind", api_mode="anthropic_messages", vision=False)
    msgs = [{"role": "user", "content": [{"type": "text", "text": "look"},
                                         {"type": "image_url", "image_url": {"url": "https://x/a.png"}}]}]
    with pytest.raises(UnsupportedContentError, match=r"messages\[0\]\.content\[1\]") as info:
        body_of({"messages": msgs}, blind)
    assert info.value.index == 0


def test_audio_cannot_be_expressed():
    msgs = [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AA", "format": "wav"}}]}]
    with pytest.raises(UnsupportedContentError, match="input_audio"):
        body_of({"messages": msgs})


# -------------------------------------------------------------- 8. max_tokens
@pytest.mark.parametrize("model,limit", [
    ("claude-sonnet-4-5-20250929", 64000),
    ("anthropic/claude-opus-4.6", 128000),
    ("us.anthropic.claude-3-5-sonnet-20240620-v1:0", 8192),
    ("claude-3-haiku-20240307", 4096),
    ("claude-opus-4-1-20250805", 32000),
    ("claude-sonnet-4-20250514", 64000),
    ("claude-opus-4-6@20260205", 128000),
    ("claude-opus-9", 128000),  # unknown Claude: the newest family's limit
])
def test_max_tokens_defaults_to_the_family_limit_for_any_spelling(model, limit):
    assert body_of({"messages": [user()]}, OLD_API, model)["max_tokens"] == limit


def test_a_larger_max_tokens_is_clamped_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        assert body_of({"messages": [user()], "max_tokens": 99999}, OLD_API, "claude-3-5-haiku-latest")["max_tokens"] == 8192
    assert "clamped" in caplog.text
    assert body_of({"messages": [user()], "max_tokens": 500}, OLD_API, "claude-3-5-haiku")["max_tokens"] == 500


def test_model_ids_normalize():
    assert normalize_model_id("anthropic/claude-opus-4.6") == "claude-opus-4-6"
    assert normalize_model_id("global.anthropic.claude-sonnet-4-5-20250929-v1:0") == "claude-sonnet-4-5-20250929"
    assert normalize_model_id("qwen3.5-plus") == "qwen3.5-plus"  # dots kept for non-Claude ids
    assert family_for("claude-haiku-4-5").thinking == "budget"
    assert family_for("claude-3-5-haiku-20241022").thinking == "none"


# ---------------------------------------------------------------- 9. thinking
def test_current_claude_gets_adaptive_thinking_with_an_effort():
    body = body_of({"messages": [user()], "thinking": "low"}, DIRECT, "claude-opus-4-7")
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "low"}
    unknown = body_of({"messages": [user()], "thinking": "xhigh"}, DIRECT, "claude-opus-9")
    assert unknown["output_config"] == {"effort": "xhigh"}


def test_xhigh_becomes_max_where_the_model_lacks_it():
    # recorded: claude-opus-4-6 answers 400 "does not support effort level 'xhigh'"
    assert body_of({"messages": [user()], "thinking": "xhigh"}, DIRECT, "claude-opus-4-6")["output_config"] == {"effort": "max"}


@pytest.mark.parametrize("effort,budget", [("low", 4000), ("medium", 8000), ("high", 16000), ("xhigh", 32000)])
def test_older_models_get_budget_thinking(effort, budget):
    body = body_of({"messages": [user()], "thinking": effort, "max_tokens": 1000, "temperature": 0.3},
                   OLD_API, "claude-sonnet-4-5")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == budget + 4096
    assert body["temperature"] == 1  # thinking needs temperature 1 where sampling is accepted
    assert rules.violations(body) == []


def test_budget_fits_under_a_small_model_limit():
    body = body_of({"messages": [user()], "thinking": "max"}, OLD_API, "claude-opus-4-1")
    assert body["max_tokens"] == 32000
    assert 1024 <= body["thinking"]["budget_tokens"] < 32000


def test_models_that_do_not_think_get_no_thinking(caplog):
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": [user()], "thinking": "high"}, OLD_API, "claude-3-5-haiku-20241022")
    assert "thinking" not in body
    assert "does not think" in caplog.text
    assert body_of({"messages": [user()], "thinking": "high"}, OLD_API, "claude-haiku-4-5")["thinking"]["type"] == "enabled"


def test_thinking_with_a_forced_tool_sends_auto_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": [user()], "tools": TOOLS, "thinking": "medium", "tool_choice": "required",
                        "parallel_tool_calls": False})
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert "sent as auto" in caplog.text


def test_tool_choice_mapping():
    def tc(choice, parallel=None):
        req = {"messages": [user()], "tools": TOOLS, "tool_choice": choice}
        if parallel is not None:
            req["parallel_tool_calls"] = parallel
        return body_of(req).get("tool_choice")

    assert tc("auto") == {"type": "auto"}
    assert tc("required") == {"type": "any"}
    assert tc({"type": "function", "function": {"name": "get_weather"}}) == {"type": "tool", "name": "get_weather"}
    assert tc("auto", parallel=False) == {"type": "auto", "disable_parallel_tool_use": True}
    assert tc("required", parallel=True) == {"type": "any", "disable_parallel_tool_use": False}


def test_tool_choice_none_sends_no_tools_unless_history_has_tool_blocks():
    body = body_of({"messages": [user()], "tools": TOOLS, "tool_choice": "none"})
    assert "tools" not in body and "tool_choice" not in body
    msgs = [user(), {"role": "assistant", "tool_calls": [call("a")]}, {"role": "tool", "tool_call_id": "a", "content": "x"}]
    body = body_of({"messages": msgs, "tools": TOOLS, "tool_choice": "none"})
    # Anthropic: requests with tool_use/tool_result blocks must define tools
    assert body["tool_choice"] == {"type": "none"} and body["tools"]


# ----------------------------------------------------------- 10. betas, tools
def test_betas_are_data_per_family_and_profile():
    enc, body = encode({"messages": [user()], "tools": TOOLS, "thinking": "low"}, OLD_API, "claude-sonnet-4-5")
    assert enc.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    enc, _ = encode({"messages": [user()], "tools": TOOLS, "thinking": "low"}, DIRECT, "claude-opus-4-6")
    assert "anthropic-beta" not in enc.headers  # adaptive thinking interleaves by itself
    fast = ProviderProfile(name="a", api_mode="anthropic_messages", issuer="anthropic", anthropic_version="2026-10-21",
                           fast_mode=True, anthropic_betas=("context-1m-2025-08-07",))
    # fast mode is opt-in (a premium tier): absent unless the request asks for it
    enc, body = encode({"messages": [user()]}, fast, "claude-opus-4-6")
    assert "speed" not in body and enc.headers["anthropic-beta"] == "context-1m-2025-08-07"
    enc, body = encode({"messages": [user()], "speed": "fast"}, fast, "claude-opus-4-6")
    assert body["speed"] == "fast"
    assert enc.headers["anthropic-beta"] == "context-1m-2025-08-07,fast-mode-2026-02-01"
    assert "speed" not in encode({"messages": [user()], "speed": "fast"}, fast, "claude-sonnet-4-5")[1]


def test_fine_grained_tool_streaming_is_per_tool_and_stripped_where_rejected():
    direct = body_of({"messages": [user()], "tools": TOOLS, "stream": True})
    assert direct["tools"][0]["eager_input_streaming"] is True
    assert "eager_input_streaming" not in body_of({"messages": [user()], "tools": TOOLS, "stream": True}, MINIMAX, "MiniMax-M2")["tools"][0]
    assert "eager_input_streaming" not in body_of({"messages": [user()], "tools": TOOLS})["tools"][0]


def test_duplicate_tool_names_keep_the_first_definition(caplog):
    tools = [*TOOLS, {"type": "function", "function": {"name": "get_weather", "description": "dup"}}]
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": [user()], "tools": tools})
    assert [t["name"] for t in body["tools"]] == ["get_weather"]
    assert "duplicate" in caplog.text


# --------------------------------------------------- 11. prefill, cache budget
def test_a_trailing_assistant_turn_is_refused_on_claude_4_6_and_kept_on_older():
    msgs = [user(), {"role": "assistant", "content": "{"}]
    with pytest.raises(MessageError, match="prefill") as info:
        body_of({"messages": msgs}, DIRECT, "claude-sonnet-4-6")
    assert info.value.index == 1
    assert body_of({"messages": msgs}, OLD_API, "claude-sonnet-4-5")["messages"][-1]["content"] == [{"type": "text", "text": "{"}]


def test_more_than_four_cache_breakpoints_are_dropped_oldest_message_first(caplog):
    cc, hour = {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}
    msgs = [{"role": "system", "content": [{"type": "text", "text": "sys", "cache_control": hour}]}]
    for i in range(7):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant",
                     "content": [{"type": "text", "text": f"m{i}", "cache_control": cc}]})
    with caplog.at_level(logging.WARNING):
        body = body_of({"messages": msgs})
    assert body["system"][0]["cache_control"] == hour  # TTL kept
    marked = [m["content"][0]["text"] for m in body["messages"] if "cache_control" in m["content"][0]]
    assert marked == ["m4", "m5", "m6"]
    assert "4 cache_control breakpoints dropped" in caplog.text


def test_cache_layout_marks_system_and_the_last_three_messages():
    msgs = [{"role": "system", "content": "sys"}, user("a"), {"role": "assistant", "tool_calls": [call("x")]},
            {"role": "tool", "tool_call_id": "x", "content": "r"}, user("b")]
    laid = am.apply_cache_layout(msgs, ttl="1h")
    assert msgs[0] == {"role": "system", "content": "sys"}  # the caller's list is untouched
    body = body_of({"messages": laid, "tools": TOOLS})
    hour = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": hour}]
    assert "cache_control" not in json.dumps(body["messages"][0])
    assert body["messages"][1]["content"][-1]["cache_control"] == hour  # the tool_use turn
    result = body["messages"][2]["content"][0]  # the tool result (on it or on its last part)
    assert (result.get("cache_control") or result["content"][-1]["cache_control"]) == hour
    assert body["messages"][2]["content"][-1]["cache_control"] == hour  # the last user text
    assert rules.violations(body, version="2026-10-21") == []


# ------------------------------------------------------------ 14. schemas
def test_tool_schemas_are_normalized():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                  {"type": "object", "properties": {"b": {"anyOf": [{"type": "integer"}, {"type": "null"}],
                                                          "description": "maybe"}}, "required": ["a"]}]}}},
             {"type": "function", "function": {"name": "g"}}]
    body = body_of({"messages": [user()], "tools": tools})
    assert body["tools"][0]["input_schema"] == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer", "description": "maybe"}},
        "required": ["a"],
    }
    assert body["tools"][1]["input_schema"] == {"type": "object", "properties": {}}


def test_response_format_becomes_output_config_format():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    body = body_of({"messages": [user()], "response_format": {"type": "json_schema",
                                                              "json_schema": {"name": "x", "schema": schema}}})
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}


def test_extra_is_merged_last_and_patch_body_runs_before_it():
    class Patched(ProviderProfile):
        def patch_body(self, body, target):
            body["metadata"] = {"user_id": "patched"}
            body["service_tier"] = "auto"
            return body

    p = Patched(name="p", api_mode="anthropic_messages", anthropic_version="2023-06-01")
    body = body_of({"messages": [user()], "extra": {"service_tier": "standard_only"}}, p, "claude-sonnet-4-5")
    assert body["metadata"] == {"user_id": "patched"} and body["service_tier"] == "standard_only"


def test_bedrock_puts_the_model_in_the_path_and_the_version_in_the_body():
    bedrock = ProviderProfile(name="bedrock", api_mode="anthropic_messages", auth_style="none",
                              anthropic_version="bedrock-2023-05-31")
    enc, body = encode({"messages": [user()], "stream": True}, bedrock, "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert enc.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
    assert body["anthropic_version"] == "bedrock-2023-05-31"
    assert "model" not in body and "stream" not in body and "anthropic-version" not in enc.headers


def test_the_rules_checker_catches_broken_requests():
    bad = {"max_tokens": 10, "thinking": {"type": "enabled", "budget_tokens": 2000},
           "tool_choice": {"type": "any"}, "messages": [
               {"role": "user", "content": ""},
               {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {}}]},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "a.b", "name": "f", "input": "{}"}]},
               {"role": "user", "content": [{"type": "text", "text": "hi"},
                                            {"type": "tool_result", "tool_use_id": "zz", "content": ""}]}]}
    found = "\n".join(rules.violations(bad, version="2026-10-21", prefill=False))
    for phrase in ["must alternate", "non-empty", "match pattern", "valid dictionary", "must come first",
                   "unexpected tool_use_id", "greater than", "forces tool use", "must define tools",
                   "without tool_result"]:
        assert phrase in found, phrase
    loop = {"max_tokens": 5000, "thinking": {"type": "adaptive"}, "tools": [{"name": "f", "input_schema": {
        "type": "object", "properties": {}}}], "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]}]}
    assert rules.violations(loop) == ["Expected `thinking` or `redacted_thinking`, but found `tool_use`"]


def test_client_betas_go_only_to_anthropic_endpoints():
    req = {"messages": [user()], "metadata": {"anthropic_beta": ["context-1m-2025-08-07", "oauth-2025-04-20",
                                                                  "fine-grained-tool-streaming-2025-05-14"]}}
    enc, _ = encode(req, OLD_API, "claude-sonnet-4-5")
    assert enc.headers["anthropic-beta"] == "context-1m-2025-08-07,fine-grained-tool-streaming-2025-05-14"
    assert "anthropic-beta" not in encode(req, MINIMAX, "MiniMax-M2")[0].headers


@pytest.mark.parametrize("value,sent", [(4096.0, 4096), (float("nan"), 64000), (True, 64000), (0, 64000), (-5, 64000)])
def test_max_tokens_must_be_a_positive_finite_number(value, sent):
    assert body_of({"messages": [user()], "max_tokens": value}, OLD_API, "claude-sonnet-4-5")["max_tokens"] == sent


def test_server_tool_blocks_go_back_to_their_issuer_without_output_only_fields():
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"},
           "caller": {"type": "direct"}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    msgs = [user(), {"role": "assistant", "content": "Found it.",
                     "passthrough": [{"issuer": "anthropic", "block": use}, {"issuer": "anthropic", "block": result},
                                     {"issuer": "anthropic", "block": {"type": "citations", "citations": []}}]},
            user("thanks")]
    body = body_of({"messages": msgs})
    assert body["messages"][1]["content"] == [
        {k: v for k, v in use.items() if k != "caller"}, result, {"type": "text", "text": "Found it."}]
    assert body_of({"messages": msgs}, MINIMAX, "MiniMax-M2")["messages"][1]["content"] == [
        {"type": "text", "text": "Found it."}]


def test_user_text_beside_tool_results_stays_inside_the_tool_loop():
    """Claude Code sends [tool_result, text] in one turn: that text does not end the loop."""
    dropping = ProviderProfile(name="a", api_mode="anthropic_messages", issuer="anthropic",
                               anthropic_version="2023-06-01", drop_earlier_thinking=True)
    msgs = [user("q"), {"role": "assistant", "tool_calls": [call("t1")], "reasoning_details": [thinking()]},
            {"role": "tool", "tool_call_id": "t1", "content": "r"}, user("ok")]
    body = body_of({"messages": msgs, "tools": TOOLS, "thinking": "low"}, dropping, "claude-sonnet-4-5")
    assert body["messages"][1]["content"][0] == thinking()["block"]
    assert body["thinking"]["type"] == "enabled"
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]


def test_a_normalized_schema_shares_nothing_with_the_callers():
    from modelwire.codecs.anthropic_messages._tools import normalize_schema

    schema = {"anyOf": [{"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}],
                                                              "description": "d"}},
                         "required": ["a"]},
                        {"type": "object", "properties": {"b": {"type": "array", "items": {"type": "object"}}}}]}
    before = json.dumps(schema, sort_keys=True)
    out = normalize_schema(schema)
    assert out["type"] == "object" and set(out["properties"]) == {"a", "b"}
    assert out["properties"]["a"] == {"type": "string", "description": "d"}

    def containers(node: object) -> list[object]:
        found = [node] if isinstance(node, (dict, list)) else []
        for child in (node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()):
            found += containers(child)
        return found

    theirs = {id(c) for c in containers(schema)}
    assert not [c for c in containers(out) if id(c) in theirs]  # no dict or list shared
    out["properties"]["b"]["items"]["type"] = "changed"
    assert json.dumps(schema, sort_keys=True) == before


@pytest.mark.parametrize("source,ok", [("responses", False), ("chat_completions", False),
                                       ("anthropic_messages", True), (None, True)])
def test_a_non_function_tool_goes_out_only_to_its_own_protocol(source, ok):
    tool = {"type": "web_search", "search_context_size": "low"}
    request = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 50, "tools": [tool]}
    if source is not None:
        request["metadata"] = {"source_api": source}
    target = Target(ProviderProfile("anthropic"), "claude-sonnet-4-5", api_key="sk-ant-api03-fake-key")
    if ok:
        assert json.loads(am.encode_request(request, target).body)["tools"] == [tool]
    else:
        with pytest.raises(UnsupportedContentError, match=r"tools\[0\]: 'web_search' is a tool type of"):
            am.encode_request(request, target)
