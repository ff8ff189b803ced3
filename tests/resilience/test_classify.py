"""classify(): real provider error bodies and statuses → the right failure kind."""

from __future__ import annotations

import json

import pytest

from modelwire.errors import (
    BadRequestError,
    ConnectError,
    ContentFilterError,
    ContextLengthError,
    MessageError,
    ModelNotFoundError,
    OverloadedError,
    ProtocolError,
    ProviderError,
    RateLimitError,
    ReadTimeoutError,
    ServerError,
    StreamInterruptedError,
)
from modelwire.providers.profile import ProviderProfile
from modelwire.resilience import classify


def _err(status, message, *, code=None, body=None, headers=None, cls=ProviderError):
    return cls(message, status=status, code=code, body=body, headers=headers)


CASES = [
    # (id, status, message, code, body, expected kind, credential_fault)
    ("openai-invalid-key-401", 401, "Incorrect API key provided: sk-.", "invalid_api_key",
     None, "auth", True),
    ("anthropic-403-permission", 403, "Your API key does not have permission", None, None,
     "auth", True),
    ("openai-429-rate", 429, ("Rate limit reached for gpt-4o on tokens per min. Please try again"
     " in 20ms."), "rate_limit_exceeded", None, "rate_limit", True),
    ("openai-insufficient-quota", 429, ("You exceeded your current quota, please check your plan"
     " and billing details."), "insufficient_quota", None, "billing", True),
    ("usage-limit-reached-429", 429, "Usage limit reached for this month.", None, None,
     "billing", True),
    ("gemini-quota-per-minute-429", 429, ("You exceeded your current quota. Please retry in"
     " 34.5s."), "RESOURCE_EXHAUSTED", None, "rate_limit", True),
    ("anthropic-429-says-overloaded", 429, "Overloaded", "overloaded_error", None,
     "overloaded", False),
    ("zai-1305", 429, "该模型当前访问量过大，请您稍后再试", "1305", None, "overloaded", False),
    ("anthropic-529", 529, "Overloaded", "overloaded_error", None, "overloaded", False),
    ("503-unavailable", 503, "Service Unavailable", None, None, "overloaded", False),
    ("402-credits", 402, "Insufficient credits. Add more using https://openrouter.ai/credits",
     None, None, "billing", True),
    ("402-says-resets", 402, ("Daily usage limit exceeded; it resets at 00:00 UTC, try again"
     " later"), None, None, "rate_limit", True),
    ("500", 500, "Internal server error", None, None, "server", False),
    ("502", 502, "Bad gateway", None, None, "server", False),
    ("408", 408, "Request timeout", None, None, "transient", False),
    ("409", 409, "Conflict", None, None, "transient", False),
    ("context-openai", 400, "This model's maximum context length is 128000 tokens.",
     "context_length_exceeded", None, "context_length", False),
    ("context-anthropic", 400, "prompt is too long: 210000 tokens > 200000 maximum",
     "invalid_request_error", None, "context_length", False),
    ("context-vllm", 400, "This model's max_model_len is 8192", None, None,
     "context_length", False),
    ("signature-anthropic", 400, ("messages.1.content.0: Invalid `signature` in `thinking`"
     " block"), "invalid_request_error", None, "signature_400", False),
    ("thinking-modified", 400, ("messages.3.content.0: `thinking` or `redacted_thinking` blocks"
     " in the latest assistant message cannot be modified."), None, None, "signature_400", False),
    ("responses-encrypted", 400, "The encrypted content could not be verified.",
     "invalid_encrypted_content", None, "signature_400", False),
    ("content-filter-azure", 400, ("The response was filtered due to the prompt triggering"
     " Azure OpenAI's content management policy."), "content_filter", None,
     "content_filter", False),
    ("model-not-found-groq", 404, ("The model `non-existent` does not exist or you do not have"
     " access to it."), "model_not_found", None, "model_not_found", False),
    ("model-not-found-anthropic", 404, "model: this-model-does-not-exist-12345",
     "not_found_error", None, "model_not_found", False),
    ("azure-deployment-not-found", 404, "The API deployment for this resource does not exist.",
     "DeploymentNotFound", None, "model_not_found", False),
    ("llamacpp-grammar", 400, "error parsing grammar: unknown format 'uuid'", None, None,
     "schema_400", False),
    ("responses-unknown-stop", 400, "Unknown parameter: 'stop'.", "unknown_parameter", None,
     "param_400", False),
    ("openai-reasoning-stop", 400, "Unsupported parameter: 'stop' is not supported with this model.",
     "unsupported_parameter", None, "param_400", False),
    ("openai-reasoning-temperature", 400, ("Unsupported value: 'temperature' does not support 0.2 with"
     " this model. Only the default (1) value is supported."), "unsupported_value", None, "param_400", False),
    ("bare-404-is-caller-error", 404, "Not Found", None, None, "bad_request", False),
    ("tool-output-missing", 400, "No tool output found for tool call call-a.",
     "invalid_request_error", None, "bad_request", False),
    ("413", 413, "Request entity too large", None, None, "bad_request", False),
    ("422", 422, "Unprocessable entity", None, None, "bad_request", False),
]


@pytest.mark.parametrize(
    ("status", "message", "code", "body", "kind", "fault"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_provider_errors_classify_by_status_code_and_text(status, message, code, body, kind,
                                                          fault):
    failure = classify(_err(status, message, code=code, body=body))
    assert failure.kind == kind
    assert failure.credential_fault is fault
    assert failure.status == status


def test_openrouter_upstream_rate_limit_is_not_the_keys_fault():
    # recorded in the corpus: OpenRouter's 429 wrapping Google's upstream limit
    body = {"error": {"code": 429, "message": "Provider returned error", "metadata": {
        "provider_name": "Google",
        "raw": "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream."}}}
    failure = classify(_err(429, "Provider returned error", code="429", body=body),
                       ProviderProfile(name="openrouter"))
    assert failure.kind == "rate_limit"
    assert failure.credential_fault is False  # rotating our keys cannot help
    assert failure.provider == "openrouter"


def test_nested_body_message_is_read_when_the_top_message_is_generic():
    body = {"error": {"message": "Bad request", "metadata": {"raw": json.dumps(
        {"error": {"message": "Invalid signature in thinking block"}})}}}
    assert classify(_err(400, "Bad request", body=body)).kind == "signature_400"


def test_codec_class_is_used_when_no_rule_matches():
    assert classify(_err(404, "nope", cls=ModelNotFoundError)).kind == "model_not_found"
    assert classify(_err(400, "weird", cls=BadRequestError)).kind == "bad_request"


def test_retry_after_comes_from_the_error_or_its_headers():
    assert classify(RateLimitError("slow down", retry_after=7.0)).retry_after == 7.0
    failure = classify(RateLimitError("slow down", headers={"Retry-After": "3"}))
    assert failure.retry_after == 3.0
    assert classify(ServerError("boom")).retry_after is None


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ConnectError("refused"), "transport"),
        (StreamInterruptedError("reset"), "transport"),
        (ReadTimeoutError("stale"), "timeout"),
        (ProtocolError("stream ended with no events"), "empty_stream"),
        (ProtocolError("invalid JSON in data line"), "malformed"),
        (OverloadedError("busy"), "overloaded"),
        (ValueError("anything else"), "unknown"),
    ],
    ids=["connect", "reset", "read-timeout", "empty-stream", "malformed-sse", "overloaded-cls",
         "foreign-exception"],
)
def test_non_http_failures_classify_by_type(error, kind):
    failure = classify(error)
    assert failure.kind == kind
    assert failure.retryable


@pytest.mark.parametrize("kind_error", [
    _err(400, "context length exceeded", code="context_length_exceeded"),
    _err(400, "flagged", code="content_filter"),
    _err(404, "Not Found"),
], ids=["context", "filter", "404"])
def test_caller_errors_are_not_retryable(kind_error):
    assert not classify(kind_error).retryable


def test_corpus_error_exchanges_classify_as_expected(corpus):
    expected = {
        "anthropic-explicit-effort-xhigh-unsupported-model-errors": "bad_request",
        "dd-error-401-1913e018": "auth",
        "dd-error-401-stream-7a2e5960": "auth",
        "model-not-found-stream-anthropic-beta-claude-sonnet-4-0_t0": "model_not_found",
        "chat-reasoning_t1": "model_not_found",
        "deepseek-responses-rejects-interleaved-function-calls": "bad_request",
        "tool-regular-error": "model_not_found",
        "authentication-error-stream-openai-gpt-4o-completions": "auth",
        "error-status-code-and-exception-events-with-invalid-api-key": "auth",
        "model-not-found-stream-openai-gpt-4o-completions_t0": "model_not_found",
        "vision-vision_t2": "bad_request",
        "model-not-found-stream-openai-gpt-4o-responses_t0": "model_not_found",
        "openrouter-errors-raised_t0": "rate_limit",
    }
    seen = 0
    for stem, item in corpus:
        response = item["response"]
        if response["status"] == 200:
            continue
        key = stem.split("__")[-1]
        body = response.get("body") or {}
        inner = body.get("error", {}) if isinstance(body, dict) else {}
        code = inner.get("code") or inner.get("type")
        error = _err(response["status"], inner.get("message", ""), code=str(code),
                     body=body, headers=response["headers"])
        assert classify(error).kind == expected[key], stem
        seen += 1
    assert seen == len(expected)


@pytest.mark.parametrize(("status", "kind", "reason"), [
    (None, "unknown", "no status"),
    (302, "unknown", "302"),
    (400, "bad_request", "400"),
    (499, "bad_request", "499"),
    (500, "server", "500"),
    (599, "server", "599"),
], ids=["no-status", "3xx", "400", "499", "500", "599"])
def test_status_family_decides_when_no_rule_or_class_matches(status, kind, reason):
    failure = classify(ProviderError("something odd", status=status))
    assert (failure.kind, failure.reason) == (kind, reason)


@pytest.mark.parametrize("body", [
    [{"error": {"message": "The model `x` does not exist"}}],  # a list of errors (Gemini)
    {"detail": "The model `x` does not exist"},  # FastAPI / vLLM
    {"type": "model_not_found"},
    {"code": "model_not_found"},
    {"status": "model_not_found"},
    {"error": {"metadata": {"raw": '{"error": "no such model"}'}}},  # OpenRouter's wrapper
], ids=["list", "detail", "type", "code", "status", "openrouter-raw"])
def test_error_text_is_read_from_every_body_shape(body):
    failure = classify(ProviderError("Bad request", status=400, body=body))
    assert failure.kind == "model_not_found"


def test_body_text_beyond_its_first_2000_characters_is_not_read():
    far = classify(ProviderError("x", status=400, body={"message": "." * 2000 + "billing"}))
    near = classify(ProviderError("x", status=400, body={"message": "." * 1990 + "billing"}))
    assert (far.kind, near.kind) == ("bad_request", "billing")


def test_body_nesting_is_read_to_a_bounded_depth():
    deep: object = "billing"
    for _ in range(5):
        deep = {"error": deep}
    shallow = {"error": {"error": {"error": "billing"}}}
    assert classify(ProviderError("x", status=400, body=deep)).kind == "bad_request"
    assert classify(ProviderError("x", status=400, body=shallow)).kind == "billing"


def test_only_the_first_five_errors_of_a_list_are_read():
    body = [{"message": "fine"}] * 5 + [{"message": "billing"}]
    assert classify(ProviderError("x", status=400, body=body)).kind == "bad_request"


def test_retry_delay_given_only_in_the_body_is_on_the_failure():
    body = {"error": {"message": "Rate limited", "details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}}
    failure = classify(ProviderError("Rate limited", status=429, body=body))
    assert (failure.kind, failure.retry_after) == ("rate_limit", 7.0)


def test_no_headers_and_no_body_give_no_retry_hint():
    assert classify(ProviderError("Rate limited", status=429)).retry_after is None


@pytest.mark.parametrize(("error", "kind"), [
    (ContentFilterError("refused", status=None), "content_filter"),
    (ContextLengthError("too big", status=None), "context_length"),
], ids=["content-filter", "context-length"])
def test_status_less_errors_from_a_codec_keep_their_class(error, kind):
    error.status = None  # a stream's error event carries no HTTP status
    failure = classify(error)
    assert failure.kind == kind and not failure.retryable


def test_a_message_error_is_the_callers_mistake_with_its_facts():
    error = MessageError("tool result without a call", index=3)
    failure = classify(error, ProviderProfile(name="openai"))
    assert (failure.kind, failure.provider, failure.reason, failure.error) == (
        "bad_request", "openai", "MessageError", error)
    assert not failure.retryable


def test_a_foreign_exception_is_unknown_and_keeps_no_error():
    failure = classify(ValueError("boom"))
    assert (failure.kind, failure.reason, failure.error, failure.provider) == (
        "unknown", "ValueError", None, None)


def test_protocol_failures_say_which_and_keep_the_error():
    empty = ProtocolError("the stream ended with no event")
    broken = ProtocolError("bad JSON in an SSE data line")
    assert (classify(empty).kind, classify(broken).kind) == ("empty_stream", "malformed")
    assert classify(broken).error is broken and classify(broken).reason == str(broken)


def test_provider_comes_from_the_profile_else_the_error():
    error = ServerError("down", status=500, provider="groq")
    assert classify(error).provider == "groq"
    assert classify(error, ProviderProfile(name="openai")).provider == "openai"


def test_a_rule_for_named_providers_matches_only_them():
    from modelwire.resilience.classify import Rule

    rule = Rule("overloaded", "why", codes=frozenset({"1305"}), providers=frozenset({"zai"}))
    assert rule.matches(429, "1305", "", "zai")
    assert not rule.matches(429, "1305", "", "openai")
