"""Pure cooldown policy: what each outcome does to a credential."""

from __future__ import annotations

import pytest

from modelwire.credentials.cooldown import (
    AUTH_COOLDOWN,
    DEFAULT_COOLDOWN,
    SOLE_CREDENTIAL_MAX_COOLDOWN,
    Mark,
    decide,
)
from modelwire.credentials.stores._ops import apply_mark, choose
from modelwire.errors import AuthenticationError, BillingError, RateLimitError

NOW = 1_800_000_000.0


def test_rate_limit_cools_for_an_hour_by_default():
    mark = decide("rate_limited", auth_type="api_key", now=NOW, sole=False)
    assert mark == Mark("cooling", NOW + DEFAULT_COOLDOWN, "rate_limited", None)


def test_provider_reset_time_wins_over_the_default():
    err = RateLimitError("slow down", headers={"retry-after": "90"})
    mark = decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err)
    assert mark.until == NOW + 90
    assert mark.code == "429"


def test_provider_reset_longer_than_600s_is_kept_for_cooldowns():
    err = RateLimitError("quota", headers={"x-ratelimit-remaining-tokens": "0",
                                           "x-ratelimit-reset-tokens": "2h3m"})
    mark = decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err)
    assert mark.until == NOW + 7380


def test_body_hint_from_a_plain_dict_error():
    err = {"status": 429, "body": {"error": {"message": "Please try again in 20s."}}}
    mark = decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err)
    assert mark.until == NOW + 20


def test_retry_after_attribute_is_used_when_no_headers():
    err = RateLimitError("x", retry_after=42.0)
    assert decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err).until == NOW + 42


def test_sole_credential_cools_at_most_60s_on_rate_limit():
    err = RateLimitError("x", headers={"retry-after": "3000"})
    mark = decide("rate_limited", auth_type="api_key", now=NOW, sole=True, error=err)
    assert mark.until == NOW + SOLE_CREDENTIAL_MAX_COOLDOWN


def test_sole_credential_billing_cools_fully():
    err = BillingError("quota exhausted", headers={"retry-after": "3000"})
    mark = decide("billing", auth_type="api_key", now=NOW, sole=True, error=err)
    assert mark.until == NOW + 3000
    assert decide("billing", auth_type="api_key", now=NOW, sole=True).until == NOW + DEFAULT_COOLDOWN


def test_401_on_api_key_cools_five_minutes():
    mark = decide("auth_failed", auth_type="api_key", now=NOW, sole=False,
                  error=AuthenticationError("bad key"))
    assert mark.status == "cooling"
    assert mark.until == NOW + AUTH_COOLDOWN
    assert mark.reason == "bad key"


@pytest.mark.parametrize("code", ["invalid_grant", "token_revoked", "refresh_token_reused"])
def test_terminal_auth_reason_is_dead(code):
    err = AuthenticationError("gone", body={"error": {"type": code, "message": "gone"}})
    assert decide("auth_failed", auth_type="oauth", now=NOW, sole=False, error=err).status == "dead"


def test_revoked_is_dead():
    assert decide("revoked", auth_type="api_key", now=NOW, sole=True).status == "dead"


@pytest.mark.parametrize("outcome", ["success", "overloaded", "server_error", "error"])
def test_outcomes_that_never_cool(outcome):
    assert decide(outcome, auth_type="api_key", now=NOW, sole=False) is None


def test_unknown_outcome_is_rejected():
    with pytest.raises(ValueError, match="unknown outcome"):
        decide("bogus", auth_type="api_key", now=NOW, sole=False)  # type: ignore[arg-type]


def test_reason_never_carries_a_secret():
    err = AuthenticationError("Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwx")
    mark = decide("auth_failed", auth_type="api_key", now=NOW, sole=False, error=err)
    assert "abcdefghijklmnop" not in mark.reason


# ---------------------------------------------------------------- marks on records
def test_recooling_keeps_the_later_deadline():
    record = {"status": "cooling", "cooldown_until": NOW + 600}
    shorter = apply_mark(record, Mark("cooling", NOW + 60, "429"), NOW)
    assert shorter["cooldown_until"] == NOW + 600
    longer = apply_mark(record, Mark("cooling", NOW + 900, "429"), NOW)
    assert longer["cooldown_until"] == NOW + 900


def test_expired_cooldown_does_not_extend_a_new_one():
    record = {"status": "cooling", "cooldown_until": NOW - 10}
    assert apply_mark(record, Mark("cooling", NOW + 5), NOW)["cooldown_until"] == NOW + 5


def test_dead_is_terminal_until_reset():
    dead = apply_mark({"status": "ok"}, Mark("dead", None, "invalid_grant"), NOW)
    assert apply_mark(dead, Mark("cooling", NOW + 5), NOW)["status"] == "dead"
    assert apply_mark(dead, Mark("ok"), NOW)["status"] == "ok"


def test_choose_skips_cooling_and_dead_and_revives_expired():
    records = {"a": {"status": "dead"}, "b": {"status": "cooling", "cooldown_until": NOW + 1},
               "c": {"status": "cooling", "cooldown_until": NOW}, "d": {"status": "ok"}}
    pick = choose(["a", "b", "c", "d"], records, {}, cap=1, now=NOW, order="ordered", rotation=0)
    assert pick == "c"


def test_choose_at_cap_hands_out_the_least_leased():
    records = {k: {"status": "ok"} for k in "abc"}
    assert choose("abc", records, {"a": 1, "b": 1}, cap=1, now=NOW, order="ordered", rotation=0) == "c"
    assert choose("abc", records, {"a": 3, "b": 1, "c": 2}, cap=1, now=NOW, order="ordered",
                  rotation=0) == "b"


def test_sole_credential_cools_at_most_60s_on_auth_failed():
    err = AuthenticationError("Invalid API key", status=401)
    mark = decide("auth_failed", auth_type="api_key", now=NOW, sole=True, error=err)
    assert mark == Mark("cooling", NOW + SOLE_CREDENTIAL_MAX_COOLDOWN, "401", "Invalid API key")


def test_oauth_string_error_body_invalid_grant_is_terminal():
    err = {"status": 400, "body": {"error": "invalid_grant"}, "message": "refresh failed"}
    mark = decide("auth_failed", auth_type="oauth", now=NOW, sole=False, error=err)
    assert mark == Mark("dead", None, "400", "refresh failed")


@pytest.mark.parametrize("body", [
    {"error": {"code": "token_revoked"}},
    {"error": {"type": "invalid_token"}},
    {"error": {"code": "Refresh_Token_Reused"}},  # compared lowercased
], ids=["inner-code", "inner-type", "mixed-case"])
def test_terminal_reason_inside_the_body_is_dead(body):
    err = AuthenticationError("no", status=401, body=body)
    assert decide("auth_failed", auth_type="oauth", now=NOW, sole=False, error=err).status == "dead"


def test_a_non_terminal_body_error_only_cools():
    err = AuthenticationError("no", status=401, body={"error": "invalid_client_secret_typo"})
    assert decide("auth_failed", auth_type="api_key", now=NOW, sole=False, error=err).status == "cooling"


def test_the_mark_carries_the_providers_code_first_then_the_status():
    coded = RateLimitError("slow", status=429, code="rate_limit_exceeded")
    plain = RateLimitError("slow", status=429)
    assert decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=coded).code \
        == "rate_limit_exceeded"
    assert decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=plain).code == "429"
    bare = decide("billing", auth_type="api_key", now=NOW, sole=False, error={"message": "spent"})
    assert (bare.code, bare.reason) == ("billing", "spent")


def test_reason_is_the_error_class_when_it_has_no_text():
    assert decide("rate_limited", auth_type="api_key", now=NOW, sole=False,
                  error=RateLimitError("")).reason == "RateLimitError"
    assert decide("rate_limited", auth_type="api_key", now=NOW, sole=False,
                  error={"status": 429}).reason is None


def test_reason_is_cut_to_300_characters():
    err = RateLimitError("x" * 500)
    assert len(decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err).reason) == 300


def test_a_retry_after_of_zero_or_less_falls_back_to_the_default():
    for hint in (0, -5):
        err = {"status": 429, "retry_after": hint}
        mark = decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err)
        assert mark.until == NOW + DEFAULT_COOLDOWN


def test_billing_with_a_provider_reset_uses_it():
    err = BillingError("quota", status=429, headers={"retry-after": "120"})
    assert decide("billing", auth_type="api_key", now=NOW, sole=True, error=err).until == NOW + 120


def test_auth_failed_without_an_error_only_cools():
    assert decide("auth_failed", auth_type="api_key", now=NOW, sole=False).status == "cooling"


def test_a_terminal_code_on_the_error_itself_is_dead():
    err = AuthenticationError("no", status=401, code="invalid_grant",
                              body={"error": {"code": "something_else"}})
    assert decide("auth_failed", auth_type="oauth", now=NOW, sole=False, error=err).status == "dead"


def test_a_retry_after_under_a_second_is_used():
    err = {"status": 429, "retry_after": 0.5}
    assert decide("rate_limited", auth_type="api_key", now=NOW, sole=False, error=err).until == NOW + 0.5


def test_billing_cools_the_credential():
    mark = decide("billing", auth_type="api_key", now=NOW, sole=False, error=BillingError("spent"))
    assert mark == Mark("cooling", NOW + DEFAULT_COOLDOWN, "402", "spent")


def test_the_unknown_outcome_error_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"expected one of success, rate_limited, billing, "):
        decide("exploded", auth_type="api_key", now=NOW, sole=False)  # type: ignore[arg-type]


def test_reason_of_a_foreign_exception_is_its_text():
    from modelwire.credentials.cooldown import error_reason

    assert error_reason(ValueError("socket closed")) == "socket closed"
    assert error_reason(None) is None
