"""The Client with a credential pool: rotation on credential faults, never on overload,
outcomes reported (cooling), leases released. Driven against the emulator, whose log
masks keys to their last four characters, which tells the two test keys apart."""

from __future__ import annotations

import pytest

from modelwire import AuthenticationError, BadRequestError, Client
from modelwire.credentials import CredentialPool
from modelwire.resilience import RetryPolicy

HI = [{"role": "user", "content": "hi"}]
ENV_KEY = "sk-env-key-aaaaaaaaaaaa1111"
MANUAL_KEY = "sk-manual-key-bbbbbbbbbb2222"


@pytest.fixture
def two_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    pool = CredentialPool.for_provider("openai")
    pool.add(MANUAL_KEY, label="manual")  # manual entries come first
    return pool


def _client(wire, sleeps):
    return Client(f"openai/{wire.model}", base_url=wire.base_url("chat_completions"),
                  sleep=sleeps, retry=RetryPolicy(jitter=0))


def _keys(wire):
    """Which key each request carried, by the last four characters the log keeps."""
    return [r["headers"]["authorization"][-4:] for r in wire.requests()]


ENV, MANUAL = ENV_KEY[-4:], MANUAL_KEY[-4:]


def _status(pool, secret):
    return next(c.status for c in pool.credentials() if c.secret == secret)


def test_rate_limit_rotates_to_the_next_key_at_once_and_cools_the_first(wire, sleeps, two_keys):
    wire.fault("rate_limit", retry_after=30, requests=[1])
    with _client(wire, sleeps) as client:
        done = client.complete(HI)
    assert _keys(wire) == [MANUAL, ENV]
    assert sleeps == []  # a rotation does not wait
    assert [a.outcome for a in done.attempts] == ["rotated", "ok"]
    assert done.attempts[0].credential == "manual"
    assert _status(two_keys, MANUAL_KEY) == "cooling"
    assert _status(two_keys, ENV_KEY) == "ok"


def test_billing_and_auth_rotate_too(wire, sleeps, two_keys):
    wire.fault("unauthorized", requests=[1])
    with _client(wire, sleeps) as client:
        client.complete(HI)
    assert _keys(wire) == [MANUAL, ENV]


def test_overload_never_rotates_or_cools_a_key(wire, sleeps, two_keys):
    wire.script({"status": 429, "error": {
        "message": "The engine is currently overloaded, please try again later"}}, {"text": "ok"})
    with _client(wire, sleeps) as client:
        done = client.complete(HI)
    assert _keys(wire) == [MANUAL, MANUAL]
    assert sleeps == [2.0]
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]
    assert _status(two_keys, MANUAL_KEY) == "ok"


class FakeClock:
    """The pool's clock, advanced by the Client's (recording) sleeper."""

    def __init__(self):
        self.now = 1_800_000_000.0
        self.slept = []

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_sole_key_rate_limited_is_cooled_and_waited_for(wire, monkeypatch):
    from modelwire.credentials.stores.memory import MemoryStore

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    clock = FakeClock()
    pool = CredentialPool("openai", store=MemoryStore(), clock=clock)
    wire.fault("rate_limit", retry_after=2.5, requests=[1])
    with Client(f"openai/{wire.model}", base_url=wire.base_url("chat_completions"),
                sleep=clock.sleep,
                pools={"openai": pool}, retry=RetryPolicy(jitter=0)) as client:
        done = client.complete(HI)
    assert _keys(wire) == [ENV, ENV]
    assert clock.slept == [2.5]  # the server's hint, which is also the key's cooldown
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]


def test_all_keys_cooling_falls_back_when_the_wait_is_long(wire, monkeypatch):
    from modelwire.credentials.stores.memory import MemoryStore

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("FAKE_KEY", "sk-fallback-key-cccccccc3333")
    clock = FakeClock()
    pool = CredentialPool("openai", store=MemoryStore(), clock=clock)
    from modelwire.config import config_from_dict

    config = config_from_dict({"models": {"backup": {
        "provider": "custom", "model": wire.model + "-2", "api_mode": "chat_completions",
        "base_url": wire.base_url("chat_completions"), "api_key_env": "FAKE_KEY"}}})
    # a quota that resets in an hour: the key cools for an hour, the backup serves
    wire.fault("rate_limit", retry_after=3600)  # the primary's model only
    with Client(f"openai/{wire.model}", base_url=wire.base_url("chat_completions"),
                sleep=clock.sleep,
                pools={"openai": pool}, config=config, fallback=["backup"]) as client:
        done = client.complete(HI)
    assert clock.slept == []
    assert [r["body"]["model"] for r in wire.requests()] == [wire.model, wire.model + "-2"]
    assert done.model == wire.model + "-2"


def test_sole_key_auth_failure_raises(wire, sleeps, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    wire.fault("unauthorized")
    with _client(wire, sleeps) as client, pytest.raises(AuthenticationError) as info:
        client.complete(HI)
    assert ENV_KEY not in str(info.value) and ENV_KEY not in repr(info.value)
    assert len(wire.requests()) == 1


def test_leases_are_released_after_success_errors_and_interrupts(wire, sleeps, two_keys):
    wire.script({"status": 400, "error": {"message": "bad"}}, {"text": "ok"},
                {"text": "a longer answer that streams in several events"})
    with _client(wire, sleeps) as client:
        with pytest.raises(BadRequestError):
            client.complete(HI)
        client.complete(HI)
        with client.stream(HI) as stream:
            next(iter(stream))
    # fill_first with one lease per key: had any lease leaked, the next request would
    # have been handed the other key
    assert _keys(wire) == [MANUAL] * 3


def test_no_secret_in_any_log_line_while_rotating(wire, sleeps, two_keys, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    wire.script({"status": 401, "error": {
        "message": f"Incorrect API key provided: {MANUAL_KEY}"}}, {"text": "ok"})
    with _client(wire, sleeps) as client:
        done = client.complete(HI)
    assert "rotate" in caplog.text  # the ladder's decision is logged...
    for secret in (MANUAL_KEY, ENV_KEY):  # ...without any key, even one the provider echoed
        assert secret not in caplog.text
        assert all(secret not in (a.error or "") for a in done.attempts)


def test_a_stream_longer_than_the_lease_ttl_renews_its_lease(wire, monkeypatch):
    from modelwire.credentials.stores.memory import MemoryStore

    class CountingStore(MemoryStore):
        renewed = 0

        def renew(self, *args, **kw):
            self.renewed += 1
            return super().renew(*args, **kw)

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    store = CountingStore()
    pool = CredentialPool("openai", store=store, lease_ttl=0.2)  # renewed every 0.1 s
    words = " ".join(f"w{i}" for i in range(40))
    wire.script({"text": words})
    wire.fault("slow_chunks", seconds=0.05)  # ~14 text chunks: ~0.7 s of stream
    with Client(f"openai/{wire.model}", base_url=wire.base_url("chat_completions"),
                pools={"openai": pool}) as client:
        stream = client.stream(HI)
        events = list(stream)
    assert len(events) > 10 and stream.completion.text == words
    assert store.renewed >= 3


def test_a_key_changed_in_the_environment_is_sent_from_the_next_request(wire, monkeypatch):
    from modelwire.config import config_from_dict

    first, second = "sk-" + "rotated-key-dddd4444", "sk-" + "rotated-key-eeee5555"
    monkeypatch.setenv("ROTATED_KEY", first)
    config = config_from_dict({"models": {"mine": {
        "provider": "custom", "model": wire.model, "api_mode": "chat_completions",
        "base_url": wire.base_url("chat_completions"), "api_key_env": "ROTATED_KEY"}}})
    with Client("mine", config=config) as client:
        labels = [client.complete(HI).attempts[-1].credential]
        client.complete(HI)
        monkeypatch.setenv("ROTATED_KEY", second)
        labels.append(client.complete(HI).attempts[-1].credential)
        client.complete(HI)
    assert _keys(wire) == ["4444", "4444", "5555", "5555"]
    assert labels == ["env:ROTATED_KEY", "env:ROTATED_KEY"]
