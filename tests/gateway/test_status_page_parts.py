"""The status page's parts without a server: the recent-requests ring, the overhead
percentiles, the usage chart and the session token."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

import pytest

from modelwire.completion import Attempt, Completion
from modelwire.gateway.ui_chart import usage_svg
from modelwire.gateway.ui_recent import MINUTES, RecentRequests, percentiles
from modelwire.gateway.ui_session import cookie_header, mint, presented_token, same_origin, valid
from modelwire.providers.prices import Price

SVG = "{http://www.w3.org/2000/svg}"


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Books:  # what RecentRequests.record reads of a request's Ctx
    door: str = "chat_completions"
    raw_model: Any = "gpt-x"
    model: str = "chat"
    upstream: str = "openai/gpt-x"
    status: int = 200
    started: float = 0.0
    overhead: float | None = 0.0005
    lane: bool = False
    lane_tries: int = 0
    completion: Any = None


def _completion(*outcomes: str) -> Completion:
    attempts = tuple(Attempt("openai", "gpt-x", o) for o in outcomes)
    return Completion({"role": "assistant", "content": "secret answer"}, "stop",
                      {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
                      "gpt-x", "openai", attempts=attempts, price=Price(input=2.0, output=4.0))


def test_the_ring_keeps_only_the_last_requests_newest_first():
    recent = RecentRequests(3, clock=Clock())
    for i in range(5):
        recent.record(Books(raw_model=f"m{i}", started=time.perf_counter()))
    assert len(recent) == 3
    assert [r.asked for r in recent.requests()] == ["m4", "m3", "m2"]


def test_a_recorded_request_has_its_attempts_and_cost_but_not_its_content():
    recent = RecentRequests(clock=Clock())
    recent.record(Books(completion=_completion("rotated", "ok"), started=time.perf_counter()))
    recent.record(Books(completion=None, lane=True, lane_tries=1, status=429, raw_model=None,
                        started=time.perf_counter()))
    lane, translated = recent.requests()
    assert (translated.attempts, translated.cost_usd, translated.provider) == (2, 0.004, "openai")
    assert (lane.attempts, lane.cost_usd, lane.asked, lane.status) == (2, None, "-", 429)
    assert "secret answer" not in repr(recent._ring)  # the completion's message is not kept


def test_requests_per_minute_cover_the_last_hour_with_empty_minutes_as_zero():
    clock = Clock(60 * 30_000_000 + 30)
    recent = RecentRequests(clock=clock)
    recent.record(Books(status=200))
    recent.record(Books(status=502))
    clock.now += 120  # two minutes later
    recent.record(Books(status=200))
    rows = recent.per_minute()
    assert len(rows) == MINUTES and rows[-1] == (60 * 30_000_002, 1, 0)
    assert rows[-3] == (60 * 30_000_000, 2, 1) and rows[-2][1:] == (0, 0)
    clock.now += 3600  # an hour on: all of it has aged out
    assert all(n == 0 for _, n, _ in recent.per_minute())


@pytest.mark.parametrize(("values", "expected"), [
    ([], {"p50": None, "p90": None, "p99": None}),
    ([7.0], {"p50": 7.0, "p90": 7.0, "p99": 7.0}),
    ([float(v) for v in range(1, 101)], {"p50": 50.0, "p90": 90.0, "p99": 99.0}),
], ids=["none", "one", "hundred"])
def test_overhead_percentiles_by_nearest_rank(values, expected):
    assert percentiles(values) == expected


def _svg(per_minute):
    root = ET.fromstring(usage_svg(per_minute))  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg" and not root.attrib.get("style")
    return root


def test_the_chart_of_an_empty_hour_says_so_and_draws_no_bars():
    root = _svg([(i * 60, 0, 0) for i in range(MINUTES)])
    assert root.findall(f".//{SVG}rect") == []
    assert "no requests in the last hour" in "".join(root.itertext())


def test_the_chart_of_a_full_hour_draws_a_bar_per_minute_scaled_to_the_busiest():
    minutes = [(i * 60, i + 1, 1 if i == 59 else 0) for i in range(MINUTES)]
    root = _svg(minutes)
    bars = root.findall(f".//{SVG}rect[@class='bar']")
    errors = root.findall(f".//{SVG}rect[@class='errors']")
    assert len(bars) == MINUTES and len(errors) == 1
    heights = [float(b.get("height")) for b in bars]
    assert heights == sorted(heights) and heights[-1] == max(heights) > 60 * heights[0] * 0.9
    assert "1830 requests, 1 errors" in root.find(f"{SVG}title").text
    assert not re.search(r"style=", usage_svg(minutes))  # the page's CSP allows no inline styles


def test_a_session_token_is_valid_until_it_expires_and_only_under_its_key():
    key, other = b"adm-" + b"one-0123456789", b"adm-" + b"two-0123456789"
    token = mint(key, 1000.0, lifetime=60)
    assert key.decode() not in token
    assert valid(token, [other, key], 1059.0)
    assert not valid(token, [key], 1060.0)  # expired
    assert not valid(token, [other], 1000.0)  # its key was removed
    forged = token.replace(token.split(".")[0], "9999999999")  # a later expiry, the old MAC
    assert not valid(forged, [key], 1000.0)
    for junk in ("", "a.b", "1.2.3.4", "x.y.z", None):
        assert not valid(junk, [key], 0.0)


def test_the_session_cookie_is_read_back_and_its_flags_are_strict():
    header = cookie_header("1.ab.cd", secure=True)
    assert header == "modelwire_ui=1.ab.cd; Path=/ui; Max-Age=43200; HttpOnly; SameSite=Strict; Secure"
    assert presented_token({"cookie": "a=1; modelwire_ui=1.ab.cd; b=2"}) == "1.ab.cd"
    assert presented_token({"cookie": "a=1"}) is None and presented_token({}) is None


@pytest.mark.parametrize(("headers", "allowed"), [
    ({"host": "127.0.0.1:4000"}, True),  # curl: no Origin, no Sec-Fetch-Site
    ({"host": "127.0.0.1:4000", "origin": "http://127.0.0.1:4000", "sec-fetch-site": "same-origin"}, True),
    ({"host": "127.0.0.1:4000", "origin": "https://evil.example"}, False),
    ({"host": "127.0.0.1:4000", "origin": "null"}, False),
    ({"host": "127.0.0.1:4000", "sec-fetch-site": "cross-site"}, False),
    ({"host": "127.0.0.1:4000", "origin": "https://127.0.0.1:4000"}, False),  # another scheme
    ({"host": "127.0.0.1:4000", "origin": "null", "sec-fetch-site": "same-origin"}, True),  # no-referrer pages
    ({"host": "127.0.0.1:4000", "origin": "http://127.0.0.1:4000", "sec-fetch-site": "same-site"}, False),
], ids=["no-origin", "same-origin", "other-site", "null-origin", "cross-site", "other-scheme",
        "fetch-site-wins", "sibling-port"])
def test_a_sign_in_is_taken_only_from_the_gateways_own_origin(headers, allowed):
    assert same_origin(headers, "http") is allowed
