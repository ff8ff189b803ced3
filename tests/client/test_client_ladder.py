"""The failure → action ladder driven through real HTTP against the emulator: each
fault, step by step, observed in the emulator's request log.

Backoff waits are recorded by an injected sleeper (never really slept); socket
timeouts are short real ones (0.3 s). Faults are filtered by the test's own model
name; answers no fault produces (any status, body, headers) come from script mode.
"""

from __future__ import annotations

import email.utils
import time

import pytest

from modelwire import (
    BadRequestError,
    BillingError,
    Client,
    FallbackExhaustedError,
    MessageError,
    RateLimitError,
    ReadTimeoutError,
    ServerError,
    StreamInterruptedError,
    UnsupportedContentError,
)
from modelwire.config import config_from_dict
from modelwire.events import TextDelta
from modelwire.resilience import RetryPolicy
from modelwire.transport import Timeouts

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
ANSWER = 'You asked: "hi". This is a deterministic answer from the modelwire emulator.'
FULL = "Hello from the scripted provider"
OK = {"text": FULL}
STEADY = RetryPolicy(jitter=0)
SHORT = Timeouts(connect=1.0, read=0.3, stale=0.3)


def _client(wire, sleeps, mode="chat_completions", **kw):
    kw.setdefault("retry", STEADY)
    return Client(f"custom/{wire.model}", base_url=wire.base_url(mode), api_mode=mode,
                  api_key=KEY, sleep=sleeps, **kw)


def _text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _rate_limited(headers=None, message="Rate limit reached"):
    return {"status": 429, "headers": headers or {},
            "error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}}


def _http_date(seconds_from_now):
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


def _rfc3339(seconds_from_now):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds_from_now))


@pytest.mark.parametrize(
    ("headers", "message", "expected", "tolerance"),
    [
        ({"retry-after-ms": "1500"}, None, 1.5, 0.0),
        ({"retry-after": "3"}, None, 3.0, 0.0),
        ({"retry-after": "HTTPDATE"}, None, 30.0, 2.0),
        ({"x-ratelimit-reset-requests": "20ms"}, None, 0.02, 0.0),
        ({"anthropic-ratelimit-requests-reset": "RFC3339"}, None, 20.0, 2.0),
        ({}, "Too many requests, retry after 7 seconds", 7.0, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, None, 0.25, 0.0),
    ],
    ids=["retry-after-ms", "retry-after-seconds", "retry-after-http-date",
         "openai-reset-duration", "anthropic-reset-timestamp", "body-hint", "ms-wins"],
)
def test_429_waits_as_long_as_the_server_says_then_succeeds(wire, sleeps, headers, message,
                                                            expected, tolerance):
    headers = {k: (_http_date(30) if v == "HTTPDATE" else _rfc3339(20) if v == "RFC3339" else v)
               for k, v in headers.items()}
    wire.script(_rate_limited(headers, message or "Rate limit reached"), OK)
    with _client(wire, sleeps) as client:
        done = client.complete(HI)
    assert done.text == FULL
    assert len(sleeps) == 1 and abs(sleeps[0] - expected) <= tolerance
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
    assert "RateLimitError" in done.attempts[0].error
    assert [r["status"] for r in wire.requests()] == [429, 200]


def test_each_attempt_uses_its_own_responses_hint(wire, sleeps):
    wire.fault("rate_limit", retry_after=4, times=1)
    wire.fault("rate_limit", retry_after=1, times=1)
    with _client(wire, sleeps) as client:
        client.complete(HI)
    assert sleeps == [4.0, 1.0]


def test_429_without_hint_backs_off_exponentially_until_attempts_are_spent(wire, sleeps):
    wire.script(*[_rate_limited() for _ in range(3)])
    with (
        _client(wire, sleeps, retry=RetryPolicy(attempts=3, jitter=0)) as client,
        pytest.raises(RateLimitError),
    ):
        client.complete(HI)
    assert sleeps == [2.0, 4.0]
    assert len(wire.requests()) == 3


@pytest.mark.parametrize(("mode", "fault", "script", "wait"), [
    ("chat_completions", {"fault": "server_error"}, None, 2.0),
    ("chat_completions", None, {"status": 502, "body": "bad gateway"}, 2.0),
    ("anthropic_messages", {"fault": "overloaded", "retry_after_form": "none"}, None, 2.0),
    ("responses", {"fault": "unavailable", "retry_after": 3}, None, 3.0),
], ids=["500", "502", "529-anthropic", "503-responses"])
def test_server_errors_and_overload_are_retried_on_the_same_model(wire, sleeps, mode, fault,
                                                                 script, wait):
    if fault:
        rule = dict(fault)
        wire.fault(rule.pop("fault"), requests=[1], **rule)
    else:
        wire.script(script, OK)
    with _client(wire, sleeps, mode) as client:
        stream = client.stream(HI)
        events = list(stream)
    expected = ANSWER if fault else FULL
    assert _text(events) == expected  # output once: the failed try sent nothing to the caller
    assert sleeps == [wait]  # backoff, or the 503's retry-after
    assert [a.outcome for a in stream.completion.attempts] == ["retried", "ok"]
    assert len(wire.requests()) == 2


def test_402_without_fallback_raises_billing_at_once(wire, sleeps):
    wire.fault("quota")
    with _client(wire, sleeps) as client, pytest.raises(BillingError):
        client.complete(HI)
    assert sleeps == [] and len(wire.requests()) == 1


@pytest.mark.parametrize("mode", ["chat_completions", "anthropic_messages", "responses"])
def test_reset_before_the_first_byte_is_retried(wire, sleeps, mode):
    wire.fault("reset_before", requests=[1])
    with _client(wire, sleeps, mode) as client:
        stream = client.stream(HI)
        assert _text(list(stream)) == ANSWER
    assert "StreamInterruptedError" in stream.completion.attempts[0].error
    assert len(wire.requests()) == 2


def test_reset_after_the_first_event_raises_with_the_partial_result(wire, sleeps):
    wire.fault("close_mid_stream", after=3)
    with _client(wire, sleeps) as client:
        seen = []
        with pytest.raises(StreamInterruptedError) as info:
            for event in client.stream(HI):
                seen.append(event)  # noqa: PERF402 (kept as they arrive: the error cuts in)
    partial = info.value.partial
    assert partial is not None
    assert partial.text == _text(seen)
    assert partial.text and ANSWER.startswith(partial.text) and partial.text != ANSWER
    assert partial.tool_calls == []
    assert len(wire.requests()) == 1  # never retried after output reached the caller
    assert sleeps == []


def test_partial_tool_calls_are_never_handed_out_as_complete(wire, sleeps):
    # arguments stream in 8-character fragments: the cut after 5 chunks lands after the
    # call's start and at least one fragment, well before the call ends
    wire.script({"text": "Calling now", "tool_calls": [
        {"name": "lookup", "arguments": {"q": "x" * 60}}]})
    wire.fault("close_mid_stream", after=5)
    with _client(wire, sleeps) as client, pytest.raises(StreamInterruptedError) as info:
        list(client.stream(HI))
    assert info.value.partial.text == "Calling now"
    assert info.value.partial.tool_calls == []


def test_a_stall_past_the_read_timeout_is_retried(wire, sleeps):
    wire.fault("hang", seconds=3, requests=[1])
    with _client(wire, sleeps, timeout=SHORT) as client:
        stream = client.stream(HI)
        assert _text(list(stream)) == ANSWER
    assert "ReadTimeoutError" in stream.completion.attempts[0].error


def test_a_stale_stream_after_output_raises_a_timeout_with_partial(wire, sleeps):
    wire.fault("stall", after=3, seconds=3)
    with (
        _client(wire, sleeps, timeout=SHORT) as client,
        pytest.raises(ReadTimeoutError) as info,
    ):
        list(client.stream(HI))
    partial = info.value.partial.text
    assert partial and ANSWER.startswith(partial) and partial != ANSWER
    assert len(wire.requests()) == 1


@pytest.mark.parametrize("fault", [{"fault": "malformed_sse", "after": 0},
                                   {"fault": "empty_stream"}], ids=["malformed", "empty"])
def test_malformed_or_empty_stream_is_retried(wire, sleeps, fault):
    rule = dict(fault)
    wire.fault(rule.pop("fault"), requests=[1], **rule)
    with _client(wire, sleeps) as client:
        stream = client.stream(HI)
        assert _text(list(stream)) == ANSWER
    assert len(wire.requests()) == 2
    assert [a.outcome for a in stream.completion.attempts] == ["retried", "ok"]


def test_caller_errors_raise_without_retry(wire, sleeps):
    wire.script({"status": 400, "error": {"message": "Invalid value for 'temperature'",
                                          "type": "invalid_request_error"}})
    with _client(wire, sleeps) as client, pytest.raises(BadRequestError) as info:
        client.complete(HI)
    assert info.value.status == 400 and info.value.provider == "custom"
    assert len(wire.requests()) == 1


# ------------------------------------------------------------------ signature 400
def _thinking_history(wire):
    issuer = f"custom:{wire.base_url('anthropic_messages')}"
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "reasoning_details": [
            {"issuer": issuer, "block": {"type": "thinking", "thinking": "mull",
                                         "signature": "c2lnbmF0dXJl"}}]},
        {"role": "user", "content": "again"},
    ]


_SIG_400 = {"status": 400, "error": {
    "type": "invalid_request_error",
    "message": "messages.1.content.0: Invalid `signature` in `thinking` block"}}


def test_signature_400_strips_the_blocks_and_resends_once(wire, sleeps):
    # no script: the emulator itself checks thinking signatures, as Anthropic does, and
    # rejects this one (not signed by it) with the real 400
    with _client(wire, sleeps, "anthropic_messages") as client:
        done = client.complete(_thinking_history(wire), max_tokens=100)
    first, second = (r["body"]["messages"][1]["content"] for r in wire.requests())
    assert any(b.get("type") == "thinking" for b in first)
    assert not any(b.get("type") == "thinking" for b in second)
    assert [r["status"] for r in wire.requests()] == [400, 200]
    assert "signature" in wire.requests()[0]["error"]["message"]
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
    assert sleeps == []


def test_signature_400_is_not_resent_when_stripping_changes_nothing(wire, sleeps):
    wire.script(_SIG_400, _SIG_400)
    with _client(wire, sleeps, "anthropic_messages") as client, pytest.raises(BadRequestError):
        client.complete(HI, max_tokens=100)
    assert len(wire.requests()) == 1


# ---------------------------------------------------------------------- fallback
def _chain_config(wire):
    entry = {"provider": "custom", "model": wire.model, "api_mode": "chat_completions",
             "base_url": wire.base_url("chat_completions"), "api_key_env": "FAKE_KEY"}
    return config_from_dict({"models": {
        "primary": entry,
        "backup": {**entry, "model": wire.model + "-2"},
        "anthropic-backup": {**entry, "model": wire.model + "-3",
                             "api_mode": "anthropic_messages",
                             "base_url": wire.base_url("anthropic_messages")},
    }, "fallback": ["backup"]})


def test_billing_falls_back_to_the_next_model(wire, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.fault("quota")  # the primary's model only
    with Client("primary", config=_chain_config(wire), sleep=sleeps) as client:
        done = client.complete(HI)
    m = wire.model
    assert [r["body"]["model"] for r in wire.requests()] == [m, m + "-2"]
    assert done.model == m + "-2"
    assert [(a.model, a.outcome) for a in done.attempts] == [(m, "fell_back"), (m + "-2", "ok")]
    assert sleeps == []


def test_fallback_reencodes_for_the_new_protocol_and_without_stickiness_primary_returns(
        wire, sleeps, monkeypatch):
    # fallback_stick_s=0: the next call starts at the primary again (the default keeps
    # the fallback for 300 s: tests/client/test_client_sticky.py)
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.script({"status": 404, "error": {"message": f"The model `{wire.model}` does not exist",
                                          "code": "model_not_found"}}, OK, OK)
    with Client("primary", config=_chain_config(wire), fallback=["anthropic-backup"],
                sleep=sleeps, fallback_stick_s=0) as client:
        first = client.complete(HI, max_tokens=20)
        second = client.complete(HI, max_tokens=20)
    log = wire.requests()
    assert [r["path"] for r in log] == ["/v1/chat/completions", "/v1/messages",
                                        "/v1/chat/completions"]
    assert log[1]["headers"]["x-api-key"].startswith(KEY[:6])  # masked in the log
    assert "authorization" not in log[1]["headers"]
    assert first.model == wire.model + "-3" and second.model == wire.model


def test_native_fields_and_tools_go_only_to_models_of_their_protocol(wire, sleeps, monkeypatch):
    # extra_api: the chat model gets seed and the built-in tool; the Anthropic fallback
    # gets neither field (no place for it) and would refuse the tool
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.script({"status": 404, "error": {"message": f"The model `{wire.model}` does not exist",
                                          "code": "model_not_found"}}, OK)
    with Client("primary", config=_chain_config(wire), fallback=["anthropic-backup"],
                sleep=sleeps) as client:
        client.complete(HI, max_tokens=20, extra={"seed": 7, "user": "u1"}, extra_api="chat_completions")
    first, second = [r["body"] for r in wire.requests()]
    assert (first["seed"], first["user"]) == (7, "u1")
    assert "seed" not in second and "user" not in second and second["model"] == wire.model + "-3"


def test_a_native_tool_of_another_protocol_is_refused_by_name(wire, sleeps):
    with _client(wire, sleeps) as client:
        with pytest.raises(UnsupportedContentError) as info:
            client.complete(HI, tools=[{"type": "web_search_20250305", "name": "web_search"}],
                            extra_api="anthropic_messages")
        assert "'web_search_20250305' (web_search) is a tool type of Anthropic Messages" in str(info.value)
        with pytest.raises(MessageError, match="extra_api must be one of"):
            client.complete(HI, extra_api="openai")
    assert wire.requests() == []  # refused before anything was sent


def test_retries_spent_then_fallback_then_exhausted_lists_every_error(wire, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.fault("server_error")
    wire.fault("server_error", model=wire.model + "-2")
    with (
        Client("primary", config=_chain_config(wire), sleep=sleeps,
               retry=RetryPolicy(attempts=2, jitter=0)) as client,
        pytest.raises(FallbackExhaustedError) as info,
    ):
        client.complete(HI)
    errors = info.value.errors
    m = wire.model
    assert [type(e) for e in errors] == [ServerError] * 4
    assert [e.model for e in errors] == [m, m, m + "-2", m + "-2"]
    assert sleeps == [2.0, 2.0]
    assert len(wire.requests()) == 4


def test_fallback_entries_equal_to_the_primary_or_unconfigured_are_skipped(
        wire, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.fault("quota")
    with Client("primary", config=_chain_config(wire), sleep=sleeps, strict_fallbacks=False,
                fallback=["primary", "not-configured", "backup"]) as client:
        done = client.complete(HI)
    assert [a.model for a in done.attempts] == [wire.model, wire.model + "-2"]
    assert [s.model for s in client.skipped_fallbacks] == ["primary", "not-configured"]


def test_total_deadline_bounds_the_whole_call_across_retries(wire, sleeps):
    wire.fault("hang", seconds=3)
    deadline = Timeouts(connect=1.0, read=5.0, stale=5.0, total=0.4)
    with (
        _client(wire, sleeps, timeout=deadline, retry=RetryPolicy(base=0.01, jitter=0)) as client,
        pytest.raises(ReadTimeoutError),
    ):
        client.complete(HI)
    # the first attempt used up the deadline; no retry could start within it
    assert len(wire.requests()) == 1


def test_llamacpp_grammar_error_resends_once_without_pattern_and_format(wire, sleeps):
    wire.script({"status": 400, "error": {
        "code": 400, "type": "invalid_request_error",
        "message": "JSON schema conversion failed: error parsing grammar: unknown format"}}, OK)
    tools = [{"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}}}]
    with _client(wire, sleeps) as client:
        done = client.complete(HI, tools=tools)
    first, second = (r["body"]["tools"][0]["function"]["parameters"]["properties"]
                     for r in wire.requests())
    assert first["id"]["format"] == "uuid" and first["code"]["pattern"] == "^[A-Z]{3}$"
    assert second == {"id": {"type": "string"}, "code": {"type": "string"}}
    assert tools[0]["function"]["parameters"]["properties"]["id"]["format"] == "uuid"  # untouched
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]


def _unsupported(param, code="unsupported_value"):
    message = (f"Unsupported value: '{param}' does not support 0.2 with this model. Only the default (1) "
               "value is supported." if code == "unsupported_value" else
               f"Unsupported parameter: '{param}' is not supported with this model.")
    return {"status": 400, "error": {"message": message, "type": "invalid_request_error",
                                     "param": param, "code": code}}


def test_a_setting_the_model_refuses_is_dropped_once_and_remembered(wire, sleeps, caplog):
    # OpenAI's reasoning models (and Azure deployments of them, whatever their name):
    # temperature other than 1 is a 400 naming it; resend without, and leave it out
    # of later calls on this client from the start
    wire.script(_unsupported("temperature"), OK, OK)
    with _client(wire, sleeps) as client:
        with caplog.at_level("WARNING", logger="modelwire.client"):
            first = client.complete(HI, temperature=0.2, max_tokens=20)
        second = client.complete(HI, temperature=0.2, max_tokens=20)
    bodies = [r["body"] for r in wire.requests()]
    assert [("temperature" in b) for b in bodies] == [True, False, False]
    assert [a.outcome for a in first.attempts] == ["retried", "ok"] and first.text == FULL
    assert [a.outcome for a in second.attempts] == ["ok"]
    assert "does not take 'temperature': resent without it" in caplog.text
    assert sleeps == []


def test_a_refused_stop_is_applied_to_the_answer(wire, sleeps):
    wire.script(_unsupported("stop", "unsupported_parameter"), OK)
    with _client(wire, sleeps) as client:
        done = client.complete(HI, stop=["scripted"], max_tokens=20)
    assert [("stop" in r["body"]) for r in wire.requests()] == [True, False]
    assert done.text == "Hello from the " and done.finish_reason == "stop"


def test_a_400_naming_what_the_request_cannot_do_without_is_raised(wire, sleeps):
    wire.script(_unsupported("messages[0].content"), OK)
    with _client(wire, sleeps) as client, pytest.raises(BadRequestError, match="messages"):
        client.complete(HI, max_tokens=20)
    assert len(wire.requests()) == 1


def test_each_ladder_step_is_logged_with_its_reason(wire, sleeps, caplog):
    wire.script({"status": 500, "error": {"message": "boom", "type": "server_error"}}, OK)
    with caplog.at_level("INFO", logger="modelwire.client"), _client(wire, sleeps) as client:
        assert client.complete(HI).text == FULL
    assert "server (ServerError) -> retry in 2.00s: server: retry 1" in caplog.text
