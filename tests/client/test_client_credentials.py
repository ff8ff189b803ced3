"""The Client with a credential pool: rotation on credential faults, never on overload,
outcomes reported (cooling), leases released."""

from __future__ import annotations

import pytest
from client._client_fake import Reply

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


def _client(fake, sleeps):
    return Client("openai/gpt-fake", base_url=fake.base_url + "/v1", sleep=sleeps,
                  retry=RetryPolicy(jitter=0))


def _keys(fake):
    return [r["headers"]["authorization"].removeprefix("Bearer ") for r in fake.requests]


def _status(pool, secret):
    return next(c.status for c in pool.credentials() if c.secret == secret)


def test_rate_limit_rotates_to_the_next_key_at_once_and_cools_the_first(fake, sleeps, two_keys):
    fake.push(Reply("status", status=429, headers={"retry-after": "30"},
                    body={"error": {"message": "Rate limit reached", "type": "requests"}}))
    with _client(fake, sleeps) as client:
        done = client.complete(HI)
    assert _keys(fake) == [MANUAL_KEY, ENV_KEY]
    assert sleeps == []  # a rotation does not wait
    assert [a.outcome for a in done.attempts] == ["rotated", "ok"]
    assert done.attempts[0].credential == "manual"
    assert _status(two_keys, MANUAL_KEY) == "cooling"
    assert _status(two_keys, ENV_KEY) == "ok"


def test_billing_and_auth_rotate_too(fake, sleeps, two_keys):
    fake.push(Reply("status", status=401, body={"error": {"message": "Incorrect API key",
                                                          "code": "invalid_api_key"}}))
    with _client(fake, sleeps) as client:
        client.complete(HI)
    assert _keys(fake) == [MANUAL_KEY, ENV_KEY]


def test_overload_never_rotates_or_cools_a_key(fake, sleeps, two_keys):
    fake.push(Reply("status", status=429, body={"error": {
        "message": "The engine is currently overloaded, please try again later"}}))
    with _client(fake, sleeps) as client:
        done = client.complete(HI)
    assert _keys(fake) == [MANUAL_KEY, MANUAL_KEY]
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


def test_sole_key_rate_limited_is_cooled_and_waited_for(fake, monkeypatch):
    from modelwire.credentials.stores.memory import MemoryStore

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    clock = FakeClock()
    pool = CredentialPool("openai", store=MemoryStore(), clock=clock)
    fake.push(Reply("status", status=429, headers={"retry-after": "2.5"},
                    body={"error": {"message": "Rate limit reached"}}))
    with Client("openai/gpt-fake", base_url=fake.base_url + "/v1", sleep=clock.sleep,
                pools={"openai": pool}, retry=RetryPolicy(jitter=0)) as client:
        done = client.complete(HI)
    assert _keys(fake) == [ENV_KEY, ENV_KEY]
    assert clock.slept == [2.5]  # the server's hint, which is also the key's cooldown
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]


def test_all_keys_cooling_falls_back_when_the_wait_is_long(fake, monkeypatch):
    from modelwire.credentials.stores.memory import MemoryStore

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("FAKE_KEY", "sk-fallback-key-cccccccc3333")
    clock = FakeClock()
    pool = CredentialPool("openai", store=MemoryStore(), clock=clock)
    from modelwire.config import config_from_dict

    config = config_from_dict({"models": {"backup": {
        "provider": "custom", "model": "fake-2", "api_mode": "chat_completions",
        "base_url": fake.base_url + "/v1", "api_key_env": "FAKE_KEY"}}})
    # a quota that resets in an hour: the key cools for an hour, the backup serves
    fake.push(Reply("status", status=429, headers={"retry-after": "3600"},
                    body={"error": {"message": "Rate limit reached"}}))
    with Client("openai/gpt-fake", base_url=fake.base_url + "/v1", sleep=clock.sleep,
                pools={"openai": pool}, config=config, fallback=["backup"]) as client:
        done = client.complete(HI)
    assert clock.slept == []
    assert [r["body"]["model"] for r in fake.requests] == ["gpt-fake", "fake-2"]
    assert done.model == "fake-2"


def test_sole_key_auth_failure_raises(fake, sleeps, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    fake.push(Reply("status", status=401, body={"error": {"message": "Incorrect API key"}}))
    with _client(fake, sleeps) as client, pytest.raises(AuthenticationError) as info:
        client.complete(HI)
    assert ENV_KEY not in str(info.value) and ENV_KEY not in repr(info.value)
    assert len(fake.requests) == 1


def test_leases_are_released_after_success_errors_and_interrupts(fake, sleeps, two_keys):
    fake.push(Reply("status", status=400, body={"error": {"message": "bad"}}))
    with _client(fake, sleeps) as client:
        with pytest.raises(BadRequestError):
            client.complete(HI)
        client.complete(HI)
        with client.stream(HI) as stream:
            next(iter(stream))
    # fill_first with one lease per key: had any lease leaked, the next request would
    # have been handed the other key
    assert _keys(fake) == [MANUAL_KEY] * 3


def test_no_secret_in_any_log_line_while_rotating(fake, sleeps, two_keys, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    fake.push(Reply("status", status=401, body={"error": {
        "message": f"Incorrect API key provided: {MANUAL_KEY}"}}))
    with _client(fake, sleeps) as client:
        done = client.complete(HI)
    assert "rotate" in caplog.text  # the ladder's decision is logged...
    for secret in (MANUAL_KEY, ENV_KEY):  # ...without any key, even one the provider echoed
        assert secret not in caplog.text
        assert all(secret not in (a.error or "") for a in done.attempts)


def test_a_stream_longer_than_the_lease_ttl_renews_its_lease(fake, monkeypatch):
    from modelwire.credentials.stores.memory import MemoryStore

    class CountingStore(MemoryStore):
        renewed = 0

        def renew(self, *args, **kw):
            self.renewed += 1
            return super().renew(*args, **kw)

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    store = CountingStore()
    pool = CredentialPool("openai", store=store, lease_ttl=0.2)  # renewed every 0.1 s
    fake.push(Reply(text=" ".join(f"w{i}" for i in range(40)), gap=0.02))  # ~0.8 s of stream
    with Client("openai/gpt-fake", base_url=fake.base_url + "/v1",
                pools={"openai": pool}) as client:
        stream = client.stream(HI)
        assert len(list(stream)) > 40
    assert store.renewed >= 3
