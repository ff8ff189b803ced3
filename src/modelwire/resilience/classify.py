"""What went wrong, as facts: :func:`classify` turns an error into a :class:`Failure`.

Classification is separate from the decision (:mod:`modelwire.resilience.policy`):
this module only reports *what happened* (a rate limit, an overload, a spent
quota...) and whether the credential is to blame; the ladder decides what to do.

The rules are a table (:data:`RULES`), tried in order, first match wins. Each
rule matches on the HTTP status, the provider's error code, phrases in the
error text (lowercased message plus the body's nested messages), and
optionally the provider; every rule says why it exists. Errors that match no
rule fall back to the error's class, then to the status family.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from ..errors import (
    AuthenticationError,
    BillingError,
    ConnectError,
    ContentFilterError,
    ContextLengthError,
    MessageError,
    ModelNotFoundError,
    ModelwireError,
    OverloadedError,
    PermissionDeniedError,
    ProtocolError,
    ProviderError,
    RateLimitError,
    ReadTimeoutError,
    ServerError,
    StreamInterruptedError,
    TransportError,
)
from ..types import JSONValue

if TYPE_CHECKING:
    from ..providers.profile import ProviderProfile

__all__ = ["RETRYABLE", "RULES", "Failure", "FailureKind", "Rule", "classify"]

FailureKind: TypeAlias = Literal[
    "signature_400",  # a thinking signature / encrypted reasoning the provider will not accept
    "schema_400",  # llama.cpp could not compile a tool schema into its grammar
    "param_400",  # a setting this model does not take (OpenAI: unsupported_parameter / _value)
    "auth",  # 401/403: the key is wrong, revoked or lacks access
    "rate_limit",  # 429 or a 402 that says it resets: wait or use another key
    "billing",  # quota or credit exhausted: this key will not recover soon
    "overloaded",  # the endpoint is busy (529, 503, "overloaded"): never the key's fault
    "server",  # 5xx
    "transient",  # 408/409/425: try the same request again
    "timeout",  # no byte in time (before the first byte or a stale stream)
    "transport",  # could not connect, or the connection dropped
    "malformed",  # the stream or body broke its protocol
    "empty_stream",  # a stream that ended without a single event
    "context_length",  # the prompt is too long for the model
    "content_filter",  # a safety filter refused
    "model_not_found",  # the model id is unknown to this provider
    "bad_request",  # any other caller mistake (400/404/413/422)
    "unknown",  # nothing matched: treated as retryable, like a server error
]

# kinds the ladder may back off and retry on the same model
RETRYABLE: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "server", "transient", "timeout", "transport", "malformed",
     "empty_stream", "unknown"}
)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure, as facts.

    ``credential_fault``: the credential itself is to blame (rate limit, quota,
    auth on this key), so another credential may succeed. An overload or an
    aggregator's upstream rate limit is not the key's fault: rotating would
    only burn the other keys.
    """

    kind: FailureKind
    status: int | None = None
    code: str | None = None
    provider: str | None = None
    retry_after: float | None = None
    credential_fault: bool = False
    reason: str = ""  # which rule matched, for logs and Attempt records
    error: ModelwireError | None = field(default=None, compare=False, repr=False)

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


@dataclass(frozen=True, slots=True)
class Rule:
    """``kind`` when every given condition holds (``None``/empty: no condition).

    ``phrases`` match if any occurs in the error text; ``also`` additionally
    requires one of its phrases (for "quota ... and it says try again").
    """

    kind: FailureKind
    why: str
    statuses: frozenset[int] | None = None
    codes: frozenset[str] = frozenset()
    phrases: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    providers: frozenset[str] = frozenset()

    def matches(self, status: int | None, code: str, text: str, provider: str) -> bool:
        if self.statuses is not None and status not in self.statuses:
            return False
        if self.providers and provider not in self.providers:
            return False
        if self.codes or self.phrases:
            hit = code in self.codes or any(p in text for p in self.phrases)
            if not hit:
                return False
        return not self.also or any(p in text for p in self.also)


_RESET_PHRASES = ("try again", "retry", "resets at", "reset in", "resets in", "wait",
                  "requests remaining", "periodic", "window", "per minute", "per day")
_QUOTA_PHRASES = ("usage limit", "quota", "limit exceeded", "insufficient credit",
                  "credit balance", "exceeded your current")
_OVERLOAD_PHRASES = ("overloaded", "at capacity", "over capacity", "server is busy",
                     "high demand", "temporarily unavailable", "engine is currently overloaded")
_SIGNATURE_PHRASES = ("signature", "cannot be modified", "must remain as they were")
_BILLING_PHRASES = ("insufficient_quota", "billing", "payment required", "credit balance",
                    "insufficient balance", "spending limit", "key limit exceeded",
                    "out of credits", "insufficient credits")
_CONTEXT_PHRASES = ("context length", "context_length", "context window", "maximum context",
                    "prompt is too long", "too many tokens", "input is too long",
                    "reduce the length", "max_model_len", "n_ctx_slot", "slot context",
                    "exceeds the model's", "超过最大长度", "上下文长度")
_FILTER_PHRASES = ("content_filter", "content management policy", "responsibleaipolicyviolation",
                   "violates our usage polic", "flagged by our safety", "your request was flagged",
                   "flagged for possible", "new_sensitive", "content policy", "safety system")
_MODEL_PHRASES = ("model not found", "model_not_found", "does not exist", "unknown model",
                  "no such model", "invalid model", "model is not available",
                  "not a valid model", "no endpoints found")

RULES: tuple[Rule, ...] = (
    Rule("content_filter", "a safety filter refused; retrying the same input cannot help",
         codes=frozenset({"content_filter", "content_policy_violation"}),
         phrases=_FILTER_PHRASES),
    # Anthropic (and OpenRouter proxying it) rejects a thinking block whose signature it
    # did not issue or that was changed; the fix is to strip the blocks and resend once
    Rule("signature_400", "thinking signature rejected", statuses=frozenset({400}),
         phrases=("thinking", "reasoning"), also=_SIGNATURE_PHRASES),
    # Responses API: encrypted reasoning from another org/key fails to decrypt; same fix
    Rule("signature_400", "encrypted reasoning rejected", statuses=frozenset({400}),
         codes=frozenset({"invalid_encrypted_content"}), phrases=("encrypted content",)),
    # llama.cpp compiles tool schemas to a GBNF grammar and rejects some `pattern` /
    # `format` values (providers/llamacpp.py); the fix is one resend without them
    Rule("schema_400", "llama.cpp grammar error", statuses=frozenset({400, 500}),
         phrases=("error parsing grammar", "json-schema-to-grammar", "failed to parse grammar")),
    # OpenAI's reasoning models (and Azure's deployments of them, whatever their name)
    # reject stop, or a temperature / top_p other than 1, naming the parameter: resend
    # without it (the Client applies stop sequences itself)
    Rule("param_400", "a setting this model does not take", statuses=frozenset({400}),
         codes=frozenset({"unsupported_parameter", "unsupported_value", "unknown_parameter"})),
    # Z.AI (GLM coding plan) answers 429 with code 1305 when the *service* is overloaded;
    # rotating keys only burns them (hermes #14038)
    Rule("overloaded", "a 429/503 that says overloaded is the endpoint, not the key",
         statuses=frozenset({429, 503, 529}), codes=frozenset({"overloaded_error", "1305"}),
         phrases=_OVERLOAD_PHRASES),
    # OpenRouter wraps an upstream provider's 429 as "Provider returned error": our key
    # is fine, another provider may serve (no rotation)
    Rule("rate_limit", "OpenRouter upstream rate limit", statuses=frozenset({429}),
         phrases=("provider returned error", "rate-limited upstream")),
    Rule("billing", "OpenAI insufficient_quota is a spent balance, not a rate",
         codes=frozenset({"insufficient_quota", "billing_hard_limit_reached"})),
    # a 402/429 "quota"/"usage limit" that says when it resets is a rate limit
    # (OpenRouter free tier, Gemini per-minute quotas)
    Rule("rate_limit", "quota with a reset hint", statuses=frozenset({402, 429}),
         phrases=_QUOTA_PHRASES, also=_RESET_PHRASES),
    Rule("billing", "402 without a reset hint", statuses=frozenset({402})),
    Rule("billing", "429 'usage limit reached' / 'quota' is a spent quota",
         statuses=frozenset({429}), phrases=_QUOTA_PHRASES),
    Rule("billing", "403 spending / key limit", statuses=frozenset({403}),
         phrases=_BILLING_PHRASES),
    Rule("auth", "401/403", statuses=frozenset({401, 403})),
    Rule("rate_limit", "429", statuses=frozenset({429})),
    Rule("context_length", "prompt too long",
         codes=frozenset({"context_length_exceeded", "string_above_max_length"}),
         phrases=_CONTEXT_PHRASES),
    Rule("model_not_found", "unknown model id",
         codes=frozenset({"model_not_found", "invalid_model", "model_not_available",
                          "deploymentnotfound"}),  # Azure: the deployment name is the model
         phrases=_MODEL_PHRASES, statuses=frozenset({400, 404, 422})),
    # Anthropic: 404 not_found_error whose message is just "model: <id>"
    Rule("model_not_found", "Anthropic 404 names the model", statuses=frozenset({404}),
         phrases=("model:",)),
    Rule("billing", "billing phrase", phrases=_BILLING_PHRASES,
         statuses=frozenset({400, 404})),
    Rule("transient", "408/409/425 are worth repeating", statuses=frozenset({408, 409, 425})),
    Rule("overloaded", "529 / 503", statuses=frozenset({503, 529})),
)

_BY_CLASS: tuple[tuple[type[ModelwireError], FailureKind], ...] = (
    (ContentFilterError, "content_filter"),
    (ContextLengthError, "context_length"),
    (ModelNotFoundError, "model_not_found"),
    (OverloadedError, "overloaded"),
    (RateLimitError, "rate_limit"),
    (BillingError, "billing"),
    (AuthenticationError, "auth"),
    (PermissionDeniedError, "auth"),
    (ServerError, "server"),
    (ReadTimeoutError, "timeout"),
    (ConnectError, "transport"),
    (StreamInterruptedError, "transport"),
    (TransportError, "transport"),
    # the conversation or tools break a protocol rule while encoding: the caller's
    # mistake, raised at once (retrying the same request cannot help)
    (MessageError, "bad_request"),
)

_CREDENTIAL_KINDS = frozenset({"rate_limit", "billing", "auth"})


def classify(error: BaseException, profile: ProviderProfile | None = None) -> Failure:
    """The facts about ``error``. Never raises; anything unknown is ``unknown``."""
    provider = (profile.name if profile is not None else None) or getattr(error, "provider", None)
    if isinstance(error, ProviderError):
        return _classify_provider(error, provider or "")
    if isinstance(error, ProtocolError):
        text = str(error).lower()
        empty = "no event" in text or "empty" in text
        kind: FailureKind = "empty_stream" if empty else "malformed"
        return Failure(kind, provider=provider, reason=str(error), error=error)
    for cls, kind in _BY_CLASS:
        if isinstance(error, cls):
            return Failure(kind, provider=provider, reason=type(error).__name__, error=error)
    err = error if isinstance(error, ModelwireError) else None
    return Failure("unknown", provider=provider, reason=type(error).__name__, error=err)


def _classify_provider(error: ProviderError, provider: str) -> Failure:
    status = error.status
    code = (error.code or "").lower()
    text = _error_text(error)
    kind, why = _match(error, status, code, text, provider)
    credential_fault = kind in _CREDENTIAL_KINDS and why != "OpenRouter upstream rate limit"
    return Failure(
        kind,
        status=status,
        code=error.code,
        provider=provider or None,
        retry_after=_retry_after(error),
        credential_fault=credential_fault,
        reason=why,
        error=error,
    )


def _match(
    error: ProviderError, status: int | None, code: str, text: str, provider: str
) -> tuple[FailureKind, str]:
    for rule in RULES:
        if rule.matches(status, code, text, provider):
            return rule.kind, rule.why
    # no rule: trust the codec's class when it is more specific than "bad request"
    for cls, kind in _BY_CLASS:
        if isinstance(error, cls):
            return kind, f"{type(error).__name__}"
    return _by_status(status)


def _by_status(status: int | None) -> tuple[FailureKind, str]:
    if status is None:
        return "unknown", "no status"
    if status >= 500:
        return "server", f"{status}"
    if 400 <= status < 500:
        return "bad_request", f"{status}"
    return "unknown", f"{status}"


def _error_text(error: ProviderError) -> str:
    """Lowercased message plus every nested message in the body (OpenRouter puts the
    upstream provider's error JSON in ``error.metadata.raw``)."""
    parts = [error.message]
    parts.extend(_body_messages(error.body))
    return " ".join(parts).lower()


def _body_messages(body: JSONValue, depth: int = 0) -> Iterable[str]:
    if depth > 4:
        return
    if isinstance(body, str):
        yield body[:2000]
    elif isinstance(body, dict):
        for key in ("message", "error", "raw", "metadata", "detail", "type", "code", "status"):
            value = body.get(key)
            if isinstance(value, (dict, list, str)):
                yield from _body_messages(value, depth + 1)
    elif isinstance(body, list):
        for item in body[:5]:
            yield from _body_messages(item, depth + 1)


def _retry_after(error: ProviderError) -> float | None:
    if error.retry_after is not None:
        return error.retry_after
    if not error.headers and not error.body:
        return None
    from .retry_after import retry_after_seconds

    return retry_after_seconds(error.headers, error.body)
