"""The Client against the emulator with its faults: the ladder over real HTTP, for
each protocol, observed through the emulator's own request log."""

from __future__ import annotations

import asyncio
import threading

import pytest

from modelwire import (
    AsyncClient,
    BillingError,
    Client,
    FallbackExhaustedError,
    ProtocolError,
    ProviderError,
    ReadTimeoutError,
    StreamInterruptedError,
)
from modelwire.emulator import Emulator
from modelwire.events import TextDelta
from modelwire.resilience import RetryPolicy
from modelwire.transport import Timeouts

ASK = [{"role": "user", "content": "What is 17 times 23?"}]
ANSWER = "17 * 23 = 391. The answer is 391."
PROVIDERS = {"chat_completions": "emulator", "anthropic_messages": "emulator-anthropic",
             "responses": "emulator-responses"}
ENDPOINTS = {"chat_completions": "chat_completions", "anthropic_messages": "messages",
             "responses": "responses"}
SHORT = Timeouts(connect=1.0, read=0.3, stale=0.3)


@pytest.fixture(scope="module")
def emu():
    with Emulator(max_hang=3.0) as server:
        yield server


@pytest.fixture(autouse=True)
def _clean(emu):
    emu.clear_faults()
    emu.reset()
    yield
    emu.clear_faults()


class Sleeps(list):
    def __call__(self, seconds):
        self.append(seconds)


def _base(emu, mode):
    return emu.anthropic_base_url() if mode == "anthropic_messages" else emu.openai_base_url()


def _client(emu, mode, sleeps, cls=Client, **kw):
    kw.setdefault("retry", RetryPolicy(jitter=0))
    return cls(f"{PROVIDERS[mode]}/emulator-1", base_url=_base(emu, mode), sleep=sleeps, **kw)


def _log(emu):
    return emu.requests()["requests"]


def _text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


MODES = list(PROVIDERS)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("form", ["seconds", "ms", "http_date"])
def test_rate_limit_hint_in_each_form_is_waited_then_retried(emu, mode, form):
    emu.set_faults([{"fault": "rate_limit", "requests": [1], "retry_after": 4,
                     "retry_after_form": form}])
    sleeps = Sleeps()
    with _client(emu, mode, sleeps) as client:
        done = client.complete(ASK)
    assert done.text == ANSWER
    assert len(sleeps) == 1 and 2.5 <= sleeps[0] <= 4.0  # an HTTP date has 1 s resolution
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
    assert [r["status"] for r in _log(emu)] == [429, 200]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["server_error", "unavailable", "overloaded"])
def test_server_side_trouble_is_retried_and_output_is_not_duplicated(emu, mode, fault):
    emu.set_faults([{"fault": fault, "requests": [1], "retry_after": 1}])
    sleeps = Sleeps()
    with _client(emu, mode, sleeps) as client:
        stream = client.stream(ASK)
        events = list(stream)
    assert _text(events) == ANSWER == stream.completion.text
    assert len(sleeps) == 1
    assert len(_log(emu)) == 2


@pytest.mark.parametrize("mode", MODES)
def test_quota_raises_billing_without_a_fallback(emu, mode):
    emu.set_faults([{"fault": "quota"}])
    sleeps = Sleeps()
    with _client(emu, mode, sleeps) as client, pytest.raises(BillingError) as info:
        client.complete(ASK)
    assert info.value.status == 402
    assert sleeps == [] and len(_log(emu)) == 1


def _chain(emu):
    from modelwire.config import config_from_dict

    return config_from_dict({"models": {
        "chat": {"provider": "emulator", "model": "emulator-1",
                 "base_url": emu.openai_base_url()},
        "claude": {"provider": "emulator-anthropic", "model": "claude-sonnet-4-6",
                   "base_url": emu.anthropic_base_url()},
    }, "fallback": ["claude"]})


def test_quota_falls_back_across_protocols(emu):
    emu.set_faults([{"fault": "quota", "endpoint": "chat_completions"}])
    sleeps = Sleeps()
    with Client("chat", config=_chain(emu), sleep=sleeps) as client:
        done = client.complete(ASK)
        again = client.complete(ASK)
    assert done.text == ANSWER
    assert (done.provider, done.model) == ("emulator-anthropic", "claude-sonnet-4-6")
    # the fallback served that turn; the next call starts there (sticky for 300 s)
    assert [r["endpoint"] for r in _log(emu)] == ["chat_completions", "messages", "messages"]
    assert [(a.model, a.outcome) for a in again.attempts] == [
        ("emulator-1", "skipped"), ("claude-sonnet-4-6", "ok")]
    assert sleeps == []


def test_every_model_failing_raises_fallback_exhausted_in_order(emu):
    emu.set_faults([{"fault": "server_error"}])
    sleeps = Sleeps()
    with (
        Client("chat", config=_chain(emu), sleep=sleeps,
                    retry=RetryPolicy(attempts=2, jitter=0)) as client,
        pytest.raises(FallbackExhaustedError) as info,
    ):
        client.complete(ASK)
    assert [(e.status, e.model) for e in info.value.errors] == [
        (500, "emulator-1"), (500, "emulator-1"),
        (500, "claude-sonnet-4-6"), (500, "claude-sonnet-4-6")]


@pytest.mark.parametrize("mode", MODES)
def test_hang_before_the_first_byte_times_out_and_is_retried(emu, mode):
    emu.set_faults([{"fault": "hang", "requests": [1], "seconds": 2.0}])
    sleeps = Sleeps()
    with _client(emu, mode, sleeps, timeout=SHORT) as client:
        stream = client.stream(ASK)
        assert _text(list(stream)) == ANSWER
    assert "ReadTimeoutError" in stream.completion.attempts[0].error
    assert emu.requests()["requests"][0]["fault"] is not None


@pytest.mark.parametrize("mode", MODES)
def test_connection_closed_mid_stream_raises_with_partial_and_is_not_retried(emu, mode):
    # enough SSE events that text has reached the caller (Responses opens with 4 others)
    emu.set_faults([{"fault": "close_mid_stream", "after": 7}])
    sleeps = Sleeps()
    with _client(emu, mode, sleeps) as client:
        seen = []
        with pytest.raises((StreamInterruptedError, ProtocolError)) as info:
            for event in client.stream(ASK):
                seen.append(event)  # noqa: PERF402 (kept as they arrive: the error cuts in)
    assert info.value.partial is not None
    assert info.value.partial.text == _text(seen)
    assert ANSWER.startswith(_text(seen))
    assert len(_log(emu)) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["malformed_sse", "invalid_utf8", "stream_error"])
def test_broken_stream_before_any_event_is_retried(emu, mode, fault):
    emu.set_faults([{"fault": fault, "requests": [1], "after": 0}])
    sleeps = Sleeps()
    with _client(emu, mode, sleeps) as client:
        stream = client.stream(ASK)
        assert _text(list(stream)) == ANSWER
    assert len(_log(emu)) == 2


@pytest.mark.parametrize("fault", ["malformed_sse", "stream_error"])
def test_broken_stream_after_output_raises_with_partial(emu, fault):
    emu.set_faults([{"fault": fault, "after": 3}])
    sleeps = Sleeps()
    with _client(emu, "chat_completions", sleeps) as client:
        seen = []
        with pytest.raises((ProtocolError, ProviderError)) as info:
            for event in client.stream(ASK):
                seen.append(event)  # noqa: PERF402 (kept as they arrive: the error cuts in)
    assert info.value.partial.text == _text(seen)
    assert len(_log(emu)) == 1


def test_complete_absorbs_a_mid_stream_cut_on_a_stream_only_path(emu):
    # complete() reads a whole body: nothing reached the caller, so a cut is retried
    emu.set_faults([{"fault": "server_error", "requests": [1]}])
    sleeps = Sleeps()
    with _client(emu, "responses", sleeps) as client:
        assert client.complete(ASK).text == ANSWER


def test_a_stream_slower_than_the_stale_timeout_is_a_timeout(emu):
    emu.set_faults([{"fault": "slow_chunks", "seconds": 1.0}])
    sleeps = Sleeps()
    with (
        _client(emu, "chat_completions", sleeps, timeout=SHORT,
                     retry=RetryPolicy(attempts=2, jitter=0)) as client,
        pytest.raises(ReadTimeoutError),
    ):
        list(client.stream(ASK))
    assert len(_log(emu)) == 2 and sleeps == [2.0]
    assert _wait(lambda: all(r["disconnected"] for r in _log(emu)))


def test_interrupt_closes_the_upstream_connection(emu):
    emu.set_faults([{"fault": "slow_chunks", "seconds": 0.05}])
    stop = threading.Event()
    seen = []
    with _client(emu, "chat_completions", Sleeps()) as client:
        stream = client.stream(ASK, interrupt=stop)
        for event in stream:
            seen.append(event)
            if len([e for e in seen if isinstance(e, TextDelta)]) == 2:
                stop.set()
    assert stream.completion.interrupted
    assert stream.completion.text == _text(seen)
    assert _wait(lambda: _log(emu)[0]["disconnected"])


async def test_cancelled_async_stream_closes_the_connection_and_keeps_partial(emu):
    emu.set_faults([{"fault": "slow_chunks", "seconds": 0.05}])
    two = asyncio.Event()
    async with _client(emu, "anthropic_messages", Sleeps(), cls=AsyncClient) as client:
        stream = client.stream(ASK)

        async def consume():
            n = 0
            async for event in stream:
                n += isinstance(event, TextDelta)
                if n == 2:
                    two.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(two.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert stream.completion.interrupted and stream.completion.text
    assert ANSWER.startswith(stream.completion.text)
    assert await asyncio.to_thread(_wait, lambda: _log(emu)[0]["disconnected"])


@pytest.mark.parametrize("mode", MODES)
async def test_async_ladder_retries_a_rate_limit(emu, mode):
    emu.set_faults([{"fault": "rate_limit", "requests": [1], "retry_after": 2}])
    sleeps = Sleeps()
    async with _client(emu, mode, sleeps, cls=AsyncClient) as client:
        done = await client.complete(ASK)
        stream = client.stream(ASK)
        text = _text([e async for e in stream])
    assert done.text == text == ANSWER
    assert sleeps == [2.0]


def test_key_rotation_against_an_emulator_that_checks_keys(monkeypatch):
    from modelwire.credentials import CredentialPool
    from modelwire.credentials.stores.memory import MemoryStore

    good, bad = "sk-good-key-0000000000001", "sk-bad-key-00000000000002"
    pool = CredentialPool("emulator", store=MemoryStore(), env_vars=())
    pool.add(bad, label="bad", priority=0)  # lower number: tried first
    pool.add(good, label="good", priority=1)
    sleeps = Sleeps()
    with Emulator(keys=[good]) as strict:
        with Client("emulator/emulator-1", base_url=strict.openai_base_url(), sleep=sleeps,
                    pools={"emulator": pool}) as client:
            done = client.complete(ASK)
        log = strict.requests()["requests"]
    assert done.text == ANSWER
    assert [r["status"] for r in log] == [401, 200]
    assert [(a.credential, a.outcome) for a in done.attempts] == [("bad", "rotated"),
                                                                  ("good", "ok")]
    assert sleeps == []


def test_emulator_provider_starts_one_in_process_emulator_on_demand():
    with Client("emulator/emulator-1") as first, Client("emulator-anthropic/x") as second:
        assert first.complete(ASK).text == ANSWER
        assert second.complete(ASK).text == ANSWER
    from modelwire.emulator import shared_emulator

    assert shared_emulator().requests()["counters"]["endpoints"]["messages"] >= 1


def _wait(predicate, timeout=5.0):
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


def _oauth_pool(refresher):
    from modelwire.credentials import CredentialPool
    from modelwire.credentials.stores.memory import MemoryStore

    pool = CredentialPool("emulator", store=MemoryStore(), env_vars=(), refresher=refresher)
    pool.add("old-access-token-000000001", label="login", auth_type="oauth",
             source="oauth:test", refresh_token="refresh-1")
    return pool


def test_401_on_an_oauth_credential_refreshes_once_and_retries():
    from modelwire.credentials.oauth import TokenSet

    calls = []

    def refresher(cred):
        calls.append(cred.refresh_token)
        return TokenSet("new-access-token-00000002", "refresh-2", expires_in=3600)

    pool = _oauth_pool(refresher)
    sleeps = Sleeps()
    with Emulator(keys=["new-access-token-00000002"]) as strict:
        with Client("emulator/emulator-1", base_url=strict.openai_base_url(), sleep=sleeps,
                    pools={"emulator": pool}) as client:
            done = client.complete(ASK)
        statuses = [r["status"] for r in strict.requests()["requests"]]
    assert done.text == ANSWER
    assert statuses == [401, 200]
    assert calls == ["refresh-1"]  # exactly one refresh
    assert [a.outcome for a in done.attempts] == ["refreshed", "ok"]
    assert sleeps == []


def test_auth_that_survives_a_failed_refresh_raises():
    from modelwire import AuthenticationError
    from modelwire.credentials.oauth import OAuthError

    def refresher(cred):
        raise OAuthError("refresh token revoked", error="invalid_grant")

    pool = _oauth_pool(refresher)
    with Emulator(keys=["something-else-000000000003"]) as strict:
        with Client("emulator/emulator-1", base_url=strict.openai_base_url(), sleep=Sleeps(),
                    pools={"emulator": pool}) as client, pytest.raises(AuthenticationError):
            client.complete(ASK)
        assert len(strict.requests()["requests"]) == 1
    assert pool.credentials()[0].status == "dead"


@pytest.mark.parametrize("mode", list(PROVIDERS))
def test_stop_sequences_end_the_answer_on_every_protocol(emu, mode):
    # the Responses API has no stop sequences: modelwire cuts the answer itself, the stream
    # runs to its end (its usage is the upstream's), and the request carries no "stop"
    for stream in (False, True):
        with _client(emu, mode, Sleeps()) as client:
            if stream:
                s = client.stream(ASK, stop=["391."])
                text, done = _text(list(s)), s.completion
            else:
                done = client.complete(ASK, stop="391.")
                text = done.text
        assert text == done.text == "17 * 23 = ", (mode, stream, text)
        assert done.finish_reason == "stop" and done.usage["completion_tokens"] > 0
        # which sequence: Anthropic says it, and modelwire knows it where it cut the text
        assert done.stop_sequence == (None if mode == "chat_completions" else "391."), (mode, stream)
        sent = _log(emu)[-1]["body"]
        assert ("stop" in sent) == (mode == "chat_completions") and ("stop_sequences" in sent) == (
            mode == "anthropic_messages")


def test_openai_reasoning_models_get_stop_sequences_applied_not_sent(emu):
    # gpt-5 / o-series answer 400 "Unsupported parameter: 'stop'" (the emulator's openai
    # profile too): modelwire leaves stop out for them and ends the text itself
    import openai as openai_sdk

    raw = openai_sdk.OpenAI(base_url=emu.openai_base_url("openai"), api_key="sk-test", max_retries=0)
    with pytest.raises(openai_sdk.BadRequestError) as info:
        raw.chat.completions.create(model="gpt-5-mini", messages=ASK, stop=["391."])
    assert info.value.code == "unsupported_parameter" and info.value.param == "stop"
    for model, sent in (("gpt-5-mini", False), ("o4-mini", False), ("gpt-4.1-mini", True)):
        with Client(f"openai/{model}", base_url=emu.openai_base_url("openai"), api_key="sk-test") as client:
            done = client.complete(ASK, stop=["391."])
        assert done.text == "17 * 23 = " and done.finish_reason == "stop", model
        assert ("stop" in _log(emu)[-1]["body"]) == sent, model
