"""Faults the emulator injects on request, so resilience is tested over real HTTP.

A fault rule (JSON, set with ``POST /__emulator/faults`` or :meth:`Emulator.set_faults`,
or sent by a direct caller in the ``x-emulator-fault`` header)::

    {"fault": "rate_limit",          # what happens (FaultKind below)
     "endpoint": "messages",         # optional filters: chat_completions | messages |
     "profile": "anthropic",         #   count_tokens | responses | models; profile; model
     "model": "claude-sonnet-4-6",
     "key": "k2-0002",               # the request's API key, or its last characters
     "requests": [1, 2],             # which matching requests (1-based), or
     "rate": 0.5,                    # a deterministic share of them (every 2nd), and/or
     "times": 3,                     # at most this many firings
     "retry_after": 2,               # seconds (rate_limit, overloaded, unavailable)
     "retry_after_form": "seconds",  # seconds | ms | http_date | none
     "seconds": 1.5,                 # hang length (capped by max_hang) or slow-chunk delay
     "after": 2}                     # stream faults: SSE events sent before the fault

``key`` makes one pooled key fail while another works (a credential pool's cooldown
and rotation, tested over real HTTP); the faults list shows it as its last 4 characters.

The header form also accepts ``kind`` or ``kind;key=value;key=value``.

Faults on the connection or the body shape (for clients' own resilience tests):

* ``reset_before``: the connection is dropped before a single byte of the answer (no
  status line), as a proxy or load balancer does when the upstream dies;
* ``empty_stream``: a 200 answer whose body holds no event at all (an SSE comment only
  when streaming), as some OpenAI-compatible servers send when generation fails early;
* ``stall``: ``after`` events, then silence for ``seconds`` (capped by max_hang), then
  the connection drops: a provider that stops mid-answer, for read-timeout tests;
* ``json_answer``: a ``stream: true`` request answered with the whole non-streamed JSON
  body (``application/json``), as servers that ignore ``stream`` do.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any, Literal, TypeAlias

from ..types import JSONValue
from .wire import ApiError, Protocol

__all__ = ["BODY_FAULTS", "ERROR_FAULTS", "STREAM_FAULTS", "Fault", "FaultKind", "FaultStore", "fault_error",
           "parse_fault", "parse_header"]

FaultKind: TypeAlias = Literal[
    "rate_limit", "quota", "server_error", "unavailable", "overloaded", "unauthorized",
    "hang", "close_mid_stream", "malformed_sse", "invalid_utf8", "slow_chunks", "stream_error",
    "reset_before", "empty_stream", "json_answer", "stall",
]
ERROR_FAULTS = frozenset({"rate_limit", "quota", "server_error", "unavailable", "overloaded",
                          "unauthorized"})
STREAM_FAULTS = frozenset({"close_mid_stream", "malformed_sse", "invalid_utf8", "slow_chunks",
                           "stream_error", "stall"})
# faults the response applies before or instead of the body (not placed with ``after``)
BODY_FAULTS = frozenset({"reset_before", "empty_stream"})
_KINDS = ERROR_FAULTS | STREAM_FAULTS | BODY_FAULTS | {"hang", "json_answer"}
_FORMS = ("seconds", "ms", "http_date", "none")


@dataclass(frozen=True, slots=True)
class Fault:
    fault: FaultKind
    endpoint: str | None = None
    profile: str | None = None
    model: str | None = None
    key: str | None = None  # matches a request whose API key ends with it
    requests: tuple[int, ...] | None = None
    rate: float | None = None
    times: int | None = None
    retry_after: float = 1.0
    retry_after_form: str = "seconds"
    seconds: float = 0.2
    after: int = 2

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}
        if self.key is not None and len(self.key) > 4:
            out["key"] = "…" + self.key[-4:]  # a key, even a test's, is never echoed whole
        return out

    def matches(self, endpoint: str, profile: str, model: str | None, key: str) -> bool:
        return (self.endpoint in (None, endpoint) and self.profile in (None, profile)
                and self.model in (None, model)
                and (self.key is None or key.endswith(self.key)))


def parse_fault(raw: JSONValue) -> Fault:
    """A :class:`Fault` from its JSON form; ``ValueError`` names what is wrong."""
    if isinstance(raw, str):
        raw = {"fault": raw}
    if not isinstance(raw, dict):
        raise ValueError("a fault is a JSON object with a 'fault' key")  # noqa: TRY004 (bad user input: one error type)
    kind = raw.get("fault") or raw.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown fault {kind!r}; known: {', '.join(sorted(_KINDS))}")
    form = raw.get("retry_after_form", "seconds")
    if form not in _FORMS:
        raise ValueError(f"retry_after_form must be one of {', '.join(_FORMS)}")
    unknown = set(raw) - set(Fault.__slots__) - {"kind"}
    if unknown:
        raise ValueError(f"unknown fault keys: {', '.join(sorted(unknown))}")
    requests = raw.get("requests")
    key = raw.get("key")
    if key is not None and (not isinstance(key, (str, int)) or not str(key)):
        raise ValueError("key must be an API key or its last characters")
    return Fault(
        fault=kind, endpoint=raw.get("endpoint"), profile=raw.get("profile"),
        model=raw.get("model"), key=str(key) if key is not None else None,
        requests=tuple(int(n) for n in requests) if requests is not None else None,
        rate=float(raw["rate"]) if raw.get("rate") is not None else None,
        times=int(raw["times"]) if raw.get("times") is not None else None,
        retry_after=float(raw.get("retry_after", 1.0)), retry_after_form=form,
        seconds=float(raw.get("seconds", 0.2)), after=int(raw.get("after", 2)),
    )


def parse_header(value: str) -> Fault:
    value = value.strip()
    if value.startswith("{"):
        return parse_fault(json.loads(value))
    kind, *pairs = [p.strip() for p in value.split(";") if p.strip()]
    raw: dict[str, Any] = {"fault": kind}
    for pair in pairs:
        key, _, val = pair.partition("=")
        key = key.strip()
        # a key's tail may be all digits ("0001"): it stays text
        numeric = key != "key" and (val[:1].isdigit() or val[:1] in "[-")
        raw[key] = json.loads(val) if numeric else val
    return parse_fault(raw)


@dataclass
class _Rule:
    fault: Fault
    matched: int = 0
    fired: int = 0


@dataclass
class FaultStore:
    """The active fault rules; the first rule that fires for a request wins."""

    _rules: list[_Rule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set(self, faults: list[Fault]) -> None:
        with self._lock:
            self._rules = [_Rule(f) for f in faults]

    def clear(self) -> None:
        self.set([])

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r.fault.to_json(), matched=r.matched, fired=r.fired) for r in self._rules]

    def pick(self, endpoint: str, profile: str, model: str | None,
             key: str = "") -> Fault | None:
        with self._lock:
            for rule in self._rules:
                f = rule.fault
                if not f.matches(endpoint, profile, model, key):
                    continue
                rule.matched += 1
                n = rule.matched
                if f.times is not None and rule.fired >= f.times:
                    continue
                if f.requests is not None and n not in f.requests:
                    continue
                if f.rate is not None and int(n * f.rate) == int((n - 1) * f.rate):
                    continue  # deterministic share: fires when n * rate crosses an integer
                rule.fired += 1
                return f
        return None


def _retry_headers(fault: Fault, protocol: Protocol) -> dict[str, str]:
    secs = fault.retry_after
    headers: dict[str, str] = {}
    if fault.retry_after_form == "seconds":
        headers["retry-after"] = str(int(secs)) if float(secs).is_integer() else str(secs)
    elif fault.retry_after_form == "ms":
        headers["retry-after-ms"] = str(int(secs * 1000))
    elif fault.retry_after_form == "http_date":
        headers["retry-after"] = formatdate(time.time() + secs, usegmt=True)
    if protocol == "anthropic":
        reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + secs))
        for kind, limit in (("requests", "50"), ("tokens", "100000"), ("input-tokens", "80000"),
                            ("output-tokens", "20000")):
            headers[f"anthropic-ratelimit-{kind}-limit"] = limit
            headers[f"anthropic-ratelimit-{kind}-remaining"] = "0" if kind == "requests" else limit
            headers[f"anthropic-ratelimit-{kind}-reset"] = reset
    else:
        for kind, limit in (("requests", "60"), ("tokens", "150000")):
            headers[f"x-ratelimit-limit-{kind}"] = limit
            headers[f"x-ratelimit-remaining-{kind}"] = "0" if kind == "requests" else limit
            headers[f"x-ratelimit-reset-{kind}"] = f"{secs:g}s"
    return headers


def fault_error(fault: Fault, protocol: Protocol) -> ApiError:
    """The provider error answer a fault stands for, in the protocol's own shape."""
    anth = protocol == "anthropic"
    kind = fault.fault
    if kind == "rate_limit":
        headers = _retry_headers(fault, protocol)
        if anth:
            return ApiError(429, "This request would exceed the rate limit for your organization "
                            "of 50 requests per minute. For details, refer to: "
                            "https://docs.claude.com/en/api/rate-limits.", etype="rate_limit_error",
                            headers=dict(headers, **{"x-should-retry": "true"}))
        return ApiError(429, "Rate limit reached for requests per min (RPM): Limit 60, Used 60, "
                        f"Requested 1. Please try again in {fault.retry_after:g}s.",
                        etype="requests", code="rate_limit_exceeded", headers=headers)
    if kind == "quota":
        if anth:
            return ApiError(402, "Your credit balance is too low to access the Anthropic API. "
                            "Please go to Plans & Billing to upgrade or purchase credits.",
                            etype="billing_error")
        return ApiError(402, "You exceeded your current quota, please check your plan and billing "
                        "details.", etype="insufficient_quota", code="insufficient_quota")
    if kind == "unauthorized":
        if anth:
            return ApiError(401, "invalid x-api-key", etype="authentication_error",
                            headers={"x-should-retry": "false"})
        return ApiError(401, "Incorrect API key provided. You can find your API key at "
                        "https://platform.openai.com/account/api-keys.", code="invalid_api_key")
    if kind == "overloaded":
        headers = _retry_headers(fault, protocol) if fault.retry_after_form != "none" else {}
        return ApiError(529, "Overloaded", etype="overloaded_error",
                        code=None if anth else "overloaded", headers=headers)
    if kind == "unavailable":
        headers = {"retry-after": str(int(fault.retry_after))}
        if anth:
            return ApiError(503, "Service unavailable", etype="api_error", headers=headers)
        return ApiError(503, "The server is overloaded or not ready yet.", etype="server_error",
                        headers=headers)
    if anth:
        return ApiError(500, "Internal server error", etype="api_error",
                        headers={"x-should-retry": "true"})
    return ApiError(500, "The server had an error while processing your request. Sorry about that!",
                    etype="server_error")
