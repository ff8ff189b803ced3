"""Server hints about when to try again: ``Retry-After`` and its many cousins.

Pure functions over a response's headers and body. Two questions, two answers:

- :func:`retry_after_seconds` — how long to wait before retrying *this* request
  (capped at :data:`MAX_RETRY_AFTER`, 600 s, so a wrong hint cannot park an agent
  for a day);
- :func:`reset_at` — the absolute time (epoch seconds) a credential's limit resets,
  for cooldowns; not capped at 600 s, because a daily quota really does reset in
  hours (capped only at :data:`MAX_RESET_HORIZON` as a sanity bound).

Hints, first found wins:

1. ``retry-after-ms`` (OpenAI SDK convention, milliseconds);
2. ``Retry-After``: delay-seconds or an HTTP date (RFC 9110 §10.2.3);
3. OpenAI-style ``x-ratelimit-reset-requests`` / ``-tokens`` (and any other
   ``x-ratelimit-reset-*``): Go-style durations ``6m0s``, ``20ms``, ``1.5s``, ``2h3m``;
   Together/Mistral-style bare seconds (``x-ratelimit-reset``, ``ratelimitbysize-reset``);
4. Anthropic ``anthropic-ratelimit-*-reset``: RFC 3339 timestamps;
5. body hints: ``reset_at`` / ``resets_at`` / ``retry_until`` (absolute), Google
   ``quotaResetDelay`` (``"3.5s"``, ``"350ms"``), Google ``RetryInfo.retryDelay``
   (``"30s"``), and message text such as "retry after 20 seconds", "Please try
   again in 6m0s", "resets in 2hr 3min".

Among several rate-limit windows (requests vs tokens), the ones reported exhausted
(``remaining: 0``) decide; when none says so, the latest reset decides — waiting
for the earliest would just earn another 429.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..types import JSONValue


__all__ = [
    "MAX_RESET_HORIZON",
    "MAX_RETRY_AFTER",
    "parse_duration",
    "reset_at",
    "retry_after_seconds",
]

MAX_RETRY_AFTER = 600.0  # seconds; Hermes raised 120 → 600 after real 5-minute windows (#26293)
MAX_RESET_HORIZON = 7 * 86400.0  # a reset hint further out than a week is not believed

_UNIT_SECONDS = {
    "ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "us": 1e-6, "µs": 1e-6, "ns": 1e-9,
}
_DURATION_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(ms|us|µs|ns|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)",
    re.IGNORECASE,
)
_DURATION_FULL = re.compile(
    r"^\s*(?:\d+(?:\.\d+)?\s*(?:ms|us|µs|ns|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\s*)+$",
    re.IGNORECASE,
)
# "retry after 20 seconds", "try again in 6m0s", "retry in 1.5s", "resets in 2hr 3min",
# "Please retry after 30s" — the duration that follows the phrase.
_TEXT_HINT = re.compile(
    r"(?:retry(?:\s+again)?(?:\s+(?:after|in))?|try\s+again\s+in|resets?\s+in|wait)\s+"
    r"((?:\d+(?:\.\d+)?\s*(?:ms|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)"
    r"(?![A-Za-z])\s*)+)",
    re.IGNORECASE,
)
_ABSOLUTE_KEYS = ("reset_at", "resets_at", "retry_until")


# ----------------------------------------------------------------------------- public
def retry_after_seconds(
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None,
    body: JSONValue = None,
    now: float | None = None,
) -> float | None:
    """Seconds to wait before retrying, from the response's hints; ``None`` without any.

    Never negative, capped at :data:`MAX_RETRY_AFTER`. ``now`` (epoch seconds) is
    injectable for tests; it matters only for absolute hints (dates, timestamps).
    """
    delay = _delay(headers, body, time.time() if now is None else now)
    if delay is None:
        return None
    return min(delay, MAX_RETRY_AFTER)


def reset_at(
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None,
    body: JSONValue = None,
    now: float | None = None,
) -> float | None:
    """Absolute epoch time the provider says the limit resets; ``None`` without a hint.

    Not capped at 600 s (a quota may reset tomorrow); bounded by :data:`MAX_RESET_HORIZON`.
    """
    now = time.time() if now is None else now
    delay = _delay(headers, body, now)
    if delay is None:
        return None
    return now + min(delay, MAX_RESET_HORIZON)


def parse_duration(text: str) -> float | None:
    """``"6m0s"`` → 360.0, ``"20ms"`` → 0.02, ``"2h3m"`` → 7380.0, ``"1.5"`` → 1.5 (seconds)."""
    text = text.strip()
    if not text:
        return None
    try:
        return _non_negative(float(text))
    except ValueError:
        pass
    if not _DURATION_FULL.match(text):
        return None
    return sum(float(n) * _UNIT_SECONDS[u.lower()] for n, u in _DURATION_PART.findall(text))


# ----------------------------------------------------------------------------- headers
def _delay(headers: Any, body: JSONValue, now: float) -> float | None:
    h = _lower(headers)
    for finder in (_retry_after_ms, _retry_after, _openai_resets, _anthropic_resets):
        found = finder(h, now)
        if found is not None:
            return found
    return _body_hint(body, now)


def _lower(headers: Any) -> dict[str, str]:
    if not headers:
        return {}
    items = headers.items() if hasattr(headers, "items") else headers
    return {str(k).lower(): str(v) for k, v in items}


def _retry_after_ms(h: dict[str, str], now: float) -> float | None:
    value = h.get("retry-after-ms")
    if value is None:
        return None
    try:
        return _non_negative(float(value) / 1000.0)
    except ValueError:
        return None


def _retry_after(h: dict[str, str], now: float) -> float | None:
    value = h.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return _non_negative(float(value))
    except ValueError:
        pass
    try:  # HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT"
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


def _openai_resets(h: dict[str, str], now: float) -> float | None:
    # OpenAI/Groq: x-ratelimit-reset-requests / -tokens (/ -input-images) as Go durations.
    # Together: x-ratelimit-reset (seconds); Mistral: ratelimitbysize-reset (seconds).
    windows: list[tuple[float, bool]] = []
    for name, value in h.items():
        if name.startswith("x-ratelimit-reset-"):
            kind = name[len("x-ratelimit-reset-"):]
            remaining = h.get(f"x-ratelimit-remaining-{kind}")
        elif name == "x-ratelimit-reset":
            remaining = h.get("x-ratelimit-remaining")
        elif name == "ratelimitbysize-reset":
            remaining = h.get("ratelimitbysize-remaining")
        else:
            continue
        seconds = parse_duration(value)
        if seconds is not None:
            windows.append((seconds, _is_zero(remaining)))
    return _pick(windows)


def _anthropic_resets(h: dict[str, str], now: float) -> float | None:
    # anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-reset: RFC 3339.
    windows: list[tuple[float, bool]] = []
    for name, value in h.items():
        if name.startswith("anthropic-ratelimit-") and name.endswith("-reset"):
            kind = name[len("anthropic-ratelimit-"):-len("-reset")]
            when = _parse_absolute(value)
            if when is not None:
                remaining = h.get(f"anthropic-ratelimit-{kind}-remaining")
                windows.append((max(0.0, when - now), _is_zero(remaining)))
    return _pick(windows)


def _pick(windows: list[tuple[float, bool]]) -> float | None:
    if not windows:
        return None
    exhausted = [s for s, is_exhausted in windows if is_exhausted]
    return max(exhausted) if exhausted else max(s for s, _ in windows)


def _is_zero(remaining: str | None) -> bool:
    if remaining is None:
        return False
    try:
        return float(remaining) <= 0
    except ValueError:
        return False


# ----------------------------------------------------------------------------- body
def _body_hint(body: JSONValue, now: float) -> float | None:
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return _text_hint(body)
    return _structured_hint(body, now, depth=0)


def _structured_hint(node: JSONValue, now: float, depth: int) -> float | None:
    """Walk a parsed error body (bounded depth) for the known hint fields."""
    if depth > 12:
        return None
    if isinstance(node, dict):
        for key in _ABSOLUTE_KEYS:
            if key in node:
                when = _parse_absolute(node[key])
                if when is not None:
                    return max(0.0, when - now)
        for key in ("quotaResetDelay", "retryDelay"):  # Google: quota metadata, RetryInfo
            value = node.get(key)
            if isinstance(value, str) and parse_duration(value) is not None:
                return parse_duration(value)
        for value in node.values():
            found = _structured_hint(value, now, depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(node, list):
        for item in node:
            found = _structured_hint(item, now, depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(node, str):
        found = _text_hint(node)
        if found is None and node.lstrip().startswith("{"):  # JSON inside a message string
            try:
                return _structured_hint(json.loads(node), now, depth + 1)
            except ValueError:
                return None
        return found
    return None


def _text_hint(text: str) -> float | None:
    match = _TEXT_HINT.search(text)
    if not match:
        return None
    return parse_duration(match.group(1))


def _parse_absolute(value: JSONValue) -> float | None:
    """Epoch seconds, epoch milliseconds (> 1e12), or ISO 8601 / RFC 3339 text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) / 1000.0 if value > 1e12 else float(value)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return _parse_absolute(float(text))
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.upper())  # RFC 3339 allows a lowercase t and z
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _non_negative(value: float) -> float | None:
    if not math.isfinite(value):  # NaN / inf: not a hint
        return None
    return max(0.0, value)
