"""CredentialPool behaviour, the same on the memory, SQLite and Redis stores."""

from __future__ import annotations

import asyncio
import random

import pytest

from modelwire.credentials import CredentialPool
from modelwire.errors import (
    CredentialError,
    NoCredentialsError,
    OverloadedError,
    PoolExhaustedError,
    RateLimitError,
)

KEYS = {
    "a": "sk-test-aaaaaaaaaaaaaaaa1111",
    "b": "sk-test-bbbbbbbbbbbbbbbb2222",
    "c": "sk-test-cccccccccccccccc3333",
}


def make_pool(store, clock, strategy="fill_first", n=3, **kw) -> CredentialPool:
    pool = CredentialPool("acme", store=store, clock=clock, strategy=strategy, env_vars=(),
                          environ={}, **kw)
    for i, name in enumerate(list(KEYS)[:n]):
        pool.add(KEYS[name], label=name, priority=i, cred_id=name)
    return pool


def labels(pool, k, report=None):
    out = []
    for _ in range(k):
        with pool.lease() as lease:
            out.append(lease.credential.label)
            if report:
                pool.report(lease, report)
    return out


# ---------------------------------------------------------------- strategies
def test_fill_first_uses_the_top_priority_until_it_cools(store, clock):
    pool = make_pool(store, clock)
    assert labels(pool, 3) == ["a", "a", "a"]
    with pool.lease() as lease:
        pool.report(lease, "rate_limited")
    assert labels(pool, 2) == ["b", "b"]


def test_round_robin_rotates(store, clock):
    pool = make_pool(store, clock, "round_robin")
    assert labels(pool, 6) == ["a", "b", "c", "a", "b", "c"]


def test_round_robin_order_survives_a_restart(store, clock):
    assert labels(make_pool(store, clock, "round_robin"), 2) == ["a", "b"]
    restarted = CredentialPool("acme", store=store, clock=clock, strategy="round_robin",
                               env_vars=(), environ={})
    assert labels(restarted, 2) == ["c", "a"]


def test_round_robin_skips_cooling_credentials(store, clock):
    pool = make_pool(store, clock, "round_robin")
    with pool.lease(credential_id="b") as lease:
        pool.report(lease, "rate_limited")
    assert set(labels(pool, 4)) == {"a", "c"}


def test_random_uses_the_injected_rng(store, clock):
    picks = labels(make_pool(store, clock, "random", rng=random.Random(7)), 30)
    assert set(picks) == {"a", "b", "c"}


def test_least_used_picks_the_lowest_request_count(store, clock):
    pool = make_pool(store, clock, "least_used")
    for _ in range(3):
        with pool.lease(credential_id="a"):
            pass
    with pool.lease(credential_id="b"):
        pass
    assert labels(pool, 3) == ["c", "b", "c"]
    counts = {c.label: c.request_count for c in pool.credentials()}
    assert counts == {"a": 3, "b": 2, "c": 2}


def test_unknown_strategy_is_a_config_error(store, clock):
    from modelwire.errors import ConfigError

    with pytest.raises(ConfigError, match="round_robin"):
        CredentialPool("acme", store=store, clock=clock, strategy="fastest", env_vars=())


# ---------------------------------------------------------------- cooldowns
def test_cooled_credential_comes_back_when_the_window_passes(store, clock):
    pool = make_pool(store, clock, n=2)
    with pool.lease() as lease:
        pool.report(lease, "rate_limited", RateLimitError("x", headers={"retry-after": "30"}))
    assert labels(pool, 1) == ["b"]
    clock.advance(30)
    assert labels(pool, 1) == ["a"]  # no reset action needed


def test_cooldown_is_max_of_existing_and_new(store, clock):
    pool = make_pool(store, clock, n=2)
    lease = pool.lease(credential_id="a")
    pool.report(lease, "rate_limited", RateLimitError("x", headers={"retry-after": "500"}))
    pool.report(lease, "rate_limited", RateLimitError("x", headers={"retry-after": "5"}))
    lease.release()
    a = next(c for c in pool.credentials() if c.label == "a")
    assert a.cooldown_until == pytest.approx(clock.t + 500)


def test_overload_never_cools(store, clock):
    pool = make_pool(store, clock, n=2)
    with pool.lease() as lease:
        state = pool.report(lease, "overloaded", OverloadedError("busy"))
    assert state.status == "ok"
    assert labels(pool, 1) == ["a"]


def test_sole_credential_cools_60s_at_most(store, clock):
    pool = make_pool(store, clock, n=1)
    with pool.lease() as lease:
        state = pool.report(lease, "rate_limited")
    assert state.cooldown_until == pytest.approx(clock.t + 60)


def test_sole_credential_billing_keeps_the_full_cooldown(store, clock):
    pool = make_pool(store, clock, n=1)
    with pool.lease() as lease:
        state = pool.report(lease, "billing")
    assert state.cooldown_until == pytest.approx(clock.t + 3600)


def test_401_cools_an_api_key_five_minutes(store, clock):
    pool = make_pool(store, clock, n=2)
    with pool.lease() as lease:
        state = pool.report(lease, "auth_failed")
    assert state.status == "cooling"
    assert state.cooldown_until == pytest.approx(clock.t + 300)


def test_dead_is_never_selected_again(store, clock):
    pool = make_pool(store, clock, n=2)
    with pool.lease() as lease:
        pool.report(lease, "revoked")
    clock.advance(10 * 86400)
    assert labels(pool, 3) == ["b", "b", "b"]


def test_exhausted_pool_says_when_the_first_frees(store, clock):
    pool = make_pool(store, clock, n=2)
    for name, secs in (("a", "120"), ("b", "45")):
        with pool.lease(credential_id=name) as lease:
            pool.report(lease, "rate_limited", RateLimitError("x", headers={"retry-after": secs}))
    with pytest.raises(PoolExhaustedError) as info:
        pool.lease()
    assert info.value.next_available_at == pytest.approx(clock.t + 45)
    assert "45 s" in str(info.value)


def test_all_dead_pool_has_no_next_available_time(store, clock):
    pool = make_pool(store, clock, n=1)
    with pool.lease() as lease:
        pool.report(lease, "revoked")
    with pytest.raises(PoolExhaustedError, match="log") as info:
        pool.lease()
    assert info.value.next_available_at is None


def test_wait_for_credential_waits_for_the_first_to_free(store, clock):
    pool = make_pool(store, clock, n=2)
    for name in ("a", "b"):
        with pool.lease(credential_id=name) as lease:
            pool.report(lease, "rate_limited", RateLimitError("x", headers={"retry-after": "40"}))
    start = clock.t
    with pool.wait_for_credential(deadline=start + 60) as lease:
        assert lease.credential.label == "a"
    assert 40 <= clock.t - start < 41


def test_wait_for_credential_gives_up_at_the_deadline(store, clock):
    pool = make_pool(store, clock, n=1)
    with pool.lease() as lease:
        pool.report(lease, "billing")
    with pytest.raises(PoolExhaustedError):
        pool.wait_for_credential(deadline=clock.t + 60)
    assert clock.slept == []  # nothing would free in time: no pointless wait


async def test_wait_for_credential_async(store, clock):
    pool = make_pool(store, clock, n=1)
    with pool.lease() as lease:
        pool.report(lease, "rate_limited", RateLimitError("x", headers={"retry-after": "0.05"}))
    real = asyncio.get_running_loop().time()

    async def advance():
        await asyncio.sleep(0.01)
        clock.advance(1)

    task = asyncio.create_task(advance())
    async with await pool.wait_for_credential_async(deadline=clock.t + 5) as lease:
        assert lease.credential.label == "a"
    await task
    assert asyncio.get_running_loop().time() - real < 2


def test_no_credentials_names_the_variables(store, clock):
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",), environ={})
    with pytest.raises(NoCredentialsError, match="ACME_API_KEY"):
        pool.lease()


# ---------------------------------------------------------------- leases
def test_lease_cap_spreads_concurrent_requests(store, clock):
    pool = make_pool(store, clock)
    held = [pool.lease() for _ in range(3)]
    assert sorted(lease.credential.label for lease in held) == ["a", "b", "c"]
    fourth = pool.lease()  # all at cap: the least-leased one, no blocking
    assert fourth.credential.label == "a"
    assert store.lease_counts("acme", clock.t) == {"a": 2, "b": 1, "c": 1}
    for lease in [*held, fourth]:
        lease.release()
    assert store.lease_counts("acme", clock.t) == {}


def test_lease_is_released_on_error_and_cancellation(store, clock):
    pool = make_pool(store, clock, n=1)
    with pytest.raises(RuntimeError), pool.lease():
        raise RuntimeError("boom")
    with pytest.raises(KeyboardInterrupt), pool.lease():
        raise KeyboardInterrupt

    async def cancelled():
        async with pool.lease():
            await asyncio.sleep(10)

    async def run():
        task = asyncio.create_task(cancelled())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert store.lease_counts("acme", clock.t) == {}


def test_expired_lease_frees_itself_and_renew_extends(store, clock):
    pool = make_pool(store, clock, n=2, lease_ttl=60)
    crashed = pool.lease()  # never released: its holder "crashed"
    streaming = pool.lease()
    clock.advance(50)
    assert streaming.renew() is True
    clock.advance(20)
    assert store.lease_counts("acme", clock.t) == {streaming.credential.id: 1}
    assert crashed.renew() is False
    streaming.release()


def test_release_is_idempotent(store, clock):
    pool = make_pool(store, clock, n=1)
    lease = pool.lease()
    lease.release()
    lease.release()
    assert store.lease_counts("acme", clock.t) == {}


# ---------------------------------------------------------------- priority & env
def test_manual_first_then_env_in_catalog_order(store, clock):
    environ = {"ACME_TOKEN": "sk-env-tttttttttttttttt0001", "ACME_API_KEY": "sk-env-kkkkkkkkkkkk0002"}
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_TOKEN", "ACME_API_KEY"),
                          environ=environ)
    pool.add("sk-man-mmmmmmmmmmmmmmmm0003", label="mine", priority=5)
    order = [c.label for c in pool.credentials()]
    assert order == ["mine", "ACME_TOKEN", "ACME_API_KEY"]


def test_env_secret_is_never_written_to_the_store(store, clock):
    secret = "sk-env-secretsecretsecret9999"
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",),
                          environ={"ACME_API_KEY": secret})
    with pool.lease() as lease:
        assert lease.secret == secret
        pool.report(lease, "rate_limited")
    stored = store.list("acme")
    assert len(stored) == 1
    assert stored[0].secret == ""
    assert stored[0].id.startswith("env-") and secret not in stored[0].id
    assert stored[0].status == "cooling"


def test_processes_with_the_same_env_key_share_its_state(store, clock):
    environ = {"ACME_API_KEY": "sk-env-shared000000000000001"}
    one = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",), environ=environ)
    two = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",), environ=environ)
    with one.lease() as lease:
        one.report(lease, "billing")
    with pytest.raises(PoolExhaustedError):
        two.lease()


def test_a_process_without_the_variable_deletes_nothing(store, clock):
    environ = {"ACME_API_KEY": "sk-env-shared000000000000001"}
    with_var = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",),
                              environ=environ)
    with with_var.lease() as lease:
        with_var.report(lease, "billing")
    without = CredentialPool("acme", store=store, clock=clock, env_vars=("ACME_API_KEY",), environ={})
    assert without.credentials() == []
    assert [c.status for c in store.list("acme")] == ["cooling"]


def test_find_remove_reset_by_id_or_label(store, clock):
    pool = make_pool(store, clock, n=2)
    with pool.lease(credential_id="a") as lease:
        pool.report(lease, "revoked")
    assert pool.reset("a").status == "ok"
    assert pool.remove("b").label == "b"
    assert [c.label for c in pool.credentials()] == ["a"]
    with pytest.raises(CredentialError, match="no acme credential"):
        pool.find("b")


def test_for_provider_reads_config(store, clock):
    config = {"credential_pool": {"strategies": {"acme": "round_robin"}, "max_concurrent": 2,
                                  "lease_ttl": 30}}
    pool = CredentialPool.for_provider("acme", config=config, store=store, clock=clock,
                                       env_vars=(), environ={})
    assert (pool.strategy, pool.max_concurrent, pool.lease_ttl) == ("round_robin", 2, 30.0)


def test_for_provider_reads_the_validated_config_object(tmp_path, clock):
    from modelwire.config import load_config

    path = tmp_path / "modelwire.yaml"
    path.write_text(
        f"credential_pool:\n  store: sqlite:///{tmp_path}/pool.db\n"
        "  strategies: {groq: least_used}\n"
    )
    pool = CredentialPool.for_provider("groq", config=load_config(str(path)), clock=clock,
                                       env_vars=(), environ={})
    assert pool.strategy == "least_used"
    assert pool.store.url == f"sqlite:///{tmp_path}/pool.db"


def test_env_variables_come_from_the_catalog_row(store, clock):
    pool = CredentialPool("openrouter", store=store, clock=clock,
                          environ={"OPENROUTER_API_KEY": "sk-or-v1-fromcatalog00000001"})
    assert pool.env_vars == ("OPENROUTER_API_KEY",)
    [cred] = pool.credentials()
    assert cred.source == "env:OPENROUTER_API_KEY" and cred.secret.endswith("0001")


def test_two_variables_with_the_same_key_are_one_credential(store, clock):
    same = "sk-test-samesamesamesame0042"
    pool = CredentialPool("acme", store=store, clock=clock, env_vars=("A_KEY", "B_KEY"),
                          environ={"A_KEY": same, "B_KEY": same})
    assert [c.label for c in pool.credentials()] == ["A_KEY"]


def test_fingerprints_differ_between_stores(clock):
    from modelwire.credentials.stores.memory import MemoryStore

    environ = {"ACME_API_KEY": "sk-test-fingerprint0000000001"}
    ids = {CredentialPool("acme", store=MemoryStore(), clock=clock, env_vars=("ACME_API_KEY",),
                          environ=environ).credentials()[0].id for _ in range(2)}
    assert len(ids) == 2  # a random salt per store: the id reveals nothing across stores
