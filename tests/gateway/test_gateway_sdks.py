"""Official openai and anthropic SDKs -> gateway -> emulator: the nine door x upstream lanes."""

from __future__ import annotations

import json
import time

import anthropic
import httpx
import openai
import pytest

GATEWAY_KEY = "gw-test-key-0123456789"

UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]
CALC = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                       "required": ["expression"]},
    },
}
CALC_ANTHROPIC = {"name": "calculator", "description": "Evaluate an arithmetic expression",
                  "input_schema": CALC["function"]["parameters"]}
CALC_RESPONSES = {"type": "function", "name": "calculator", "description": "Evaluate an arithmetic expression",
                  "parameters": CALC["function"]["parameters"]}


def oa(gateway):
    return openai.OpenAI(base_url=gateway.base_url + "/v1", api_key=GATEWAY_KEY, max_retries=0)


def an(gateway):
    return anthropic.Anthropic(base_url=gateway.base_url, api_key=GATEWAY_KEY, max_retries=0)


# ------------------------------------------------------------- chat completions door
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_door_tool_loop_non_stream(gateway, upstream):
    client = oa(gateway)
    messages = [{"role": "user", "content": "What is 17 times 23?"}]
    first = client.chat.completions.create(model=upstream, messages=messages, tools=[CALC])
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "calculator" and "17" in json.loads(call.function.arguments)["expression"]
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "391"}]
    second = client.chat.completions.create(model=upstream, messages=messages, tools=[CALC])
    assert "391" in second.choices[0].message.content
    assert second.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_door_stream(gateway, upstream):
    client = oa(gateway)
    stream = client.chat.completions.create(
        model=upstream, messages=[{"role": "user", "content": "What is 6 times 7?"}],
        stream=True, stream_options={"include_usage": True},
    )
    text, usage = "", None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        usage = chunk.usage or usage
    assert "42" in text and usage is not None and usage.completion_tokens > 0


# ------------------------------------------------------------- anthropic door
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_door_tool_loop_non_stream(gateway, upstream):
    client = an(gateway)
    messages = [{"role": "user", "content": "What is 17 times 23?"}]
    first = client.messages.create(model=upstream, max_tokens=1024, messages=messages, tools=[CALC_ANTHROPIC])
    assert first.stop_reason == "tool_use"
    use = next(b for b in first.content if b.type == "tool_use")
    assert use.name == "calculator" and "17" in use.input["expression"]
    messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "391"}]}]
    second = client.messages.create(model=upstream, max_tokens=1024, messages=messages, tools=[CALC_ANTHROPIC])
    assert "391" in "".join(b.text for b in second.content if b.type == "text")
    assert second.stop_reason == "end_turn"


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_door_stream(gateway, upstream):
    client = an(gateway)
    with client.messages.stream(model=upstream, max_tokens=512,
                                messages=[{"role": "user", "content": "What is 6 times 7?"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert "42" in text and final.stop_reason == "end_turn" and final.usage.output_tokens > 0


# ------------------------------------------------------------- responses door
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_door_tool_loop_non_stream(gateway, upstream):
    client = oa(gateway)
    inputs = [{"role": "user", "content": "What is 17 times 23?"}]
    first = client.responses.create(model=upstream, input=inputs, tools=[CALC_RESPONSES])
    call = next(i for i in first.output if i.type == "function_call")
    assert call.name == "calculator"
    inputs += [i.model_dump(exclude_none=True) for i in first.output]
    inputs.append({"type": "function_call_output", "call_id": call.call_id, "output": "391"})
    second = client.responses.create(model=upstream, input=inputs, tools=[CALC_RESPONSES])
    assert "391" in second.output_text


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_door_stream(gateway, upstream):
    client = oa(gateway)
    with client.responses.stream(model=upstream, input="What is 6 times 7?") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "42" in "".join(deltas) and "42" in final.output_text


# ------------------------------------------------------------- errors, models, auth
def test_bad_or_missing_key_is_401_in_each_shape(gateway):
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=gateway.base_url + "/v1", api_key="wrong", max_retries=0).chat.completions.create(
            model="emu-chat", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(anthropic.AuthenticationError) as info:
        anthropic.Anthropic(base_url=gateway.base_url, api_key="wrong", max_retries=0).messages.create(
            model="emu-chat", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert info.value.body["type"] == "error"


def test_unknown_model_is_404_and_invalid_json_is_400(gateway):
    with pytest.raises(openai.NotFoundError) as info:
        oa(gateway).chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert "emu-chat" in str(info.value)
    r = httpx.post(gateway.base_url + "/v1/messages", content=b"{not json",
                   headers={"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"})
    assert r.status_code == 400 and r.json()["type"] == "error"
    assert r.headers["x-request-id"].startswith("req_")


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("ask", [{"n": 2}, {"logprobs": True, "top_logprobs": 2}], ids=["n", "logprobs"])
def test_several_choices_or_logprobs_are_a_clear_400_where_they_would_be_dropped(gateway, upstream, ask):
    # translated answers carry one message: choices 1.. and log-probabilities would be lost
    with pytest.raises(openai.BadRequestError) as info:
        oa(gateway).chat.completions.create(model=upstream, messages=[{"role": "user", "content": "hi"}], **ask)
    assert ("n=2" if "n" in ask else "logprobs") in info.value.message
    assert "send 2 requests" in info.value.message or "n" not in ask


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_logprobs_are_a_clear_400_where_they_would_be_dropped(gateway, upstream):
    with pytest.raises(openai.BadRequestError) as info:
        oa(gateway).responses.create(model=upstream, input="hi", include=["message.output_text.logprobs"])
    assert "log-probabilities" in info.value.message


@pytest.mark.parametrize("upstream", ["emu-chat", "emu-responses"])
def test_an_anthropic_server_tool_toward_another_protocol_is_a_400_that_names_it(gateway, upstream):
    # Claude Code's web search is a server tool Anthropic runs: a Chat Completions or
    # Responses upstream has no such tool (before: its puzzling "missing tools[0].function")
    with pytest.raises(anthropic.BadRequestError) as info:
        an(gateway).messages.create(model=upstream, max_tokens=100, messages=[{"role": "user", "content": "hi"}],
                                    tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}])
    assert "'web_search_20250305' (web_search) is a tool type of Anthropic Messages" in info.value.message


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_stop_sequences_reach_every_upstream_even_one_without_them(gateway, upstream):
    # the Responses API has no stop sequences: the gateway's Client ends the text itself
    ask = [{"role": "user", "content": "What is 17 times 23?"}]
    done = oa(gateway).chat.completions.create(model=upstream, messages=ask, stop=["391."])
    assert done.choices[0].message.content == "17 * 23 = " and done.choices[0].finish_reason == "stop"
    chunks = list(oa(gateway).chat.completions.create(model=upstream, messages=ask, stop="391.", stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "17 * 23 = "
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    msg = an(gateway).messages.create(model=upstream, max_tokens=100, messages=ask, stop_sequences=["391."])
    # a Chat Completions upstream does not say that a stop sequence ended its text
    assert msg.content[0].text == "17 * 23 = "
    assert msg.stop_reason == ("end_turn" if upstream == "emu-chat" else "stop_sequence")
    # and which sequence it was, whole and streamed
    assert msg.stop_sequence == (None if upstream == "emu-chat" else "391.")
    with an(gateway).messages.stream(model=upstream, max_tokens=100, messages=ask,
                                     stop_sequences=["nope", "391."]) as s:
        final = s.get_final_message()
    assert final.content[0].text == "17 * 23 = "
    assert (final.stop_reason, final.stop_sequence) == (
        ("end_turn", None) if upstream == "emu-chat" else ("stop_sequence", "391."))


@pytest.mark.parametrize("state", [{"previous_response_id": "resp_123"}, {"conversation": "conv_123"},
                                   {"conversation": {"id": "conv_123"}}])
def test_server_side_state_is_a_clear_400(gateway, state):
    # the Conversations API's conversation, like previous_response_id, lives on OpenAI's
    # servers: through a stateless gateway it would be silently lost
    with pytest.raises(openai.BadRequestError) as info:
        oa(gateway).responses.create(model="emu-chat", input="hi", **state)
    assert "stateless" in str(info.value) and next(iter(state)) in str(info.value)


@pytest.mark.parametrize("upstream", ["emu-chat", "emu-responses"])
def test_a_native_setting_the_answer_depends_on_is_refused_toward_another_protocol(gateway, upstream):
    # mcp_servers gives the model tools Anthropic runs: left out, the model would answer
    # without them; bookkeeping fields (metadata) are still left out quietly
    with pytest.raises(anthropic.BadRequestError) as info:
        an(gateway).messages.create(model=upstream, max_tokens=100, messages=[{"role": "user", "content": "hi"}],
                                    extra_body={"mcp_servers": [{"type": "url", "url": "https://mcp.example",
                                                                 "name": "x"}]})
    assert "mcp_servers: a setting of Anthropic Messages that" in info.value.message
    ok = an(gateway).messages.create(model=upstream, max_tokens=100, metadata={"user_id": "u1"},
                                     messages=[{"role": "user", "content": "hi"}])
    assert ok.content[0].text


@pytest.mark.parametrize("upstream", ["emu-anthropic", "emu-responses", "emu-chat"])
def test_allowed_tools_limits_the_callable_tools_on_every_upstream(gateway, emulator_clean, upstream):
    # OpenAI's allowed_tools: Responses takes it as it is; Anthropic and an
    # OpenAI-compatible endpoint without it get only the allowed tools
    other = {"type": "function", "function": {"name": "weather", "description": "Weather in a city",
                                              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
    done = oa(gateway).chat.completions.create(
        model=upstream, messages=[{"role": "user", "content": "What is 17 times 23?"}], tools=[CALC, other],
        tool_choice={"type": "allowed_tools", "allowed_tools": {
            "mode": "required", "tools": [{"type": "function", "function": {"name": "calculator"}}]}})
    assert [c.function.name for c in done.choices[0].message.tool_calls] == ["calculator"]
    sent = emulator_clean.requests()["requests"][-1]["body"]
    names = [t.get("name") or t.get("function", {}).get("name") for t in sent["tools"]]
    assert names == (["calculator", "weather"] if upstream == "emu-responses" else ["calculator"])


def test_models_listing_in_both_shapes(gateway):
    ids = [m.id for m in oa(gateway).models.list()]
    assert {"emu-chat", "emu-anthropic", "emu-responses", "claude-sonnet-4-6"} <= set(ids)
    page = an(gateway).models.list()
    assert "emu-anthropic" in [m.id for m in page.data]


def test_aliases_serve_claude_code_model_ids_and_headers_say_what_served(gateway):
    raw = an(gateway).messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "hello"}])
    assert raw.headers["x-modelwire-model"].startswith("emulator-anthropic/")
    assert raw.headers["x-modelwire-attempts"] == "1" and raw.headers["x-modelwire-fallbacks"] == "0"
    assert float(raw.headers["x-modelwire-overhead-ms"]) >= 0


def test_count_tokens_is_estimated_and_says_so(gateway):
    # claude-haiku-4-5 is an alias of a Chat Completions upstream: nobody there counts
    r = httpx.post(gateway.base_url + "/v1/messages/count_tokens?beta=true",
                   json={"model": "claude-haiku-4-5", "messages": [{"role": "user", "content": "hello world"}]},
                   headers={"authorization": f"Bearer {GATEWAY_KEY}", "anthropic-version": "2026-10-21"})
    assert r.status_code == 200 and r.json()["input_tokens"] > 0
    assert r.headers["x-modelwire-token-count"] == "estimated"


def test_count_tokens_asks_an_anthropic_upstream_that_counts(gateway, emulator):
    body = {"model": "claude-sonnet-4-6", "system": "You are terse.",
            "messages": [{"role": "user", "content": "hello world, " * 50}],
            "tools": [{"name": "calc", "description": "adds", "input_schema": {
                "type": "object", "properties": {"a": {"type": "number"}}}}]}
    log = emulator.requests()["requests"]
    since = log[-1]["n"] if log else 0
    r = an(gateway).messages.count_tokens(**body)
    sent = emulator.requests(since, endpoint="count_tokens")["requests"]
    assert len(sent) == 1 and sent[0]["status"] == 200
    # encoded for the upstream: its model id, no max_tokens (the counter rejects it)
    assert sent[0]["body"]["model"] == "claude-sonnet-4-6" and "max_tokens" not in sent[0]["body"]
    assert sent[0]["body"]["tools"][0]["name"] == "calc"
    # the emulator's own count for the same request (the gateway sent its model id)
    direct = httpx.post(emulator.anthropic_base_url() + "/v1/messages/count_tokens",
                        json=body, headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"})
    assert direct.status_code == 200
    assert r.input_tokens == direct.json()["input_tokens"]
    raw = httpx.post(gateway.base_url + "/v1/messages/count_tokens", json=body,
                     headers={"authorization": f"Bearer {GATEWAY_KEY}", "anthropic-version": "2026-10-21"})
    assert raw.headers["x-modelwire-token-count"] == "upstream"


def test_count_tokens_unknown_model_is_still_estimated(gateway):
    r = httpx.post(gateway.base_url + "/v1/messages/count_tokens",
                   json={"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]},
                   headers={"authorization": f"Bearer {GATEWAY_KEY}", "anthropic-version": "2023-06-01"})
    assert r.status_code == 200 and r.headers["x-modelwire-token-count"] == "estimated"


def test_health_needs_no_key(gateway):
    r = httpx.get(gateway.base_url + "/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"


def test_access_log_has_the_facts_and_no_secrets(gateway, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="modelwire.gateway.access"):
        raw = oa(gateway).chat.completions.with_raw_response.create(
            model="emu-chat", messages=[{"role": "user", "content": "a secret question about sk-ant-zzzz"}])
        bad = httpx.post(gateway.base_url + "/v1/chat/completions", json={"model": "nope", "messages": [{"role": "user", "content": "hi"}]},
                         headers={"authorization": f"Bearer {GATEWAY_KEY}"})
        rid, bad_rid = raw.headers["x-request-id"], bad.headers["x-request-id"]
        # the line is written once the answer has left: wait for both (bounded), never sleep blind
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            lines = [r.getMessage() for r in caplog.records if r.name == "modelwire.gateway.access"]
            if all(any(i in line for line in lines) for i in (rid, bad_rid)):
                break
            time.sleep(0.01)
    ok = next(line for line in lines if rid in line)
    assert "model=emu-chat" in ok and "upstream=emulator/emulator-1" in ok and "status=200" in ok
    assert "latency_ms=" in ok and "tokens=" in ok
    assert any(bad_rid in line and "status=404" in line for line in lines), lines
    text = "\n".join(lines)
    assert GATEWAY_KEY not in text and "secret question" not in text and "sk-ant" not in text


CLOCK = {"type": "function", "function": {"name": "clock", "description": "Get the current time on the clock",
                                          "parameters": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_parallel_tool_calls_through_every_door(gateway, upstream):
    question = "What is 17 times 23, and what time is it now on the clock?"
    chat = oa(gateway).chat.completions.create(
        model=upstream, messages=[{"role": "user", "content": question}], tools=[CALC, CLOCK])
    assert sorted(c.function.name for c in chat.choices[0].message.tool_calls) == ["calculator", "clock"]
    msg = an(gateway).messages.create(
        model=upstream, max_tokens=512, messages=[{"role": "user", "content": question}],
        tools=[CALC_ANTHROPIC, {"name": "clock", "description": "Get the current time on the clock",
                                "input_schema": {"type": "object", "properties": {}}}])
    assert sorted(b.name for b in msg.content if b.type == "tool_use") == ["calculator", "clock"]
    resp = oa(gateway).responses.create(
        model=upstream, input=question,
        tools=[CALC_RESPONSES, {"type": "function", "name": "clock", "description": "Get the current time on the clock",
                                "parameters": {"type": "object", "properties": {}}}])
    assert sorted(i.name for i in resp.output if i.type == "function_call") == ["calculator", "clock"]


def test_count_tokens_falls_back_to_the_estimate_when_the_counter_fails(gateway, emulator_clean):
    emulator_clean.set_faults([{"fault": "overloaded", "endpoint": "count_tokens", "times": 1}])
    r = httpx.post(gateway.base_url + "/v1/messages/count_tokens",
                   json={"model": "claude-sonnet-4-6", "messages": [{"role": "user", "content": "hello"}]},
                   headers={"authorization": f"Bearer {GATEWAY_KEY}", "anthropic-version": "2023-06-01"})
    assert r.status_code == 200 and r.json()["input_tokens"] > 0
    assert r.headers["x-modelwire-token-count"] == "estimated"
    # the fault fired on the upstream's counter: the gateway did ask it
    assert emulator_clean.requests(endpoint="count_tokens")["requests"][-1]["status"] == 529


# --------------------------------------------------- custom tools (Codex's apply_patch)
APPLY_PATCH = {"type": "custom", "name": "apply_patch", "description": "Apply a patch to the files",
               "format": {"type": "grammar", "syntax": "lark",
                          "definition": 'start: "*** Begin Patch" LF hunk+ "*** End Patch"'}}
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch"


@pytest.mark.parametrize("upstream", ["emu-chat", "emu-anthropic"])
@pytest.mark.parametrize("stream", [False, True])
def test_custom_tools_reach_upstreams_without_them_and_come_back_as_custom_calls(
        gateway, emulator_clean, upstream, stream):
    # Codex sends apply_patch as a Responses custom tool (free text in, no JSON): toward a
    # Chat Completions or Anthropic model it is a function of one text argument, with the
    # grammar in its description; the call comes back as a custom_tool_call item
    client = oa(gateway)
    inputs = [{"role": "user", "content": f"Use apply_patch to apply this patch: {PATCH}"}]
    if stream:
        with client.responses.stream(model=upstream, input=inputs, tools=[APPLY_PATCH]) as s:
            kinds = [e.type for e in s]
            first = s.get_final_response()
        assert "response.custom_tool_call_input.done" in kinds and "response.function_call_arguments.delta" not in kinds
    else:
        first = client.responses.create(model=upstream, input=inputs, tools=[APPLY_PATCH])
    call = next(i for i in first.output if i.type == "custom_tool_call")
    assert (call.name, call.input) == ("apply_patch", PATCH)
    sent = emulator_clean.requests()["requests"][-1]["body"]
    tool = sent["tools"][0]
    schema = tool["function"]["parameters"] if upstream == "emu-chat" else tool["input_schema"]
    about = tool["function"]["description"] if upstream == "emu-chat" else tool["description"]
    assert schema["required"] == ["input"] and 'start: "*** Begin Patch"' in about
    # the next turn: the custom call and its output go back as a tool call and its result
    inputs += [i.model_dump(exclude_none=True) for i in first.output]
    inputs.append({"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done: added hello.txt"})
    second = client.responses.create(model=upstream, input=inputs, tools=[APPLY_PATCH])
    assert "Done: added hello.txt" in second.output_text
    sent = emulator_clean.requests()["requests"][-1]["body"]["messages"]
    if upstream == "emu-chat":
        assert json.loads(sent[-2]["tool_calls"][0]["function"]["arguments"]) == {"input": PATCH}
        assert sent[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": "Done: added hello.txt"}
    else:
        assert sent[-2]["content"][-1]["input"] == {"input": PATCH}
        assert sent[-1]["content"][0]["tool_use_id"] == call.call_id


def test_a_custom_tool_choice_names_the_function(gateway, emulator_clean):
    oa(gateway).responses.create(model="emu-chat", input="Use apply_patch to apply this patch: " + PATCH,
                                 tools=[APPLY_PATCH], tool_choice={"type": "custom", "name": "apply_patch"})
    sent = emulator_clean.requests()["requests"][-1]["body"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "apply_patch"}}


def test_models_retrieve_through_both_sdks(gateway):
    # the SDKs' models.retrieve: GET /v1/models/{id}, in each door's shape, 404 in it too
    assert oa(gateway).models.retrieve("emu-chat").id == "emu-chat"
    assert oa(gateway).models.retrieve("openai/gpt-5-mini").id == "openai/gpt-5-mini"  # allow_provider_models
    got = an(gateway).models.retrieve("emu-anthropic")
    assert (got.id, got.type) == ("emu-anthropic", "model")
    with pytest.raises(openai.NotFoundError) as info:
        oa(gateway).models.retrieve("no-such-model")
    assert "unknown model 'no-such-model'" in info.value.message
    with pytest.raises(anthropic.NotFoundError) as info2:
        an(gateway).models.retrieve("no-such-model")
    assert info2.value.body["type"] == "error"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=gateway.base_url + "/v1", api_key="wrong", max_retries=0).models.retrieve("emu-chat")
    # a literal route pattern is just an unknown id, never a crash
    r = httpx.get(gateway.base_url + "/v1/models/{model_id:path}", headers={"authorization": f"Bearer {GATEWAY_KEY}"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
