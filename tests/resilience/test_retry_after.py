"""Reset-hint parsing: every header and body format providers really send."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from conftest import corpus_files
from hypothesis import given
from hypothesis import strategies as st

from modelwire.resilience.retry_after import (
    MAX_RETRY_AFTER,
    parse_duration,
    reset_at,
    retry_after_seconds,
)

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC).timestamp()


def iso(offset: float) -> str:
    return datetime.fromtimestamp(NOW + offset, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1.5s", 1.5),
        ("2h3m", 7380.0),
        ("17.399999999s", 17.399999999),
        ("0s", 0.0),
        ("1h0m0s", 3600.0),
        ("34", 34.0),
        ("2hr 3min", 7380.0),
        ("150us", 0.00015),
    ],
    ids=lambda v: str(v),
)
def test_durations_parse_to_seconds(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "6x", "m", "-"])
def test_non_durations_are_not_hints(text):
    assert parse_duration(text) is None


def test_retry_after_ms_wins_over_retry_after():
    headers = {"retry-after-ms": "1500", "retry-after": "30"}
    assert retry_after_seconds(headers, now=NOW) == 1.5


def test_retry_after_seconds_header_any_case():
    assert retry_after_seconds({"Retry-After": "31"}, now=NOW) == 31.0
    assert retry_after_seconds([("RETRY-AFTER", "2")], now=NOW) == 2.0


def test_retry_after_http_date_is_relative_to_now():
    when = datetime.fromtimestamp(NOW + 90, tz=UTC)
    headers = {"retry-after": format_datetime(when, usegmt=True)}
    assert retry_after_seconds(headers, now=NOW) == pytest.approx(90.0)


def test_retry_after_date_in_the_past_means_now():
    when = datetime.fromtimestamp(NOW - 90, tz=UTC)
    headers = {"retry-after": format_datetime(when, usegmt=True)}
    assert retry_after_seconds(headers, now=NOW) == 0.0


def test_retry_after_beats_ratelimit_reset_headers():
    headers = {"retry-after": "5", "x-ratelimit-reset-requests": "6m0s"}
    assert retry_after_seconds(headers, now=NOW) == 5.0


def test_openai_exhausted_window_decides():
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "20ms",
        "x-ratelimit-remaining-tokens": "5000",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    assert retry_after_seconds(headers, now=NOW) == pytest.approx(0.02)


def test_openai_without_exhausted_window_takes_the_latest_reset():
    headers = {"x-ratelimit-reset-requests": "1.5s", "x-ratelimit-reset-tokens": "2h3m"}
    assert retry_after_seconds(headers, now=NOW) == MAX_RETRY_AFTER
    assert reset_at(headers, now=NOW) == NOW + 7380.0


def test_together_and_mistral_bare_second_resets():
    assert retry_after_seconds({"x-ratelimit-reset": "2"}, now=NOW) == 2.0
    assert retry_after_seconds({"ratelimitbysize-reset": "34"}, now=NOW) == 34.0


def test_anthropic_rfc3339_resets_exhausted_window_decides():
    headers = {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": iso(12),
        "anthropic-ratelimit-tokens-remaining": "1000",
        "anthropic-ratelimit-tokens-reset": iso(50),
    }
    assert retry_after_seconds(headers, now=NOW) == pytest.approx(12.0)
    assert reset_at(headers, now=NOW) == pytest.approx(NOW + 12.0)


def test_anthropic_reset_with_offset_timezone():
    headers = {"anthropic-ratelimit-tokens-reset": "2026-11-29T13:00:30+01:00"}
    assert retry_after_seconds(headers, now=NOW) == pytest.approx(30.0)


def test_cap_applies_to_retry_not_to_reset_at():
    headers = {"retry-after": "7200"}
    assert retry_after_seconds(headers, now=NOW) == MAX_RETRY_AFTER
    assert reset_at(headers, now=NOW) == NOW + 7200.0


def test_reset_at_beyond_a_week_is_bounded():
    assert reset_at({"retry-after": str(30 * 86400)}, now=NOW) == NOW + 7 * 86400.0


@pytest.mark.parametrize(
    ("body", "seconds"),
    [
        ({"error": {"details": [{"metadata": {"quotaResetDelay": "3.5s"}}]}}, 3.5),
        ({"error": {"details": [{"metadata": {"quotaResetDelay": "350ms"}}]}}, 0.35),
        (
            {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]}},
            30.0,
        ),
        ({"error": {"message": "Rate limited. Please retry after 20 seconds."}}, 20.0),
        ({"error": {"message": "Rate limit reached for gpt-4o. Please try again in 6m0s."}}, 360.0),
        ({"error": {"message": "Limit reached. Please try again in 1.5s. Visit ..."}}, 1.5),
        ({"error": {"message": "Usage limit reached, resets in 2hr 3min"}}, 7380.0),
        ({"error": {"message": "slow down", "reset_at": iso(45)}}, 45.0),
        ({"error": {"resets_at": NOW + 60}}, 60.0),
        ({"error": {"retry_until": (NOW + 61) * 1000}}, 61.0),
        # OpenRouter nests the upstream error JSON inside metadata.raw
        ({"error": {"metadata": {"raw": json.dumps({"error": {"details": [
            {"retryDelay": "12s"}]}})}}}, 12.0),
    ],
    ids=[
        "quotaResetDelay-s", "quotaResetDelay-ms", "gemini-RetryInfo", "retry-after-text",
        "try-again-go-duration", "try-again-decimal", "resets-in-hr-min", "reset_at-iso",
        "resets_at-epoch", "retry_until-epoch-ms", "openrouter-raw-json",
    ],
)
def test_body_hints(body, seconds):
    capped = min(seconds, MAX_RETRY_AFTER)
    assert retry_after_seconds({}, body, now=NOW) == pytest.approx(capped)
    assert retry_after_seconds({}, json.dumps(body).encode(), now=NOW) == pytest.approx(capped)
    assert reset_at({}, body, now=NOW) == pytest.approx(NOW + seconds)


def test_plain_text_body_hint():
    assert retry_after_seconds(None, "Too many requests, try again in 7 s", now=NOW) == 7.0


def test_headers_win_over_body():
    body = {"error": {"message": "retry after 100 seconds"}}
    assert retry_after_seconds({"retry-after": "3"}, body, now=NOW) == 3.0


@pytest.mark.parametrize(
    "body",
    [None, {}, {"error": {"message": "Rate limit exceeded"}}, "overloaded", b"\xff\xfe", [1, 2],
     {"error": {"message": "retry 5 times"}}],
    ids=["none", "empty", "no-hint", "text", "bad-bytes", "list", "no-unit"],
)
def test_no_hint_is_none(body):
    assert retry_after_seconds({"content-type": "application/json"}, body, now=NOW) is None
    assert reset_at({}, body, now=NOW) is None


@pytest.mark.parametrize("value", ["soon", "NaN", "inf", ""])
def test_garbage_retry_after_is_ignored(value):
    assert retry_after_seconds({"retry-after": value}, now=NOW) is None


def test_negative_retry_after_means_now():
    assert retry_after_seconds({"retry-after": "-5"}, now=NOW) == 0.0


def test_now_defaults_to_wall_clock():
    assert retry_after_seconds({"retry-after": "10"}) == 10.0


def test_every_recorded_rate_limit_header_parses():
    """Every reset header in the recorded traffic yields a finite, bounded hint."""
    checked = 0
    for path in corpus_files():
        exchange = json.loads(path.read_text())
        headers = exchange["response"]["headers"]
        if not any("reset" in k or "retry-after" in k for k in headers):
            continue
        # a fixed "now" just before the recording's own reset timestamps would be ideal;
        # epoch 0 makes every absolute reset lie in the future, so each must parse.
        found = retry_after_seconds(headers, exchange["response"].get("body"), now=0.0)
        assert found is not None, path.name
        assert 0.0 <= found <= MAX_RETRY_AFTER, path.name
        checked += 1
    assert checked >= 20


@given(h=st.integers(0, 48), m=st.integers(0, 59), s=st.integers(0, 59), ms=st.integers(0, 999))
def test_go_durations_round_trip(h, m, s, ms):
    text = (f"{h}h" if h else "") + (f"{m}m" if m else "") + f"{s}s" + (f"{ms}ms" if ms else "")
    assert parse_duration(text) == pytest.approx(h * 3600 + m * 60 + s + ms / 1000)


@given(st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms", "x-ratelimit-reset-tokens",
                                        "anthropic-ratelimit-tokens-reset", "x-ratelimit-reset"]),
                       st.text(max_size=30)),
       st.one_of(st.none(), st.text(max_size=80), st.binary(max_size=80)))
def test_any_input_gives_none_or_a_bounded_delay(headers, body):
    found = retry_after_seconds(headers, body, now=NOW)
    assert found is None or 0.0 <= found <= MAX_RETRY_AFTER
    at = reset_at(headers, body, now=NOW)
    assert at is None or NOW <= at <= NOW + 7 * 86400


@pytest.mark.parametrize("body", [
    {"error": {"reset_at": None}},
    {"error": {"resets_at": ""}},
    {"error": {"retry_until": True}},
    {"error": {"reset_at": "soon"}},
], ids=["null", "empty", "bool", "text"])
def test_an_unusable_absolute_reset_in_the_body_is_no_hint(body):
    assert retry_after_seconds({}, body, now=NOW) is None


def test_an_unusable_absolute_reset_does_not_hide_the_next_hint():
    body = {"error": {"reset_at": None, "message": "Please try again in 5s."}}
    assert retry_after_seconds({}, body, now=NOW) == 5.0


def test_anthropic_limit_headers_without_a_reset_header_are_no_hint():
    headers = {"anthropic-ratelimit-requests-remaining": "0",
               "anthropic-ratelimit-requests-limit": "50"}
    assert retry_after_seconds(headers, None, now=NOW) is None


@pytest.mark.parametrize(("headers", "body"), [
    ({"anthropic-ratelimit-tokens-reset": iso(-30)}, None),
    ({}, {"error": {"reset_at": NOW - 30}}),
    ({"x-ratelimit-reset-requests": "0s"}, None),
], ids=["anthropic-header", "body-epoch", "openai-zero"])
def test_a_reset_already_past_means_now(headers, body):
    assert retry_after_seconds(headers, body, now=NOW) == 0.0
    assert reset_at(headers, body, now=NOW) == NOW


@pytest.mark.parametrize(("stamp", "seconds"), [
    ("2026-11-29T12:00:30", 30.0),  # no zone: UTC
    ("2026-11-29T12:00:30Z", 30.0),
    ("2026-11-29T13:00:30+01:00", 30.0),
    (str(int(NOW) + 30), 30.0),  # epoch seconds as text
    ((NOW + 30) * 1000, 30.0),  # epoch milliseconds
], ids=["naive", "z", "offset", "epoch-text", "epoch-ms"])
def test_absolute_resets_in_every_form(stamp, seconds):
    assert retry_after_seconds({}, {"resets_at": stamp}, now=NOW) == pytest.approx(seconds)


def test_an_http_date_without_a_zone_is_utc():
    assert retry_after_seconds({"Retry-After": "Sun, 29 Nov 2026 12:00:30 -0000"}, now=NOW) == 30.0


def test_retry_after_ms_that_is_not_a_number_falls_through():
    assert retry_after_seconds({"retry-after-ms": "soon", "retry-after": "7"}, now=NOW) == 7.0


def test_a_remaining_count_that_is_not_a_number_is_not_exhausted():
    headers = {"x-ratelimit-reset-requests": "10s", "x-ratelimit-remaining-requests": "n/a",
               "x-ratelimit-reset-tokens": "50s", "x-ratelimit-remaining-tokens": "100"}
    assert retry_after_seconds(headers, now=NOW) == 50.0  # none exhausted: the latest


def test_json_inside_a_message_string_is_read():
    body = {"error": {"message": json.dumps({"error": {"retryDelay": "12s"}})}}
    assert retry_after_seconds({}, body, now=NOW) == 12.0


def test_a_bytes_body_is_decoded():
    assert retry_after_seconds({}, b'{"error": {"message": "retry after 3 seconds"}}', now=NOW) == 3.0


def test_headers_as_pairs_are_read():
    assert retry_after_seconds([("Retry-After", "4")], now=NOW) == 4.0


def test_a_body_nested_too_deep_is_not_walked():
    deep: object = {"retryDelay": "9s"}
    for _ in range(14):
        deep = {"error": deep}
    assert retry_after_seconds({}, deep, now=NOW) is None


def _nested(levels: int, leaf: object, *, in_list: bool = False) -> object:
    node = leaf
    for _ in range(levels):
        node = [node] if in_list else {"error": node}
    return node


@pytest.mark.parametrize("in_list", [False, True], ids=["dicts", "lists"])
def test_body_hints_are_read_twelve_levels_deep_and_no_deeper(in_list):
    leaf = {"retryDelay": "9s"}
    assert retry_after_seconds({}, _nested(12, leaf, in_list=in_list), now=NOW) == 9.0
    assert retry_after_seconds({}, _nested(13, leaf, in_list=in_list), now=NOW) is None


@pytest.mark.parametrize("body", [
    [{"reset_at": NOW + 30}],
    {"error": {"message": json.dumps({"reset_at": NOW + 30})}},
], ids=["in-a-list", "json-in-a-message"])
def test_absolute_resets_anywhere_in_the_body_are_relative_to_now(body):
    assert retry_after_seconds({}, body, now=NOW) == 30.0


def test_json_looking_text_with_a_text_hint_keeps_the_text_hint():
    body = {"error": {"message": '{"note": 1} please retry after 5 seconds'}}
    assert retry_after_seconds({}, body, now=NOW) == 5.0


def test_json_inside_a_message_after_spaces_is_read():
    body = {"error": {"message": '   {"error": {"retryDelay": "4s"}}'}}
    assert retry_after_seconds({}, body, now=NOW) == 4.0


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"x-ratelimit-reset": "10", "x-ratelimit-remaining": "0",
      "x-ratelimit-reset-tokens": "50s", "x-ratelimit-remaining-tokens": "5"}, 10.0),
    ({"ratelimitbysize-reset": "10", "ratelimitbysize-remaining": "0",
      "x-ratelimit-reset-tokens": "50s", "x-ratelimit-remaining-tokens": "5"}, 10.0),
    ({"x-ratelimit-reset-requests": "10s", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-tokens": "50s"}, 10.0),  # a window without a count is not exhausted
    ({"x-ratelimit-reset-requests": "10s", "x-ratelimit-remaining-requests": "1",
      "x-ratelimit-reset-tokens": "50s", "x-ratelimit-remaining-tokens": "5"}, 50.0),
], ids=["together", "mistral", "no-count", "one-left"])
def test_the_exhausted_window_of_each_header_family_decides(headers, seconds):
    assert retry_after_seconds(headers, now=NOW) == seconds


@pytest.mark.parametrize("stamp", ["2026-11-29t12:00:30z", "2026-11-29T12:00:30z"],
                         ids=["lowercase-t-and-z", "lowercase-z"])
def test_rfc3339_lowercase_letters_are_read(stamp):
    assert retry_after_seconds({}, {"reset_at": stamp}, now=NOW) == 30.0


def test_zone_less_times_are_utc_whatever_the_machines_zone(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert retry_after_seconds({}, {"reset_at": "2026-11-29T12:00:30"}, now=NOW) == 30.0
        date = {"Retry-After": "Sun, 29 Nov 2026 12:00:30 -0000"}
        assert retry_after_seconds(date, now=NOW) == 30.0
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_epoch_values_above_1e12_are_milliseconds():
    assert reset_at({}, {"reset_at": 1e12}, now=NOW) == NOW + 7 * 86400.0  # seconds: far out
    assert reset_at({}, {"reset_at": 1e12 + 1}, now=NOW) == NOW  # ms: 2001, long past


def test_absolute_hints_use_the_wall_clock_when_no_now_is_given():
    import time

    soon = format_datetime(datetime.fromtimestamp(time.time() + 30, tz=UTC), usegmt=True)
    assert 25 <= retry_after_seconds({"Retry-After": soon}) <= 30
    assert time.time() + 25 <= reset_at({"Retry-After": soon}) <= time.time() + 31


def _wrapped(hint: dict, times: int) -> dict:
    for _ in range(times):  # each wrap: a message string holding the JSON of the level below
        hint = {"message": json.dumps(hint)}
    return hint


def test_a_hint_in_json_inside_messages_is_found_down_to_twelve_levels_and_no_deeper():
    # hostile or broken bodies stay cheap to read: each JSON string counts as a level
    assert reset_at(None, _wrapped({"retryDelay": "5s"}, 6), now=1000.0) == 1005.0  # depth 12
    assert reset_at(None, _wrapped({"retryDelay": "5s"}, 7), now=1000.0) is None  # depth 14
