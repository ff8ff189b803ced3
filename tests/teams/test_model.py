"""Budgets, keys and durations as users write them."""

from __future__ import annotations

import calendar

import pytest

from modelwire.teams.model import Budget, VirtualKey, hash_key, new_secret, parse_duration

WED = float(calendar.timegm((2026, 12, 16, 15, 30, 0)))  # a Wednesday


@pytest.mark.parametrize(("text", "usd", "period"), [
    ("50/month", 50.0, "month"), ("5/day", 5.0, "day"), ("$20/week", 20.0, "week"),
    ("100", 100.0, "total"), ("0.5/total", 0.5, "total")], ids=str)
def test_budgets_parse_as_usd_per_period(text, usd, period):
    assert Budget.parse(text) == Budget(usd, period)


@pytest.mark.parametrize("text", ["lots", "5/year", "-1/day", ""], ids=repr)
def test_a_bad_budget_says_the_form(text):
    with pytest.raises(ValueError, match="50/month|period|negative"):
        Budget.parse(text)


def test_budget_periods_are_utc_calendar_periods():
    assert Budget(1, "day").resets_at(WED) == calendar.timegm((2026, 12, 17, 0, 0, 0))
    assert Budget(1, "week").window_start(WED) == calendar.timegm((2026, 12, 14, 0, 0, 0))
    assert Budget(1, "month").resets_at(WED) == calendar.timegm((2027, 1, 1, 0, 0, 0))
    assert Budget(1, "total").window_start(WED) == 0.0 and Budget(1, "total").resets_at(WED) is None


def test_a_new_secret_is_long_urlsafe_and_stored_only_as_its_hash():
    secret = new_secret()
    assert secret.startswith("mw-") and len(secret) == 46
    assert set(secret[3:]) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert hash_key(secret) != secret and len(hash_key(secret)) == 64
    assert new_secret() != secret


def test_model_globs_are_matched_case_sensitively_and_empty_means_all():
    key = VirtualKey("k", "a", "h", "p", models=("claude-*", "gpt-5*"))
    assert key.allows("claude-sonnet-4-5") and key.allows("gpt-5-mini")
    assert not key.allows("gpt-4o") and not key.allows("Claude-x")
    assert VirtualKey("k", "a", "h", "p").allows("anything")


def test_durations():
    assert parse_duration("90d") == 90 * 86400 and parse_duration("12h") == 43200
    with pytest.raises(ValueError, match="90d"):
        parse_duration("soon")
