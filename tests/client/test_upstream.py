"""The Client's public Upstream seam, as a relay uses it: a request of the relay's own goes
out under a credential of the Client's pool, through the Client's transport, and its
outcome reaches the pool's books (cooldowns, refused settings); the pool's state is read
back for a health check. Driven against the emulator."""

from __future__ import annotations

import asyncio
import dataclasses

import orjson

from modelwire import AsyncClient, RateLimitError
from modelwire.client import CredentialHealth, Upstream
from modelwire.credentials import CredentialPool
from modelwire.credentials.stores.memory import MemoryStore

KEY_A = "sk-test-" + "aaaaaaaaaaaaaaaa1111"
KEY_B = "sk-test-" + "bbbbbbbbbbbbbbbb2222"
HI = {"messages": [{"role": "user", "content": "hi"}], "stream": False}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def time(self) -> float:
        return self.now


def _pool(clock: Clock, *keys: str) -> CredentialPool:
    pool = CredentialPool("openai", store=MemoryStore(), clock=clock, env_vars=(), environ={})
    for i, key in enumerate(keys):
        pool.add(key, label=f"k{i}", priority=i, cred_id=f"k{i}")
    return pool


def _client(wire, pool: CredentialPool) -> AsyncClient:
    return AsyncClient(f"openai/{wire.model}", base_url=wire.base_url("chat_completions"),
                       pools={"openai": pool})


def _relay(up: Upstream, body: dict) -> tuple[int, bytes]:
    async def go() -> tuple[int, bytes]:
        lease = up.lease()
        try:
            resp = await up.send(up.encode({**body, "model": up.model_id}, lease))
            if resp.status >= 400:
                up.failed(lease, up.decode_error(resp.status, resp.headers, resp.body))
            else:
                up.succeeded(lease)
            return resp.status, resp.body
        finally:
            up.release(lease)

    return asyncio.run(go())


def test_a_relayed_request_goes_out_under_a_pool_credential_and_is_answered(wire):
    pool = _pool(Clock(), KEY_A)
    up = _client(wire, pool).upstream()
    assert (up.provider, up.model_id, up.api_mode) == ("openai", wire.model, "chat_completions")
    status, body = _relay(up, HI)
    assert status == 200 and orjson.loads(body)["choices"][0]["message"]["role"] == "assistant"
    sent = wire.requests()[-1]
    assert sent["path"].endswith("/chat/completions") and sent["headers"]["authorization"].endswith("1111")
    assert pool.credentials()[0].is_available(pool.clock.time())  # released, not cooling


def test_a_rate_limited_relay_cools_the_key_and_health_says_when_one_frees(wire):
    clock = Clock()
    pool = _pool(clock, KEY_A)
    client = _client(wire, pool)
    up = client.upstream()
    assert up.health() is None  # the pool was never opened: nothing to report
    wire.fault("rate_limit", retry_after=30)
    status, _ = _relay(up, HI)
    assert status == 429
    health = up.health()
    assert health is not None
    (cred,) = health.credentials  # each credential: masked, never its secret
    assert (cred.label, cred.masked, cred.state, cred.cooling_for) == ("k0", "sk-…1111", "cooling", 30.0)
    assert cred.reason and KEY_A not in repr(health)
    assert dataclasses.replace(health, credentials=()) == CredentialHealth(
        store="ok", count=1, usable=False, available_in=30.0, states=(("cooling", 1),),
        pool="openai@memory://")
    assert client.upstreams() == (up,)  # the primary, the only model resolved


def test_a_failure_is_classified_and_a_refused_setting_is_remembered(wire):
    up = _client(wire, _pool(Clock(), KEY_A)).upstream()
    lease = up.lease()
    try:
        error = up.decode_error(400, {"content-type": "application/json"}, orjson.dumps({"error": {
            "message": "Unsupported parameter: 'temperature'", "type": "invalid_request_error",
            "param": "temperature", "code": "unsupported_parameter"}}))
        failure = up.failed(lease, error)
    finally:
        up.release(lease)
    assert failure.kind == "param_400"
    assert up.refused == frozenset({"temperature"})
    assert error.provider == "openai" and error.model == wire.model


def test_a_rate_limit_error_names_the_upstream_it_came_from(wire):
    up = _client(wire, _pool(Clock(), KEY_A)).upstream()
    error = up.decode_error(429, {"retry-after": "3"}, b'{"error": {"message": "slow down"}}')
    assert isinstance(error, RateLimitError) and error.retry_after == 3.0
    assert (error.provider, error.model) == ("openai", wire.model)


def test_the_head_of_a_relayed_request_carries_no_credential(wire):
    up = _client(wire, _pool(Clock(), KEY_A)).upstream()
    method, path, headers = up.head(stream=True)
    assert (method, path) == ("POST", "/chat/completions")
    assert "authorization" not in headers
    lease = up.lease()
    try:
        assert up.auth_headers(lease) == {"authorization": f"Bearer {KEY_A}"}
        assert KEY_A not in repr(lease) and KEY_A not in repr(up)
    finally:
        up.release(lease)


def test_the_turn_loop_and_a_relay_share_one_upstream_per_model(wire):
    client = _client(wire, _pool(Clock(), KEY_A, KEY_B))
    done = asyncio.run(client.complete(HI["messages"]))
    assert done.timing is not None and done.timing.work > 0 and done.timing.waited > 0
    assert client.upstream() is client.upstreams()[0]
