"""The failure → action ladder driven through real HTTP: each fault, step by step.

Backoff waits are recorded by an injected sleeper (never really slept); socket
timeouts are short real ones (0.3 s).
"""

from __future__ import annotations

import email.utils
import time

import pytest
from client._client_fake import Reply

from modelwire import (
    BadRequestError,
    BillingError,
    Client,
    FallbackExhaustedError,
    RateLimitError,
    ReadTimeoutError,
    ServerError,
    StreamInterruptedError,
)
from modelwire.config import config_from_dict
from modelwire.events import TextDelta
from modelwire.resilience import RetryPolicy
from modelwire.transport import Timeouts

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
FULL = "Hello from the fake provider"
STEADY = RetryPolicy(jitter=0)


def _client(fake, sleeps, mode="chat_completions", **kw):
    base = fake.base_url + ("" if mode == "anthropic_messages" else "/v1")
    kw.setdefault("retry", STEADY)
    return Client("custom/fake-1", base_url=base, api_mode=mode, api_key=KEY, sleep=sleeps, **kw)


def _text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _rate_limited(headers=None, body=None):
    return Reply("status", status=429, headers=headers or {},
                 body=body or {"error": {"message": "Rate limit reached", "type": "requests",
                                         "code": "rate_limit_exceeded"}})


def _http_date(seconds_from_now):
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


def _rfc3339(seconds_from_now):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds_from_now))


@pytest.mark.parametrize(
    ("headers", "body", "expected", "tolerance"),
    [
        ({"retry-after-ms": "1500"}, None, 1.5, 0.0),
        ({"retry-after": "3"}, None, 3.0, 0.0),
        ({"retry-after": "HTTPDATE"}, None, 30.0, 2.0),
        ({"x-ratelimit-reset-requests": "20ms"}, None, 0.02, 0.0),
        ({"anthropic-ratelimit-requests-reset": "RFC3339"}, None, 20.0, 2.0),
        ({}, {"error": {"message": "Too many requests, retry after 7 seconds"}}, 7.0, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, None, 0.25, 0.0),
    ],
    ids=["retry-after-ms", "retry-after-seconds", "retry-after-http-date",
         "openai-reset-duration", "anthropic-reset-timestamp", "body-hint", "ms-wins"],
)
def test_429_waits_as_long_as_the_server_says_then_succeeds(fake, sleeps, headers, body,
                                                            expected, tolerance):
    headers = {k: (_http_date(30) if v == "HTTPDATE" else _rfc3339(20) if v == "RFC3339" else v)
               for k, v in headers.items()}
    fake.push(_rate_limited(headers, body))
    with _client(fake, sleeps) as client:
        done = client.complete(HI)
    assert done.text == FULL
    assert len(sleeps) == 1 and abs(sleeps[0] - expected) <= tolerance
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
    assert "RateLimitError" in done.attempts[0].error
    assert len(fake.requests) == 2


def test_each_attempt_uses_its_own_responses_hint(fake, sleeps):
    fake.push(_rate_limited({"retry-after": "4"}), _rate_limited({"retry-after": "1"}))
    with _client(fake, sleeps) as client:
        client.complete(HI)
    assert sleeps == [4.0, 1.0]


def test_429_without_hint_backs_off_exponentially_until_attempts_are_spent(fake, sleeps):
    fake.push(*[_rate_limited() for _ in range(3)])
    with (
        _client(fake, sleeps, retry=RetryPolicy(attempts=3, jitter=0)) as client,
        pytest.raises(RateLimitError),
    ):
        client.complete(HI)
    assert sleeps == [2.0, 4.0]
    assert len(fake.requests) == 3


@pytest.mark.parametrize(("mode", "status", "body"), [
    ("chat_completions", 500, {"error": {"message": "Internal error", "type": "server_error"}}),
    ("chat_completions", 502, "bad gateway"),
    ("anthropic_messages", 529, {"type": "error", "error": {"type": "overloaded_error",
                                                            "message": "Overloaded"}}),
    ("responses", 503, {"error": {"message": "Service unavailable", "type": "server_error"}}),
], ids=["500", "502", "529-anthropic", "503-responses"])
def test_server_errors_and_overload_are_retried_on_the_same_model(fake, sleeps, mode, status,
                                                                 body):
    fake.push(Reply("status", status=status, body=body))
    with _client(fake, sleeps, mode) as client:
        stream = client.stream(HI)
        events = list(stream)
    assert _text(events) == FULL  # output once: the failed try sent nothing to the caller
    assert sleeps == [2.0]
    assert [a.outcome for a in stream.completion.attempts] == ["retried", "ok"]


def test_402_without_fallback_raises_billing_at_once(fake, sleeps):
    fake.push(Reply("status", status=402, body={"error": {"message": "Insufficient credits"}}))
    with _client(fake, sleeps) as client, pytest.raises(BillingError):
        client.complete(HI)
    assert sleeps == [] and len(fake.requests) == 1


@pytest.mark.parametrize("mode", ["chat_completions", "anthropic_messages", "responses"])
def test_reset_before_the_first_byte_is_retried(fake, sleeps, mode):
    fake.push(Reply("reset_before"))
    with _client(fake, sleeps, mode) as client:
        stream = client.stream(HI)
        assert _text(list(stream)) == FULL
    assert "StreamInterruptedError" in stream.completion.attempts[0].error
    assert len(fake.requests) == 2


def test_reset_after_the_first_event_raises_with_the_partial_result(fake, sleeps):
    fake.push(Reply("reset_after", after=3, tool=("f", "{}")))
    with _client(fake, sleeps) as client:
        seen = []
        with pytest.raises(StreamInterruptedError) as info:
            for event in client.stream(HI):
                seen.append(event)  # noqa: PERF402 (kept as they arrive: the error cuts in)
    partial = info.value.partial
    assert partial is not None
    assert partial.text == _text(seen) == "Hello from the"
    assert partial.tool_calls == []
    assert len(fake.requests) == 1  # never retried after output reached the caller
    assert sleeps == []


def test_partial_tool_calls_are_never_handed_out_as_complete(fake, sleeps):
    # the cut comes after ToolCallStart and one arguments fragment
    fake.push(Reply("reset_after", after=7, text="Calling now", tool=("lookup", '{"q": "x"}')))
    with _client(fake, sleeps) as client, pytest.raises(StreamInterruptedError) as info:
        list(client.stream(HI))
    assert info.value.partial.text == "Calling now"
    assert info.value.partial.tool_calls == []


def test_a_stall_past_the_read_timeout_is_retried(fake, sleeps):
    fake.push(Reply("stall", after=0))
    timeouts = Timeouts(connect=1.0, read=0.3, stale=0.3)
    with _client(fake, sleeps, timeout=timeouts) as client:
        stream = client.stream(HI)
        assert _text(list(stream)) == FULL
    assert "ReadTimeoutError" in stream.completion.attempts[0].error


def test_a_stale_stream_after_output_raises_a_timeout_with_partial(fake, sleeps):
    fake.push(Reply("stall", after=2))
    timeouts = Timeouts(connect=1.0, read=0.3, stale=0.3)
    with (
        _client(fake, sleeps, timeout=timeouts) as client,
        pytest.raises(ReadTimeoutError) as info,
    ):
        list(client.stream(HI))
    assert info.value.partial.text == "Hello from"
    assert len(fake.requests) == 1


@pytest.mark.parametrize("kind", ["malformed", "empty"])
def test_malformed_or_empty_stream_is_retried(fake, sleeps, kind):
    fake.push(Reply(kind))
    with _client(fake, sleeps) as client:
        stream = client.stream(HI)
        assert _text(list(stream)) == FULL
    assert len(fake.requests) == 2
    assert [a.outcome for a in stream.completion.attempts] == ["retried", "ok"]


def test_caller_errors_raise_without_retry(fake, sleeps):
    fake.push(Reply("status", status=400, body={"error": {
        "message": "Invalid value for 'temperature'", "type": "invalid_request_error"}}))
    with _client(fake, sleeps) as client, pytest.raises(BadRequestError) as info:
        client.complete(HI)
    assert info.value.status == 400 and info.value.provider == "custom"
    assert len(fake.requests) == 1


# ------------------------------------------------------------------ signature 400
def _thinking_history(fake):
    issuer = f"custom:{fake.base_url}"
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "reasoning_details": [
            {"issuer": issuer, "block": {"type": "thinking", "thinking": "mull",
                                         "signature": "c2lnbmF0dXJl"}}]},
        {"role": "user", "content": "again"},
    ]


_SIG_400 = Reply("status", status=400, body={"type": "error", "error": {
    "type": "invalid_request_error",
    "message": "messages.1.content.0: Invalid `signature` in `thinking` block"}})


def test_signature_400_strips_the_blocks_and_resends_once(fake, sleeps):
    fake.push(_SIG_400)
    with _client(fake, sleeps, "anthropic_messages") as client:
        done = client.complete(_thinking_history(fake), max_tokens=100)
    first, second = (r["body"]["messages"][1]["content"] for r in fake.requests)
    assert any(b.get("type") == "thinking" for b in first)
    assert not any(b.get("type") == "thinking" for b in second)
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
    assert sleeps == []


def test_signature_400_is_not_resent_when_stripping_changes_nothing(fake, sleeps):
    fake.push(_SIG_400, _SIG_400)
    with _client(fake, sleeps, "anthropic_messages") as client, pytest.raises(BadRequestError):
        client.complete(HI, max_tokens=100)
    assert len(fake.requests) == 1


# ---------------------------------------------------------------------- fallback
def _chain_config(fake):
    entry = {"provider": "custom", "model": "fake-1", "api_mode": "chat_completions",
             "base_url": fake.base_url + "/v1", "api_key_env": "FAKE_KEY"}
    return config_from_dict({"models": {
        "primary": entry,
        "backup": {**entry, "model": "fake-2"},
        "anthropic-backup": {**entry, "model": "fake-3", "api_mode": "anthropic_messages",
                             "base_url": fake.base_url},
    }, "fallback": ["backup"]})


def test_billing_falls_back_to_the_next_model(fake, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    fake.push(Reply("status", status=402, body={"error": {"message": "Insufficient credits"}}))
    with Client("primary", config=_chain_config(fake), sleep=sleeps) as client:
        done = client.complete(HI)
    assert [r["body"]["model"] for r in fake.requests] == ["fake-1", "fake-2"]
    assert done.model == "fake-2"
    assert [(a.model, a.outcome) for a in done.attempts] == [("fake-1", "fell_back"),
                                                             ("fake-2", "ok")]
    assert sleeps == []


def test_fallback_reencodes_for_the_new_protocol_and_primary_returns_next_call(
        fake, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    fake.push(Reply("status", status=404, body={"error": {
        "message": "The model `fake-1` does not exist", "code": "model_not_found"}}))
    with Client("primary", config=_chain_config(fake), fallback=["anthropic-backup"],
                sleep=sleeps) as client:
        first = client.complete(HI, max_tokens=20)
        second = client.complete(HI, max_tokens=20)
    paths = [r["path"] for r in fake.requests]
    assert paths == ["/v1/chat/completions", "/v1/messages", "/v1/chat/completions"]
    assert fake.requests[1]["headers"]["x-api-key"] == KEY
    assert first.model == "fake-3" and second.model == "fake-1"


def test_retries_spent_then_fallback_then_exhausted_lists_every_error(fake, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    boom = Reply("status", status=500, body={"error": {"message": "boom"}})
    fake.push(*[boom] * 4)
    with (
        Client("primary", config=_chain_config(fake), sleep=sleeps,
                    retry=RetryPolicy(attempts=2, jitter=0)) as client,
        pytest.raises(FallbackExhaustedError) as info,
    ):
        client.complete(HI)
    errors = info.value.errors
    assert [type(e) for e in errors] == [ServerError] * 4
    assert [e.model for e in errors] == ["fake-1", "fake-1", "fake-2", "fake-2"]
    assert sleeps == [2.0, 2.0]


def test_fallback_entries_equal_to_the_primary_or_unconfigured_are_skipped(
        fake, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    fake.push(Reply("status", status=402, body={"error": {"message": "Insufficient credits"}}))
    with Client("primary", config=_chain_config(fake), sleep=sleeps,
                fallback=["primary", "not-configured", "backup"]) as client:
        done = client.complete(HI)
    assert [a.model for a in done.attempts] == ["fake-1", "fake-2"]


def test_total_deadline_bounds_the_whole_call_across_retries(fake, sleeps):
    fake.push(Reply("stall", after=0), Reply("stall", after=0), Reply("stall", after=0))
    deadline = Timeouts(connect=1.0, read=5.0, stale=5.0, total=0.4)
    with (
        _client(fake, sleeps, timeout=deadline, retry=RetryPolicy(base=0.01, jitter=0)) as client,
        pytest.raises(ReadTimeoutError),
    ):
        client.complete(HI)
    # the first attempt used up the deadline; no retry could start within it
    assert len(fake.requests) == 1


def test_llamacpp_grammar_error_resends_once_without_pattern_and_format(fake, sleeps):
    fake.push(Reply("status", status=400, body={"error": {
        "code": 400, "type": "invalid_request_error",
        "message": "JSON schema conversion failed: error parsing grammar: unknown format"}}))
    tools = [{"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}}}]
    with _client(fake, sleeps) as client:
        done = client.complete(HI, tools=tools)
    first, second = (r["body"]["tools"][0]["function"]["parameters"]["properties"]
                     for r in fake.requests)
    assert first["id"]["format"] == "uuid" and first["code"]["pattern"] == "^[A-Z]{3}$"
    assert second == {"id": {"type": "string"}, "code": {"type": "string"}}
    assert tools[0]["function"]["parameters"]["properties"]["id"]["format"] == "uuid"  # untouched
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
