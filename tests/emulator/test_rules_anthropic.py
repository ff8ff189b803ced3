"""Each Anthropic rule: a violating request gets the real API's status and error shape,
and its valid twin is accepted."""

from __future__ import annotations

import copy

import pytest

from .conftest import anthropic_headers

CALC = {"name": "calculator", "description": "Evaluate arithmetic",
        "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}}}}
USER = {"role": "user", "content": "What is 17 times 23?"}
USE = {"type": "tool_use", "id": "toolu_01A", "name": "calculator",
       "input": {"expression": "17 * 23"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "391"}
SYSTEM = {"role": "system", "content": "Answer in one word."}
USE2 = {**USE, "id": "toolu_01B"}
RESULT2 = {**RESULT, "tool_use_id": "toolu_01B"}
FOREIGN_SIGNATURE = ("EqEECkYICxgCKkAo3UA4WwDbB8ihhpykVCsPx6iMzwNTNP8dePIgYjNpu2EWrt5JbApWWONEZaf5"
                     "w46939Vu1SDU1//mDyr2/Vw+EgzsGM/71Y3P0MXKjXUaDHkHCRdukfBjp1m8TSIw")


def base(**over):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 2048, "messages": [USER]}
    body.update(over)
    return body


def loop(assistant_content, user_content=None):
    return [USER, {"role": "assistant", "content": assistant_content},
            {"role": "user", "content": user_content or [RESULT]}]


def loop2(assistant_content):
    return [USER, {"role": "assistant", "content": assistant_content}, {"role": "user", "content": [RESULT, RESULT2]}]


def place(ordinal, tools_before):
    from modelwire.emulator.signing import thinking_place

    return thinking_place(ordinal, tools_before)


def thinking(emu, text="I will call the calculator.", ordinal=0):
    return {"type": "thinking", "thinking": text,
            "signature": emu.backend.signer.sign_thinking(text, ordinal)}


BUDGET = {"type": "enabled", "budget_tokens": 1024}

# (id, bad body, good body, expected message fragment, version)
CASES = [
    ("tool_result_without_tool_use",
     lambda e: base(messages=loop([{"type": "text", "text": "ok"}])),
     lambda e: base(tools=[CALC], messages=loop([USE])),
     "unexpected `tool_use_id` found in `tool_result` blocks", "2023-06-01"),
    ("tool_use_without_result",
     lambda e: base(tools=[CALC], messages=loop([USE], [{"type": "text", "text": "go on"}])),
     lambda e: base(tools=[CALC], messages=loop([USE])),
     "`tool_use` ids were found without `tool_result` blocks immediately after", "2023-06-01"),
    ("tool_result_not_first",
     lambda e: base(tools=[CALC], messages=loop([USE], [{"type": "text", "text": "here"}, RESULT])),
     lambda e: base(tools=[CALC], messages=loop([USE], [RESULT, {"type": "text", "text": "here"}])),
     "without `tool_result` blocks immediately after", "2023-06-01"),
    ("empty_content",
     lambda e: base(messages=[{"role": "user", "content": []}]),
     lambda e: base(),
     "all messages must have non-empty content", "2023-06-01"),
    ("empty_text_block",
     lambda e: base(messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}]),
     lambda e: base(messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
     "text content blocks must be non-empty", "2023-06-01"),
    ("max_tokens_missing",
     lambda e: {"model": "claude-sonnet-4-6", "messages": [USER]},
     lambda e: base(),
     "max_tokens: Field required", "2023-06-01"),
    ("duplicate_tool_names",
     lambda e: base(tools=[CALC, CALC]),
     lambda e: base(tools=[CALC, dict(CALC, name="other")]),
     "Tool names must be unique", "2023-06-01"),
    ("five_cache_breakpoints",
     lambda e: base(system=[{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}}
                            for i in range(5)]),
     lambda e: base(system=[{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}}
                            for i in range(4)]),
     "A maximum of 4 blocks with cache_control may be provided. Found 5.", "2023-06-01"),
    ("modified_thinking",
     lambda e: base(tools=[CALC], thinking=BUDGET,
                    messages=loop([dict(thinking(e), thinking="changed"), USE])),
     lambda e: base(tools=[CALC], thinking=BUDGET, messages=loop([thinking(e), USE])),
     "messages.1.content.0: Invalid `signature` in `thinking` block", "2023-06-01"),
    ("foreign_signature",
     lambda e: base(tools=[CALC], thinking=BUDGET,
                    messages=loop([dict(thinking(e), signature=FOREIGN_SIGNATURE), USE])),
     lambda e: base(tools=[CALC], thinking=BUDGET, messages=loop([thinking(e), USE])),
     "Invalid `signature` in `thinking` block", "2023-06-01"),
    ("reordered_thinking",
     lambda e: base(tools=[CALC], thinking=BUDGET, messages=loop(
         [thinking(e, "second", 1), thinking(e, "first", 0), USE])),
     lambda e: base(tools=[CALC], thinking=BUDGET, messages=loop(
         [thinking(e, "first", 0), thinking(e, "second", 1), USE])),
     "Invalid `signature` in `thinking` block", "2023-06-01"),
    ("thinking_dropped_in_tool_loop",
     lambda e: base(tools=[CALC], thinking=BUDGET, messages=loop([USE])),
     lambda e: base(tools=[CALC], thinking=BUDGET, messages=loop([thinking(e), USE])),
     "Expected `thinking` or `redacted_thinking`, but found `tool_use`", "2023-06-01"),
    ("budget_below_1024",
     lambda e: base(thinking={"type": "enabled", "budget_tokens": 1000}),
     lambda e: base(thinking=BUDGET),
     "budget_tokens: Input should be greater than or equal to 1024", "2023-06-01"),
    ("budget_not_below_max_tokens",
     lambda e: base(max_tokens=1024, thinking=BUDGET),
     lambda e: base(max_tokens=1025, thinking=BUDGET),
     "`max_tokens` must be greater than `thinking.budget_tokens`", "2023-06-01"),
    ("thinking_with_forced_tool_choice",
     lambda e: base(tools=[CALC], thinking=BUDGET, tool_choice={"type": "any"}),
     lambda e: base(tools=[CALC], thinking=BUDGET, tool_choice={"type": "auto"}),
     "Thinking may not be enabled when tool_choice forces tool use.", "2023-06-01"),
    ("adaptive_only_family_rejects_budget",
     lambda e: base(model="claude-opus-4-7", thinking=BUDGET),
     lambda e: base(model="claude-opus-4-7", thinking={"type": "adaptive"}),
     '"thinking.type.enabled" is not supported for this model', "2023-06-01"),
    ("prefill_on_claude_4_6",
     lambda e: base(messages=[USER, {"role": "assistant", "content": "The answer is"}]),
     lambda e: base(model="claude-sonnet-4-5",
                    messages=[USER, {"role": "assistant", "content": "The answer is"}]),
     "This model does not support assistant message prefill", "2023-06-01"),
    ("sampling_under_2026_10_21",
     lambda e: base(temperature=0.5),
     lambda e: base(),
     "temperature: this parameter is not supported with anthropic-version 2026-10-21",
     "2026-10-21"),
    ("document_in_assistant_under_2026_10_21",
     lambda e: base(model="claude-sonnet-4-5", messages=[USER, {"role": "assistant", "content": [
         {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                         "data": "x"}}]}, {"role": "user", "content": "go"}]),
     lambda e: base(messages=[{"role": "user", "content": [
         {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                         "data": "x"}}, {"type": "text", "text": "summarize"}]}]),
     "`document` blocks are not allowed in assistant messages", "2026-10-21"),
    ("citations_on_user_text_under_2026_10_21",
     lambda e: base(messages=[{"role": "user", "content": [
         {"type": "text", "text": "quote", "citations": [{"type": "char_location"}]}]}]),
     lambda e: base(messages=[{"role": "user", "content": [{"type": "text", "text": "quote"}]}]),
     "citations are not allowed on user text blocks", "2026-10-21"),
    ("mid_conversation_system_on_a_model_without_it",
     lambda e: base(model="claude-sonnet-4-6", messages=[USER, SYSTEM]),
     lambda e: base(model="claude-opus-4-8", messages=[USER, SYSTEM]),
     "'system' is not supported on this model", "2023-06-01"),
    ("mid_conversation_system_first",
     lambda e: base(model="claude-opus-4-8", messages=[SYSTEM, USER]),
     lambda e: base(model="claude-opus-4-8", messages=[USER, SYSTEM]),
     "must immediately follow a `user` message", "2023-06-01"),
    ("mid_conversation_system_before_a_user_turn",
     lambda e: base(model="claude-opus-4-8", messages=[USER, SYSTEM, {"role": "user", "content": "go"}]),
     lambda e: base(model="claude-opus-4-8", messages=[USER, SYSTEM, {"role": "assistant", "content": "ok"},
                                                       {"role": "user", "content": "go"}]),
     "must be the last message or be followed by an `assistant` message", "2023-06-01"),
    ("mid_conversation_system_with_an_image",
     lambda e: base(model="claude-opus-4-8", messages=[USER, {"role": "system", "content": [
         {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}]),
     lambda e: base(model="claude-opus-4-8", messages=[USER, {"role": "system", "content": [
         {"type": "text", "text": "be brief"}]}]),
     "accept non-empty text blocks only", "2023-06-01"),
    ("interleaved_thinking_regrouped",
     lambda e: base(model="claude-opus-4-8", tools=[CALC], thinking={"type": "adaptive"}, messages=loop2(
         [thinking(e, "first", 0), thinking(e, "second", place(1, 1)), USE, USE2])),
     lambda e: base(model="claude-opus-4-8", tools=[CALC], thinking={"type": "adaptive"}, messages=loop2(
         [thinking(e, "first", 0), USE, thinking(e, "second", place(1, 1)), USE2])),
     "Invalid `signature` in `thinking` block", "2023-06-01"),
    ("temperature_not_1_with_budget_thinking_under_2023_06_01",
     lambda e: base(thinking=BUDGET, temperature=0.7),
     lambda e: base(thinking=BUDGET, temperature=1),
     "`temperature` may only be set to 1 when thinking is enabled", "2023-06-01"),
]


@pytest.mark.parametrize(("bad", "good", "fragment", "version"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_rejects_violation_and_accepts_valid_twin(emu, http, bad, good, fragment, version):
    r = http.post("/p/anthropic/v1/messages", json=bad(emu), headers=anthropic_headers(version))
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert fragment in body["error"]["message"]
    assert body["request_id"] == r.headers["request-id"]
    ok = http.post("/p/anthropic/v1/messages", json=good(emu), headers=anthropic_headers(version))
    assert ok.status_code == 200, ok.text
    assert ok.json()["type"] == "message"


def test_anthropic_profile_requires_the_version_header(http):
    headers = {"x-api-key": "sk-test-key-123456"}
    r = http.post("/p/anthropic/v1/messages", json=base(), headers=headers)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "anthropic-version: header is required"
    assert http.post("/v1/messages", json=base(), headers=headers).status_code == 200  # lenient


def test_unknown_version_is_rejected(http):
    r = http.post("/v1/messages", json=base(), headers=anthropic_headers("2024-01-01"))
    assert r.status_code == 400 and "invalid version" in r.json()["error"]["message"]


def test_deepseek_anthropic_endpoint_accepts_unsigned_thinking(http):
    body = base(tools=[CALC], thinking=BUDGET, messages=loop(
        [{"type": "thinking", "thinking": "plan", "signature": ""}, USE]))
    assert http.post("/p/deepseek/v1/messages", json=body,
                     headers=anthropic_headers()).status_code == 200
    assert http.post("/p/anthropic/v1/messages", json=copy.deepcopy(body),
                     headers=anthropic_headers()).status_code == 400


def test_signatures_verify_across_instances_with_the_same_key():
    import httpx

    from modelwire.emulator import Emulator

    with Emulator(signing_key="shared-secret") as one, Emulator(signing_key="shared-secret") as two:
        h = anthropic_headers()
        first = httpx.post(one.anthropic_base_url() + "/v1/messages", headers=h, json=base(
            tools=[CALC], thinking=BUDGET)).json()
        follow = base(tools=[CALC], thinking=BUDGET, messages=[
            USER, {"role": "assistant", "content": first["content"]},
            {"role": "user", "content": [{"type": "tool_result",
                                          "tool_use_id": first["content"][-1]["id"],
                                          "content": "391"}]}])
        r = httpx.post(two.anthropic_base_url() + "/v1/messages", headers=h, json=follow)
        assert r.status_code == 200, r.text
        assert "391" in r.json()["content"][-1]["text"]
