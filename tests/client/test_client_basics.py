"""The Client end to end over loopback HTTP against the emulator: each api_mode, sync
and async, complete and stream, and what reaches the wire (URL, auth header, extras) as
the emulator's request log shows it (credentials masked to their first six and last
four characters)."""

from __future__ import annotations

import orjson
import pytest

from modelwire import AsyncClient, Client, ConfigError, NoCredentialsError
from modelwire.codecs import codec_for
from modelwire.events import TextDelta
from modelwire.providers import CATALOG
from modelwire.transport import Response, Timeouts

MODES = {
    "chat_completions": "/v1",
    "anthropic_messages": "",
    "responses": "/v1",
}
PATHS = {
    "chat_completions": "/v1/chat/completions",
    "anthropic_messages": "/v1/messages",
    "responses": "/v1/responses",
}
HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
ANSWER = 'You asked: "hi". This is a deterministic answer from the modelwire emulator.'
FULL = "Hello from the scripted provider"


def _client(wire, mode, cls=Client, **kw):
    return cls(f"custom/{wire.model}", base_url=wire.base_url(mode), api_mode=mode,
               api_key=KEY, **kw)


def _masked(secret):
    return f"{secret[:6]}…{secret[-4:]}"


@pytest.mark.parametrize("mode", list(MODES))
def test_complete_returns_the_answer_with_facts_filled(wire, mode):
    with _client(wire, mode) as client:
        done = client.complete(HI, max_tokens=50)
    assert done.text == ANSWER
    assert done.finish_reason == "stop"
    assert (done.provider, done.model) == ("custom", wire.model)
    assert [a.outcome for a in done.attempts] == ["ok"]
    usage = done.usage  # the emulator counts ceil(characters / 4)
    assert usage["completion_tokens"] == -(-len(ANSWER) // 4)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    (request,) = wire.requests()
    assert request["path"] == PATHS[mode]
    assert not request["body"].get("stream")


@pytest.mark.parametrize("mode", list(MODES))
def test_stream_yields_events_and_keeps_the_completion(wire, mode):
    wire.script({"text": FULL, "tool_calls": [{"name": "get_weather",
                                               "arguments": {"city": "Paris"}}]})
    with _client(wire, mode) as client:
        stream = client.stream(HI, tools=[{"type": "function", "function": {
            "name": "get_weather", "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}}}}}])
        events = list(stream)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == FULL
    done = stream.completion
    assert done.text == text  # nothing duplicated
    assert done.finish_reason == "tool_calls"
    (call,) = done.tool_calls
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert wire.requests()[0]["body"]["stream"] is True


@pytest.mark.parametrize("mode", list(MODES))
async def test_async_client_completes_and_streams(wire, mode):
    async with _client(wire, mode, cls=AsyncClient) as client:
        done = await client.complete(HI)
        stream = client.stream(HI)
        events = [e async for e in stream]
    assert done.text == ANSWER
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == done.text
    assert stream.completion.text == done.text
    assert stream.completion.provider == "custom"


def test_auth_header_follows_the_protocol(wire):
    for mode in MODES:
        with _client(wire, mode) as client:
            client.complete(HI)
    chat, anthropic, responses = (r["headers"] for r in wire.requests())
    assert chat["authorization"] == _masked(f"Bearer {KEY}")
    assert anthropic["x-api-key"] == _masked(KEY) and "authorization" not in anthropic
    assert responses["authorization"] == _masked(f"Bearer {KEY}")
    assert "x-api-key" not in chat and "x-api-key" not in responses


def test_extra_is_merged_and_headers_are_sent(wire):
    with _client(wire, "chat_completions", headers={"x-client": "a"}) as client:
        client.complete(HI, extra={"seed": 7, "temperature": 0.1}, headers={"x-call": "b"},
                        temperature=0.9)
    request = wire.requests()[0]
    assert request["body"]["seed"] == 7
    assert request["body"]["temperature"] == 0.1  # extra is merged last
    assert request["headers"]["x-client"] == "a" and request["headers"]["x-call"] == "b"


def test_no_secret_in_repr_or_errors(wire):
    wire.script({"status": 400, "error": {"message": "bad thing",
                                          "type": "invalid_request_error"}})
    with _client(wire, "chat_completions") as client:
        assert KEY not in repr(client)
        with pytest.raises(Exception) as info:
            client.complete(HI)
    assert KEY not in repr(info.value) and KEY not in str(info.value)


def test_missing_key_names_the_variables_to_set():
    with Client("openai/gpt-5-mini") as client, pytest.raises(NoCredentialsError) as info:
        client.complete(HI)
    assert "OPENAI_API_KEY" in str(info.value)


def test_env_key_is_read_at_request_time(wire, monkeypatch):
    monkeypatch.setenv("MY_FAKE_KEY", "sk-from-env-0123456789")
    from modelwire.config import config_from_dict

    config = config_from_dict({"models": {"mine": {
        "provider": "custom", "model": wire.model, "api_mode": "chat_completions",
        "base_url": wire.base_url("chat_completions"), "api_key_env": "MY_FAKE_KEY"}}})
    with Client("mine", config=config) as client:
        done = client.complete(HI)
    assert done.text
    assert wire.requests()[0]["headers"]["authorization"] == _masked("Bearer sk-from-env-0123456789")


def test_broken_user_config_never_breaks_a_provider_model_client(tmp_path, monkeypatch, wire):
    path = tmp_path / "modelwire.yaml"
    path.write_text("models: [this is: not valid")
    monkeypatch.setenv("MODELWIRE_CONFIG", str(path))
    with _client(wire, "chat_completions") as client:
        assert client.complete(HI).text
    with pytest.raises(ConfigError) as info:
        Client("some-config-name")
    assert str(path) in str(info.value)


def test_unknown_provider_fails_at_construction():
    with pytest.raises(ConfigError):
        Client("nosuchprovider/model-x", api_key=KEY)


# ------------------------------------------------------- every catalog row, no network
class Recorder:
    """A sync transport that records what would be sent and answers from the codec."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sent: list[tuple[str, dict[str, str]]] = []

    def send(self, request, base_url, timeouts):
        self.sent.append((base_url.rstrip("/") + request.path, dict(request.headers)))
        from modelwire.accumulate import Accumulator

        acc = Accumulator(model="m", id="x")
        acc.feed(TextDelta("ok"))
        body = orjson.dumps(codec_for(self.mode).encode_response(acc.result()))
        return Response(200, {"content-type": "application/json"}, body)

    def stream(self, request, base_url, timeouts):
        self.sent.append((base_url.rstrip("/") + request.path, dict(request.headers)))
        encoder = codec_for(self.mode).StreamEncoder(model="m", id="x")
        from modelwire.events import Finish

        body = encoder.feed(TextDelta("ok")) + encoder.feed(Finish("stop")) + encoder.close()
        return _Streamed(body)

    def close(self):
        pass


class _Streamed:
    status = 200

    def __init__(self, body):
        self.body = body
        self.headers = {"content-type": "text/event-stream"}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def iter_chunks(self):
        yield self.body

    def read(self):
        return self.body

    def close(self):
        pass


AUTH = {"bearer": ("authorization", f"Bearer {KEY}"), "x-api-key": ("x-api-key", KEY),
        "api-key": ("api-key", KEY), "none": (None, None)}


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_catalog_row_sends_to_its_url_with_its_auth_header(name, monkeypatch):
    profile = CATALOG[name]
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://myres.openai.azure.com")
    kw = {}
    if name == "custom":
        kw = {"base_url": "https://llm.example.com/v1", "api_mode": "chat_completions"}
    elif name.startswith("emulator"):
        kw = {"base_url": "http://127.0.0.1:9" + MODES[profile.api_mode]}
    recorder = Recorder(profile.api_mode)
    with Client(f"{name}/some-model", api_key=KEY, transport=recorder, **kw) as client:
        assert client.complete(HI).text == "ok"
    ((url, headers),) = recorder.sent
    base = kw.get("base_url") or profile.default_base_url({
        "AZURE_OPENAI_ENDPOINT": "https://myres.openai.azure.com"})
    suffix = PATHS[profile.api_mode] if profile.api_mode == "anthropic_messages" else \
        PATHS[profile.api_mode].removeprefix("/v1")
    assert url == base.rstrip("/").removesuffix("/v1" if profile.api_mode ==
                                                 "anthropic_messages" else "") + suffix
    header, value = AUTH[profile.auth_style]
    if header is not None:
        assert headers[header] == value
    for other in {"authorization", "x-api-key", "api-key"} - {header}:
        assert other not in headers



@pytest.mark.parametrize("mode", list(MODES))
def test_a_server_answering_json_to_a_stream_request_still_streams(wire, mode):
    wire.script({"text": FULL, "tool_calls": [{"name": "get_time", "arguments": {}}]})
    wire.fault("json_answer")
    with _client(wire, mode) as client:
        stream = client.stream(HI)
        events = list(stream)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == FULL
    done = stream.completion
    assert done.text == FULL
    assert [c["function"]["name"] for c in done.tool_calls] == ["get_time"]
    usage = done.usage
    assert done.finish_reason == "tool_calls" and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    (request,) = wire.requests()
    assert request["body"]["stream"] is True and request["fault"] == "json_answer"


async def test_async_stream_of_a_json_answer(wire):
    wire.fault("json_answer")
    async with _client(wire, "chat_completions", cls=AsyncClient) as client:
        stream = client.stream(HI)
        text = "".join([e.text async for e in stream if isinstance(e, TextDelta)])
    assert text == stream.completion.text == ANSWER


def test_a_successful_attempt_keeps_every_field_of_the_decoded_completion():
    # Turn.succeed builds the caller's Completion field by field (no dataclasses.replace
    # on the hot path): a field it forgot would come back as its default
    from dataclasses import fields

    from modelwire.client._core import Options
    from modelwire.client._turn import Turn
    from modelwire.completion import Completion, Timing
    from modelwire.types import empty_usage

    assert [f.name for f in fields(Completion)] == [
        "message", "finish_reason", "usage", "model", "provider", "interrupted", "attempts", "id",
        "native_finish_reason", "raw", "stop_sequence", "price", "timing",
    ], "a new Completion field: name it in Turn.succeed, then here"
    client = Client("openai/gpt-4.1-mini", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    turn = Turn(client._settings, HI, Options(), stream=False)
    usage = {**empty_usage(), "prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    given = Completion(message={"role": "assistant", "content": "x"}, finish_reason="length", usage=usage,
                       model="served-model", provider="", id="chatcmpl-1", native_finish_reason="max_output",
                       raw={"id": "chatcmpl-1"}, stop_sequence="END")
    done = turn.succeed(given)
    for name in ("message", "finish_reason", "usage", "model", "id", "native_finish_reason", "raw", "stop_sequence"):
        assert getattr(done, name) == getattr(given, name), name
    assert done.provider == "openai" and done.interrupted is False
    assert [(a.provider, a.outcome) for a in done.attempts] == [("openai", "ok")]
    unnamed = turn.succeed(Completion(message={"role": "assistant", "content": ""}, finish_reason="stop",
                                      usage=usage, model=""), interrupted=True)
    assert unnamed.model == "gpt-4.1-mini" and unnamed.interrupted is True
    timing = Timing(work=0.25, waited=1.5)  # the call's own, given by the Client's loop
    assert turn.succeed(given, timing=timing).timing is timing and done.timing is None


def test_each_request_gets_the_timeouts_its_endpoint_needs():
    # a local server may think for ages (no stale-stream limit); a cloud endpoint keeps
    # its limit; timeouts the caller set are used as they are, local or not
    from modelwire.client._core import Options
    from modelwire.client._turn import Turn

    def planned(model: str, **kw: object) -> Timeouts:
        client = Client(model, api_key="sk-test-0123456789", **kw)
        turn = Turn(client._settings, [{"role": "user", "content": "hi"}], Options(), stream=False)
        return turn.plan().timeouts

    assert planned("ollama/llama3") == Timeouts(connect=15.0, read=600.0, stale=None, total=None)
    assert planned("openai/gpt-5-mini").stale == 180.0
    assert planned("ollama/llama3", timeout=30) == Timeouts(connect=15.0, read=30.0, stale=30.0)
