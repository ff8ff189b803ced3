"""decide(): the failure → action ladder, step by step, and the backoff waits."""

from __future__ import annotations

import pytest

from modelwire.errors import ConfigError
from modelwire.resilience import (
    Failure,
    FallbackChain,
    LadderState,
    RetryPolicy,
    backoff,
    decide,
)

STEADY = RetryPolicy(jitter=0)  # deterministic waits


def f(kind, *, fault=False, retry_after=None):
    return Failure(kind, credential_fault=fault, retry_after=retry_after)


def test_signature_400_strips_once_then_raises():
    assert decide(f("signature_400"), LadderState()).kind == "strip_reasoning"
    again = decide(f("signature_400"), LadderState(stripped_reasoning=True, has_fallback=True))
    assert again.kind == "raise"


def test_grammar_400_strips_schemas_once_then_raises():
    assert decide(f("schema_400"), LadderState()).kind == "strip_schema"
    assert decide(f("schema_400"), LadderState(stripped_schema=True)).kind == "raise"


def test_a_refused_setting_is_dropped_by_the_client_which_knows_which_it_may_drop():
    assert decide(f("param_400"), LadderState(has_fallback=True)).kind == "drop_param"


def test_oauth_auth_refreshes_once_then_rotates_then_falls_back():
    oauth = LadderState(oauth=True, pooled=True, other_credential=True, has_fallback=True)
    assert decide(f("auth", fault=True), oauth).kind == "refresh"
    refreshed = LadderState(oauth=True, refreshed=True, pooled=True, other_credential=True,
                            has_fallback=True)
    assert decide(f("auth", fault=True), refreshed).kind == "rotate"
    alone = LadderState(oauth=True, refreshed=True, pooled=True, has_fallback=True)
    assert decide(f("auth", fault=True), alone).kind == "fallback"
    assert decide(f("auth", fault=True), LadderState(refreshed=True)).kind == "raise"


@pytest.mark.parametrize("kind", ["rate_limit", "billing", "auth"])
def test_credential_faults_rotate_when_another_key_is_free(kind):
    state = LadderState(pooled=True, other_credential=True, retries=4)
    action = decide(f(kind, fault=True), state, STEADY)
    assert action.kind == "rotate"
    assert action.wait == 0  # at once
    # a key given directly (not pooled) has nothing to rotate to
    assert decide(f(kind, fault=True), LadderState(other_credential=True)).kind != "rotate"


def test_overload_never_rotates():
    state = LadderState(pooled=True, other_credential=True)
    assert decide(f("overloaded"), state, STEADY).kind == "retry"


def test_rate_limit_with_no_other_key_backs_off_then_falls_back():
    policy = RetryPolicy(attempts=3, jitter=0)
    waits = []
    for retries in range(2):
        action = decide(f("rate_limit", fault=True), LadderState(retries=retries,
                                                                 has_fallback=True), policy)
        assert action.kind == "retry"
        waits.append(action.wait)
    assert waits == [2.0, 4.0]
    spent = decide(f("rate_limit", fault=True), LadderState(retries=2, has_fallback=True), policy)
    assert spent.kind == "fallback"
    assert decide(f("rate_limit", fault=True), LadderState(retries=2), policy).kind == "raise"


@pytest.mark.parametrize("kind", ["server", "overloaded", "transient", "timeout", "transport",
                                  "malformed", "empty_stream", "unknown"])
def test_retryable_kinds_retry_on_the_same_model(kind):
    assert decide(f(kind), LadderState(has_fallback=True), STEADY).kind == "retry"


def test_server_hint_wins_over_backoff_and_is_capped():
    assert decide(f("rate_limit", retry_after=7.5), LadderState(), STEADY).wait == 7.5
    assert decide(f("rate_limit", retry_after=0.0), LadderState(retries=3), STEADY).wait == 0.0
    assert decide(f("server", retry_after=5000.0), LadderState(), STEADY).wait == 600.0


def test_long_server_hint_prefers_the_fallback_model():
    action = decide(f("rate_limit", retry_after=300.0), LadderState(has_fallback=True), STEADY)
    assert action.kind == "fallback"
    assert decide(f("rate_limit", retry_after=300.0), LadderState(), STEADY).wait == 300.0


def test_a_hint_over_give_up_over_is_not_waited_for():
    # the gateway's policy: its clients retry themselves, a request is not held for minutes
    gateway = RetryPolicy(jitter=0, give_up_over=30.0)
    assert decide(f("rate_limit", retry_after=3600.0), LadderState(), gateway).kind == "raise"
    assert decide(f("rate_limit", retry_after=3600.0), LadderState(has_fallback=True), gateway).kind == "fallback"
    assert decide(f("rate_limit", retry_after=30.0), LadderState(), gateway).wait == 30.0  # at the bound: waited
    assert decide(f("server"), LadderState(), gateway).kind == "retry"  # no hint: plain backoff as before
    # another key first: giving up is about waiting, not about the credential ladder
    assert decide(f("rate_limit", fault=True, retry_after=3600.0),
                  LadderState(pooled=True, other_credential=True), gateway).kind == "rotate"
    assert decide(f("rate_limit", retry_after=3600.0), LadderState(), STEADY).wait == 600.0  # the library waits


@pytest.mark.parametrize("kind", ["model_not_found", "billing"])
def test_model_cannot_serve_falls_back(kind):
    assert decide(f(kind), LadderState(has_fallback=True)).kind == "fallback"
    assert decide(f(kind), LadderState()).kind == "raise"


@pytest.mark.parametrize("kind", ["bad_request", "context_length", "content_filter"])
def test_caller_errors_raise_even_with_a_fallback(kind):
    state = LadderState(has_fallback=True, pooled=True, other_credential=True)
    assert decide(f(kind), state).kind == "raise"


def test_backoff_is_exponential_with_bounded_jitter():
    policy = RetryPolicy()  # base 2, max 60, jitter up to half a base
    for retry, step in [(1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0), (5, 32.0)]:
        waits = [backoff(retry, policy) for _ in range(50)]
        assert all(step <= w <= step + 1.0 for w in waits)
        assert len(set(waits)) > 1  # jittered
    assert backoff(9, policy) == 60.0
    assert backoff(3, RetryPolicy(base=0.5, max_wait=1.0, jitter=0)) == 1.0


# ------------------------------------------------------------------ fallback chain
def _resolve(name):
    if name.startswith("missing"):
        raise ConfigError(f"unknown model {name!r}")
    provider, _, model = name.partition("/")
    return (provider, model)


def test_chain_skips_duplicates_and_unconfigured_entries():
    chain = FallbackChain("a/m1", ["a/m1", "missing-x", "b/m2", "b/m2", "c/m3"], _resolve,
                          key=lambda r: r)
    assert [name for name, _ in chain] == ["a/m1", "b/m2", "c/m3"]
    assert [s.model for s in chain.skipped] == ["a/m1", "missing-x", "b/m2"]
    assert "not configured" in chain.skipped[1].reason
    assert chain.has_after(1) and not chain.has_after(2)


def test_chain_skips_an_entry_resolving_to_the_same_endpoint_and_model():
    chain = FallbackChain("alias", ["a/m1"], lambda n: ("a", "m1"), key=lambda r: r)
    assert len(chain) == 1


def test_primary_resolution_error_propagates():
    with pytest.raises(ConfigError):
        FallbackChain("missing-primary", ["a/m1"], _resolve, key=lambda r: r)


# ------------------------------------------------------------------ every rung, exactly
FALLBACK = LadderState(has_fallback=True)


@pytest.mark.parametrize(("failure", "state", "expected"), [
    (f("signature_400"), LadderState(),
     ("strip_reasoning", 0.0, "thinking signature rejected: strip and resend")),
    (f("signature_400"), LadderState(stripped_reasoning=True, has_fallback=True),
     ("raise", 0.0, "signature rejected again after stripping")),
    (f("schema_400"), LadderState(),
     ("strip_schema", 0.0, "tool schema grammar rejected: strip and resend")),
    (f("schema_400"), LadderState(stripped_schema=True, has_fallback=True),
     ("raise", 0.0, "grammar rejected again after stripping")),
    (f("param_400"), LadderState(),
     ("drop_param", 0.0, "a setting this model does not take: resend without it")),
    (f("auth", fault=True), LadderState(oauth=True),
     ("refresh", 0.0, "401 on an OAuth credential: refresh once")),
    (f("billing", fault=True), LadderState(pooled=True, other_credential=True),
     ("rotate", 0.0, "billing on this credential: use the next one")),
    (f("server"), LadderState(retries=2), ("retry", 8.0, "server: retry 3")),
    (f("server"), LadderState(retries=4, has_fallback=True),
     ("fallback", 0.0, "server: 5 attempts spent")),
    (f("overloaded", retry_after=61.0), FALLBACK,
     ("fallback", 0.0, "server asks to wait 61s: fall back")),
    (f("model_not_found"), FALLBACK, ("fallback", 0.0, "model_not_found on this model")),
    (f("context_length"), FALLBACK, ("raise", 0.0, "context_length: not retryable")),
], ids=["strip", "strip-again", "schema", "schema-again", "param", "refresh", "rotate",
        "retry", "attempts-spent", "long-hint", "cannot-serve", "caller-error"])
def test_each_rung_gives_its_action_wait_and_reason(failure, state, expected):
    action = decide(failure, state, STEADY)
    assert (action.kind, action.wait, action.reason) == expected


def test_the_reason_for_a_hint_not_waited_for_names_both_numbers():
    action = decide(f("rate_limit", retry_after=3600.0), LadderState(),
                    RetryPolicy(jitter=0, give_up_over=30.0))
    assert action.reason == "rate_limit: the server asks to wait 3600s, over 30s: not waited for"


def test_the_last_allowed_attempt_still_retries():
    policy = RetryPolicy(attempts=3, jitter=0)
    assert decide(f("server"), LadderState(retries=1), policy).kind == "retry"  # try 3 of 3
    assert decide(f("server"), LadderState(retries=2), policy).kind == "raise"


def test_a_hint_at_the_fallback_bound_is_waited_for():
    assert decide(f("rate_limit", retry_after=60.0), FALLBACK, STEADY) == \
        decide(f("rate_limit", retry_after=60.0), LadderState(), STEADY)
    assert decide(f("rate_limit", retry_after=60.0), FALLBACK, STEADY).kind == "retry"


def test_a_computed_backoff_never_sends_to_the_fallback():
    slow = RetryPolicy(jitter=0, base=50.0, max_wait=120.0, fallback_over=10.0)
    action = decide(f("server"), LadderState(retries=1, has_fallback=True), slow)
    assert (action.kind, action.wait) == ("retry", 100.0)


def test_a_refreshed_oauth_credential_is_not_refreshed_again():
    action = decide(f("auth", fault=True), LadderState(oauth=True, refreshed=True), STEADY)
    assert action.kind == "raise"


def test_a_negative_hint_means_now():
    assert backoff(1, STEADY, hint=-3.0) == 0.0


def test_backoff_without_jitter_is_exact():
    assert [backoff(n, STEADY) for n in (1, 2, 3, 4, 5, 6)] == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0]
    assert backoff(2, RetryPolicy(base=1.0, jitter=0)) == 2.0


def test_jitter_adds_at_most_its_fraction_of_the_base():
    policy = RetryPolicy(base=4.0, jitter=0.5)
    waits = [backoff(1, policy) for _ in range(200)]
    assert all(4.0 <= w <= 6.0 for w in waits) and max(waits) > 5.0


def test_the_default_policy_is_the_documented_one():
    assert decide(f("server"), LadderState(retries=3)).kind == "retry"
    assert decide(f("server"), LadderState(retries=4)).kind == "raise"
