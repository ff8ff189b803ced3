"""The Chat Completions codec against every recorded Chat Completions exchange."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import load_corpus

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target
from modelwire.codecs import chat_completions as cc
from modelwire.errors import (
    AuthenticationError,
    BadRequestError,
    ModelNotFoundError,
    ProviderError,
    RateLimitError,
)
from modelwire.events import Finish, StreamError, UsageEvent
from modelwire.providers.profile import ProviderProfile

# One profile per recorded provider, with what that endpoint really takes.
_OPENAI = ProviderProfile(
    "openai", max_tokens_field="max_completion_tokens", reasoning_request="reasoning_effort",
    developer_role=True, issuer="openai",
)
PROFILES: dict[str, ProviderProfile] = {
    "openai": _OPENAI,
    "azure_openai": _OPENAI,
    "anthropic": ProviderProfile("anthropic-openai-compat", issuer="anthropic-openai"),
    "avian": ProviderProfile("avian", reasoning_echo="required", issuer="avian"),
    "bedrock_mantle": ProviderProfile("bedrock_mantle"),
    "cerebras": ProviderProfile("cerebras", issuer="cerebras"),
    "deepseek": ProviderProfile(
        "deepseek", reasoning_echo="required", reasoning_request="thinking_flag", issuer="deepseek",
        unique_tool_names=True, vision=False,
    ),
    "google_openai_compat": ProviderProfile("gemini-openai", issuer="gemini"),
    "groq": ProviderProfile("groq", issuer="groq"),
    "huggingface": ProviderProfile("huggingface"),
    "llamacpp": ProviderProfile(
        "llamacpp", max_tokens_field="max_completion_tokens", reasoning_echo="reasoning_content",
        issuer="llamacpp", local=True,
    ),
    "mistral": ProviderProfile(
        "mistral", tool_id_format="mistral9", issuer="mistral",
        tool_choice_values=frozenset({"auto", "none", "any", "function"}),
    ),
    "ollama": ProviderProfile("ollama", local=True),
    "openrouter": ProviderProfile(
        "openrouter", reasoning_echo="reasoning_details", reasoning_request="openrouter",
        issuer="openrouter",
    ),
    "snowflake": ProviderProfile("snowflake", reasoning_request="openrouter", issuer="snowflake"),
    "together": ProviderProfile("together"),
    "vercel": ProviderProfile(
        "vercel", reasoning_echo="reasoning_details", reasoning_request="openrouter", issuer="vercel",
    ),
    "xai": ProviderProfile("xai", issuer="xai"),
    "zai": ProviderProfile(
        "zai", reasoning_echo="reasoning_content", reasoning_request="thinking_flag", issuer="zai",
    ),
}

# Recorded requests our encoder cannot reproduce, and why (counted in the output).
NOT_EXPRESSIBLE: dict[str, str] = {
    "zai__chat_completions__thinking-streaming-openaicompatiblethinking-zai-glm-4-7-flash_t1":
        "the recorder sent OpenAI's reasoning_effort to Z.ai, whose profile speaks the "
        "thinking flag; a front door's foreign knob is replaced by the endpoint's own",
}

ITEMS = [(n, d) for n, d in load_corpus() if d.get("api") == "chat_completions"]
OK = [(n, d) for n, d in ITEMS if d["response"]["status"] == 200]
STREAMS = [(n, d) for n, d in OK if "sse" in d["response"]]
BODIES = [(n, d) for n, d in OK if "body" in d["response"]]
ERRORS = [(n, d) for n, d in ITEMS if d["response"]["status"] != 200]


def _ids(items: list[tuple[str, Any]]) -> list[str]:
    return [n.split("__", 2)[0] + "/" + n.split("__", 2)[2][:60] for n, _ in items]


def _decode_stream(sse: str, chunk: int | None = None, issuer: str | None = None) -> list[Any]:
    dec = cc.StreamDecoder(issuer=issuer)
    data = sse.encode()
    events: list[Any] = []
    step = chunk or len(data) or 1
    for i in range(0, len(data), step):
        events += dec.feed(data[i:i + step])
    return events + dec.close()


def _comparable(events: list[Any]) -> list[Any]:
    """Events with usage's provider-raw part left out (re-encoding writes OpenAI's
    usage object, not the upstream's)."""
    out = []
    for e in events:
        if isinstance(e, UsageEvent):
            out.append(("usage", {k: v for k, v in e.usage.items() if k != "raw"}))
        elif isinstance(e, StreamError):
            out.append(("error", type(e.error), str(e.error), e.error.status, e.error.code))
        elif isinstance(e, Finish):  # OpenAI's wire has no slot for the native reason
            out.append(("finish", e.reason))
        else:
            out.append(e)
    return out


def _fold(events: list[Any]) -> Any:
    acc = Accumulator()
    for e in events:
        acc.feed(e)
    return acc.result()


# ---------------------------------------------------------------- requests
def _normal(body: dict[str, Any]) -> dict[str, Any]:
    """Same meaning, spelled one way: key order never matters; the two max-token
    field names mean the same; a missing ``stream`` is false; asking for stream
    usage changes no answer the client sees (the StreamEncoder honours the
    client's own stream_options); an empty tools list is no tools; a whitespace reasoning echo is no reasoning."""
    body = json.loads(json.dumps(body))
    if "max_completion_tokens" in body:
        body["max_tokens"] = body.pop("max_completion_tokens")
    if not body.get("stream"):
        body.pop("stream", None)
    if body.get("tools") == []:  # no tools, said two ways (some servers reject the empty list)
        del body["tools"]
    for tool in body.get("tools", []):
        tool.setdefault("type", "function")  # Mistral's default, OpenAI's required field
    options = body.pop("stream_options", None) or {}
    options.pop("include_usage", None)
    if options:
        body["stream_options"] = options
    for msg in body.get("messages", []):
        if isinstance(msg.get("reasoning_content"), str):
            msg["reasoning_content"] = msg["reasoning_content"].strip()
    return body


@pytest.mark.parametrize(("name", "item"), ITEMS, ids=_ids(ITEMS))
def test_recorded_request_reencodes_to_an_equivalent_body(name: str, item: dict[str, Any]) -> None:
    profile = PROFILES[item["provider"]]
    recorded = item["request"]["body"]
    request = cc.decode_request(json.dumps(recorded).encode(), issuer=profile.issuer or None)
    assert request["metadata"]["source_api"] == "chat_completions"
    encoded = cc.encode_request(request, Target(profile, model=recorded["model"], api_key="sk-fake-123456"))
    assert encoded.path == "/chat/completions"
    assert encoded.headers["authorization"] == "Bearer sk-fake-123456"
    body = json.loads(encoded.body)
    if name in NOT_EXPRESSIBLE:
        assert _normal(body) != _normal(recorded), f"{name} is listed as not expressible but re-encodes"
        return
    assert _normal(body) == _normal(recorded)


def test_count_of_requests_not_expressible(capsys: pytest.CaptureFixture[str]) -> None:
    names = {n for n, _ in ITEMS}
    assert set(NOT_EXPRESSIBLE) <= names
    with capsys.disabled():
        print(f"\nchat_completions corpus: {len(ITEMS)} requests, "
              f"{len(ITEMS) - len(NOT_EXPRESSIBLE)} re-encode equivalently, "
              f"{len(NOT_EXPRESSIBLE)} not expressible:")
        for n, why in NOT_EXPRESSIBLE.items():
            print(f"  {n}: {why}")


# --------------------------------------------------------------- responses
@pytest.mark.parametrize(("name", "item"), BODIES, ids=_ids(BODIES))
def test_recorded_response_decodes(name: str, item: dict[str, Any]) -> None:
    body = item["response"]["body"]
    completion = cc.decode_response(json.dumps(body).encode())
    choice = body["choices"][0]
    wire_calls = choice["message"].get("tool_calls") or []
    assert [c["function"]["name"] for c in completion.tool_calls] == [c["function"]["name"] for c in wire_calls]
    assert all(c["id"] for c in completion.tool_calls)  # missing ids get deterministic ones
    assert completion.usage["prompt_tokens"] == body["usage"]["prompt_tokens"]
    assert completion.model == body["model"]
    if wire_calls:
        assert completion.finish_reason == "tool_calls"
    # the text never holds inline reasoning tags
    assert "<think>" not in completion.text
    # a non-stream body re-encoded and decoded again is the same turn
    again = cc.decode_response(cc.encode_response(completion))
    assert again.message == completion.message
    assert again.finish_reason == completion.finish_reason


# ----------------------------------------------------------------- streams
@pytest.mark.parametrize(("name", "item"), STREAMS, ids=_ids(STREAMS))
def test_recorded_stream_decodes_the_same_under_any_chunking(name: str, item: dict[str, Any]) -> None:
    sse = item["response"]["sse"]
    whole = _decode_stream(sse)
    assert whole, "a recorded stream gives events"
    for size in (1, 7, 64):
        assert _comparable(_decode_stream(sse, size)) == _comparable(whole)


@pytest.mark.parametrize(("name", "item"), STREAMS, ids=_ids(STREAMS))
def test_decoded_stream_reencodes_to_the_same_events(name: str, item: dict[str, Any]) -> None:
    events = _decode_stream(item["response"]["sse"])
    enc = cc.StreamEncoder(model="m", id="chatcmpl-x")
    sse = b"".join(enc.feed(e) for e in events) + enc.close()
    again = _decode_stream(sse.decode())
    assert _comparable(again) == _comparable(events)


@pytest.mark.parametrize(("name", "item"), STREAMS, ids=_ids(STREAMS))
def test_stream_message_equals_its_non_stream_form(name: str, item: dict[str, Any]) -> None:
    """The accumulated stream, as a non-stream body, decodes to the same message:
    the two decoders agree on reasoning, text and tool calls."""
    events = _decode_stream(item["response"]["sse"])
    if any(isinstance(e, StreamError) for e in events):
        pytest.skip("the stream ended with an error")
    completion = _fold(events)
    assert cc.decode_response(cc.encode_response(completion)).message == completion.message


TWINS = [
    ("xai__chat_completions__simple-openaicompatiblecommon-xai-grok-4-fast",
     "xai__chat_completions__simple-streaming-openaicompatiblecommon-xai-grok-4-fast"),
    ("llamacpp__chat_completions__tool-openaicompatiblecommon-llama-cpp-gpt-oss_t0",
     "llamacpp__chat_completions__tool-streaming-openaicompatiblecommon-llama-cpp-gpt-oss_t0"),
]


@pytest.mark.parametrize(("body_name", "stream_name"), TWINS)
def test_stream_and_non_stream_twins_give_the_same_turn(body_name: str, stream_name: str) -> None:
    items = dict(ITEMS)
    completion = cc.decode_response(items[body_name]["response"]["body"])
    streamed = _fold(_decode_stream(items[stream_name]["response"]["sse"]))
    assert streamed.finish_reason == completion.finish_reason
    assert [c["function"]["name"] for c in streamed.tool_calls] == \
        [c["function"]["name"] for c in completion.tool_calls]
    if body_name.startswith("xai"):  # the same words were recorded both ways
        assert streamed.message == completion.message
    else:  # sampled twice: the same call, differently worded arguments and reasoning
        assert bool(streamed.message.get("reasoning_content")) == bool(completion.message.get("reasoning_content"))
        assert streamed.message["reasoning_details"][0]["block"]["type"] == "reasoning_content"


# ------------------------------------------------------------------ errors
EXPECTED_ERRORS: dict[str, type[ProviderError]] = {
    "azure_openai__chat_completions__chat-reasoning_t1": ModelNotFoundError,
    "groq__chat_completions__tool-regular-error": ModelNotFoundError,
    "openai__chat_completions__authentication-error-stream-openai-gpt-4o-completions": AuthenticationError,
    "openai__chat_completions__error-status-code-and-exception-events-with-invalid-api-key":
        AuthenticationError,
    "openai__chat_completions__model-not-found-stream-openai-gpt-4o-completions_t0": ModelNotFoundError,
    "openai__chat_completions__vision-vision_t2": BadRequestError,
    "openrouter__chat_completions__openrouter-errors-raised_t0": RateLimitError,
}


@pytest.mark.parametrize(("name", "item"), ERRORS, ids=_ids(ERRORS))
def test_recorded_error_gives_the_right_class(name: str, item: dict[str, Any]) -> None:
    response = item["response"]
    err = cc.decode_error(response["status"], response["headers"], json.dumps(response["body"]).encode())
    assert type(err) is EXPECTED_ERRORS[name]
    assert err.status == response["status"]
    assert str(err) == response["body"]["error"]["message"] or "metadata" in response["body"]["error"]


def test_every_recorded_error_is_expected() -> None:
    assert {n for n, _ in ERRORS} == set(EXPECTED_ERRORS)


def test_groq_error_inside_a_200_stream_is_a_stream_error() -> None:
    item = dict(ITEMS)["groq__chat_completions__tool-use-failed-error-streaming_t0"]
    events = _decode_stream(item["response"]["sse"])
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and events[-1] is errors[0]
    assert isinstance(errors[0].error, BadRequestError)
    assert errors[0].error.code == "tool_use_failed"
    assert errors[0].error.status == 400
