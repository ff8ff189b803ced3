"""Every codec in ``CODECS`` keeps the one contract of :class:`modelwire.codecs.base.Codec`.

Parametrized over ``CODECS``: a new protocol is checked by adding it there. The
contract: the same signatures everywhere, the same file layout, a request that comes
back from its own wire meaning the same, answers and streams that decode back to what
was encoded, cut streams reported, and error answers typed by their status.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from modelwire.accumulate import Accumulator
from modelwire.codecs import CODECS, Codec, Target, codec_for
from modelwire.codecs.base import (
    StreamDecoder,
    StreamDecoderFactory,
    StreamEncoder,
    StreamEncoderFactory,
)
from modelwire.errors import (
    AuthenticationError,
    ConfigError,
    ProtocolError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from modelwire.events import (
    Finish,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.types import empty_usage
from modelwire.wire import API_MODES, ProviderProfile

MODES = sorted(CODECS)
FUNCTIONS = ("encode_request", "decode_request", "encode_response", "decode_response", "decode_error")

WEATHER = {"type": "function", "function": {
    "name": "weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
REQUEST: dict[str, Any] = {
    "model": "contract-model",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "user", "content": "Thanks"},
    ],
    "tools": [WEATHER],
    "max_tokens": 100,
}
USAGE = {**empty_usage(), "prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
EVENTS: list[StreamEvent] = [
    TextDelta("Hel"), TextDelta("lo"),
    ToolCallStart(0, "call_1", "weather"), ToolCallDelta(0, '{"city":'), ToolCallDelta(0, '"Paris"}'),
    ToolCallEnd(0), UsageEvent(USAGE), Finish("tool_calls"),  # type: ignore[arg-type]
]


def target(mode: str) -> Target:
    return Target(ProviderProfile(name="contract", api_mode=mode), "contract-model")  # type: ignore[arg-type]


def encoded_stream(codec: Codec, events: list[StreamEvent]) -> bytes:
    encoder = codec.StreamEncoder(model="contract-model", id="answer-1", created=5)
    return b"".join(encoder.feed(event) for event in events) + encoder.close()


def decoded(codec: Codec, chunks: list[bytes]) -> list[StreamEvent]:
    decoder = codec.StreamDecoder()
    out = [event for chunk in chunks for event in decoder.feed(chunk)]
    return out + decoder.close()


def content(events: list[StreamEvent]) -> list[StreamEvent]:
    """What the caller sees of a stream, without the usage reports (whose count and
    place differ by protocol: Anthropic reports usage at the start too)."""
    return [event for event in events if not isinstance(event, UsageEvent)]


def plain(message: dict[str, Any]) -> dict[str, Any]:
    """A message with text-only content parts written as the one string they mean."""
    parts = message.get("content")
    if isinstance(parts, list) and all(p.get("type") == "text" for p in parts):
        return {**message, "content": "".join(p["text"] for p in parts)}
    return message


def params(fn: Any) -> list[tuple[str, Any, Any]]:
    sig = inspect.signature(fn)
    return [(p.name, p.kind, p.default) for p in sig.parameters.values() if p.name != "self"]


# ---------------------------------------------------------------- the registry
def test_codecs_has_one_codec_per_api_mode() -> None:
    assert tuple(sorted(CODECS)) == tuple(sorted(API_MODES))


@pytest.mark.parametrize("mode", MODES)
def test_codec_for_returns_the_registered_codec(mode: str) -> None:
    assert codec_for(mode) is CODECS[mode]  # type: ignore[index]


def test_codec_for_an_unknown_mode_is_a_config_error_naming_the_modes() -> None:
    with pytest.raises(ConfigError, match=r"'gemini'.*chat_completions, anthropic_messages, responses"):
        codec_for("gemini")


# ---------------------------------------------------------------- the shape
@pytest.mark.parametrize("mode", MODES)
def test_codec_satisfies_the_protocol(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    assert isinstance(codec, Codec)
    assert isinstance(codec.STOP_SEQUENCES, bool)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_codec_functions_take_the_protocols_parameters(mode: str, name: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    assert params(getattr(codec, name)) == params(getattr(Codec, name))


@pytest.mark.parametrize("mode", MODES)
def test_stream_decoder_needs_no_argument_and_takes_issuer(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    got = {name: (kind, default) for name, kind, default in params(codec.StreamDecoder)}
    for name, kind, default in params(StreamDecoderFactory.__call__):
        assert got.pop(name) == (kind, default)
    assert all(default is not inspect.Parameter.empty for _, default in got.values())  # extras optional
    decoder = codec.StreamDecoder()
    assert isinstance(decoder, StreamDecoder)
    assert (decoder.model, decoder.id, decoder.unknown_events) == ("", "", 0)


@pytest.mark.parametrize("mode", MODES)
def test_stream_encoder_takes_the_protocols_keywords(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    got = {name: (kind, default) for name, kind, default in params(codec.StreamEncoder)}
    for name, kind, default in params(StreamEncoderFactory.__call__):
        assert got.pop(name) == (kind, default)
    assert all(default is not inspect.Parameter.empty for _, default in got.values())
    assert isinstance(codec.StreamEncoder(model="m"), StreamEncoder)


@pytest.mark.parametrize("mode", MODES)
def test_codec_lives_in_the_same_files_as_every_other(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    home = codec.__name__
    assert codec.encode_request.__module__ in (f"{home}.request", f"{home}._decode_request")
    where = {
        "decode_request": ("request", "_decode_request"), "decode_response": ("response",),
        "encode_response": ("encode",), "decode_error": ("errors",),
        "StreamDecoder": ("stream",), "StreamEncoder": ("encode",),
    }
    for name, modules in where.items():
        assert getattr(codec, name).__module__ in {f"{home}.{m}" for m in modules}, name
    assert codec.decode_request is __import__(f"{home}.request", fromlist=["_"]).decode_request


# ---------------------------------------------------------------- requests
@pytest.mark.parametrize("mode", MODES)
def test_a_request_comes_back_from_its_own_wire_meaning_the_same(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    wire = codec.encode_request(REQUEST, target(mode))  # type: ignore[arg-type]
    assert wire.method == "POST"
    assert wire.headers["content-type"].startswith("application/json")
    back = codec.decode_request(wire.body, wire.headers)
    assert [plain(m) for m in back["messages"]] == REQUEST["messages"]
    assert back["model"] == "contract-model"
    assert back["max_tokens"] == 100
    tools = back["tools"]
    assert [t["function"]["name"] for t in tools] == ["weather"]
    assert tools[0]["function"]["parameters"] == WEATHER["function"]["parameters"]
    assert back["metadata"]["source_api"] == mode


# ---------------------------------------------------------------- answers
def completion() -> Any:
    acc = Accumulator(model="contract-model")
    for event in EVENTS:
        acc.feed(event)
    return acc.result()


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_decodes_back_to_the_same_completion(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    done = completion()
    body = codec.encode_response(done, None, created=5, id="answer-1", model="contract-model")
    back = codec.decode_response(body)
    assert back.message == done.message
    assert back.finish_reason == "tool_calls"
    assert (back.usage["prompt_tokens"], back.usage["completion_tokens"]) == (3, 5)
    assert back.model == "contract-model"


# ---------------------------------------------------------------- streams
@pytest.mark.parametrize("mode", MODES)
def test_an_encoded_stream_decodes_back_to_the_same_events(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    wire = encoded_stream(codec, EVENTS)
    events = decoded(codec, [wire])
    assert [(type(e), getattr(e, "reason", None)) if isinstance(e, Finish) else e for e in content(events)] == [
        *EVENTS[:6], (Finish, "tool_calls")]
    last_usage = [e for e in events if isinstance(e, UsageEvent)][-1].usage
    assert (last_usage["prompt_tokens"], last_usage["completion_tokens"]) == (3, 5)


@pytest.mark.parametrize("mode", MODES)
def test_any_chunking_of_a_stream_gives_the_same_events(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    wire = encoded_stream(codec, EVENTS)
    assert decoded(codec, [wire[i:i + 1] for i in range(len(wire))]) == decoded(codec, [wire])


@pytest.mark.parametrize("mode", MODES)
def test_the_decoder_knows_the_streams_model_and_id(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    decoder = codec.StreamDecoder()
    decoder.feed(encoded_stream(codec, EVENTS))
    assert (decoder.model, decoder.id) == ("contract-model", "answer-1")


@pytest.mark.parametrize("mode", MODES)
def test_close_on_a_cut_stream_reports_it(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    frames = encoded_stream(codec, EVENTS).split(b"\n\n")
    cut = b"\n\n".join(frames[: len(frames) // 2]) + b"\n\n"  # whole events, no terminal one
    decoder = codec.StreamDecoder()
    seen = decoder.feed(cut)
    assert any(isinstance(e, TextDelta) for e in seen)
    with pytest.raises(ProtocolError):
        decoder.close()


@pytest.mark.parametrize("mode", MODES)
def test_close_on_a_stream_with_no_events_reports_it(mode: str) -> None:
    with pytest.raises(ProtocolError):
        CODECS[mode].StreamDecoder().close()  # type: ignore[index]


@pytest.mark.parametrize("mode", MODES)
def test_an_error_in_a_stream_decodes_to_a_stream_error(mode: str) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    failure = RateLimitError("slow down", status=429)
    events = decoded(codec, [encoded_stream(codec, [TextDelta("Hi"), StreamError(failure)])])
    assert TextDelta("Hi") in events
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and isinstance(errors[0].error, ProviderError)
    assert "slow down" in str(errors[0].error)
    assert not any(isinstance(e, Finish) for e in events)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("status", "kind"), [(429, RateLimitError), (401, AuthenticationError),
                                              (500, ServerError)], ids=["429", "401", "500"])
def test_an_error_answer_becomes_the_typed_error_of_its_status(mode: str, status: int, kind: type) -> None:
    codec = CODECS[mode]  # type: ignore[index]
    headers = {"Retry-After": "7", "X-Request-Id": "req-9"}
    error = codec.decode_error(status, headers, b'{"error": {"message": "try later"}}')
    assert type(error) is kind
    assert (error.status, error.retry_after, error.request_id) == (status, 7.0, "req-9")
    assert "try later" in str(error)


@pytest.mark.parametrize("mode", MODES)
def test_an_error_answer_without_headers_is_still_typed(mode: str) -> None:
    error = CODECS[mode].decode_error(429, None, None)  # type: ignore[index]
    assert isinstance(error, RateLimitError)
    assert error.status == 429
