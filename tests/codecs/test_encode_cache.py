"""The encode cache: tool schemas converted once per content, never a different output."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

import orjson
import pytest

from modelwire import Client
from modelwire.accumulate import Accumulator
from modelwire.codecs import Target, anthropic_messages, codec_for
from modelwire.codecs.cache import EncodeCache, Fragment
from modelwire.errors import MessageError
from modelwire.events import TextDelta
from modelwire.messages import prepare_conversation
from modelwire.providers import get_profile
from modelwire.providers.profile import ProviderProfile
from modelwire.transport import Response

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"
KEY = "sk-" + "ant-test"
MODEL = "claude-sonnet-4-5"


def tool(name: str, parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": f"{name} things", "parameters": parameters}}


OPTIONAL_PATH = {"type": "object", "properties": {
    "path": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "where"}}}


def encoded_tools(request: dict[str, Any], cache: EncodeCache | None,
                  profile: ProviderProfile | None = None) -> list[dict[str, Any]]:
    target = Target(profile or get_profile("anthropic"), MODEL, api_key=KEY, cache=cache)
    return orjson.loads(anthropic_messages.encode_request(request, target).body)["tools"]  # type: ignore[no-any-return]


def request_with(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "tools": list(tools)}


@dataclasses.dataclass(frozen=True, slots=True)
class _Counting(ProviderProfile):
    """Anthropic's rules, keeping each schema it is asked to sanitize: one per conversion."""

    seen: list[Any] = dataclasses.field(default_factory=list, compare=False, hash=False)

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        self.seen.append(schema)
        return schema


def counting() -> _Counting:
    return _Counting("anthropic", api_mode="anthropic_messages")


def test_a_tool_schema_is_converted_once_and_reused_on_later_turns():
    cache, profile = EncodeCache(), counting()
    request = request_with(tool("read", OPTIONAL_PATH))
    first = encoded_tools(request, cache, profile)
    second = encoded_tools(request, cache, profile)
    assert len(profile.seen) == 1
    assert first == second == encoded_tools(request, None)
    assert first[0]["input_schema"]["properties"]["path"] == {"type": "string", "description": "where"}
    assert len(cache) == 3  # the schema, the list it is in (kept when seen again), a mark that it was seen


def test_a_changed_tool_is_converted_again():
    cache, profile = EncodeCache(), counting()
    encoded_tools(request_with(tool("read", OPTIONAL_PATH)), cache, profile)
    changed = json.loads(json.dumps(OPTIONAL_PATH))
    changed["properties"]["path"]["description"] = "which file"
    changed["properties"]["limit"] = {"type": "integer"}
    out = encoded_tools(request_with(tool("read", changed)), cache, profile)
    assert out[0]["input_schema"]["properties"] == {
        "path": {"type": "string", "description": "which file"}, "limit": {"type": "integer"}}
    assert len(profile.seen) == 2


def test_the_same_keys_in_another_order_are_another_entry_keeping_that_order():
    cache = EncodeCache()
    a = {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}}
    b = {"type": "object", "properties": {"y": {"type": "integer"}, "x": {"type": "string"}}}
    encoded_tools(request_with(tool("t", a)), cache)
    out = encoded_tools(request_with(tool("t", b)), cache)
    assert list(out[0]["input_schema"]["properties"]) == ["y", "x"]


@dataclasses.dataclass(frozen=True, slots=True)
class _NoFormats(ProviderProfile):
    """A provider whose validator rejects ``format`` (as Gemini's and xAI's do)."""

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        props = {k: {kk: vv for kk, vv in v.items() if kk != "format"} for k, v in schema["properties"].items()}
        return {**schema, "properties": props}


def test_one_schema_is_converted_for_each_profile_that_sanitizes_it_differently():
    cache = EncodeCache()
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}}
    request = request_with(tool("t", schema))
    for _ in range(2):
        plain = encoded_tools(request, cache)
        strict = encoded_tools(request, cache, _NoFormats("strict-anthropic", api_mode="anthropic_messages"))
        assert plain[0]["input_schema"]["properties"]["when"] == {"type": "string", "format": "date-time"}
        assert strict[0]["input_schema"]["properties"]["when"] == {"type": "string"}


def test_changing_the_callers_schema_after_an_encode_never_changes_the_cached_result():
    cache = EncodeCache()
    schema = json.loads(json.dumps(OPTIONAL_PATH))
    request = request_with(tool("read", schema))
    before = encoded_tools(request, cache)
    schema["properties"]["path"]["description"] = "changed in place"
    after = encoded_tools(request, cache)  # the caller's dict changed: new content, new entry
    assert after[0]["input_schema"]["properties"]["path"]["description"] == "changed in place"
    assert encoded_tools(request_with(tool("read", OPTIONAL_PATH)), cache) == before


def test_a_cached_result_is_immutable_bytes():
    cache = EncodeCache()
    convert = cache.converter("kind", lambda c: {"seen": c})
    first = convert({"a": [1]})
    assert isinstance(first, Fragment)
    with pytest.raises((AttributeError, TypeError)):
        first.contents = b"{}"  # type: ignore[attr-defined]
    assert orjson.dumps({"x": convert({"a": [1]})}) == b'{"x":{"seen":{"a":[1]}}}'


def test_content_that_is_not_plain_json_is_converted_every_time_uncached():
    @dataclasses.dataclass
    class Spec:
        x: int

    calls: list[Any] = []
    cache = EncodeCache()
    convert = cache.converter("kind", lambda c: calls.append(c) or {"ok": True})
    spec = Spec(1)
    assert convert(spec) == {"ok": True}
    assert convert(spec) == {"ok": True}
    assert calls == [spec, spec]  # the caller's own object, not a JSON copy of it
    assert len(cache) == 0


def test_the_cache_keeps_at_most_max_entries_dropping_the_least_recently_used():
    cache = EncodeCache(max_entries=3)
    convert = cache.converter("kind", lambda c: {"v": c})
    for i in range(3):
        convert(i)
    convert(0)  # used again: now the most recent
    convert(3)
    assert len(cache) == 3
    misses = cache.misses
    convert(0)
    assert cache.misses == misses  # kept
    convert(1)
    assert cache.misses == misses + 1  # the least recent, dropped


def test_the_cache_keeps_at_most_max_bytes():
    cache = EncodeCache(max_bytes=1000)
    convert = cache.converter("kind", lambda c: c)
    for i in range(50):
        convert({"i": i, "pad": "x" * 100})
        assert cache.size_bytes <= 1000
    assert 0 < len(cache) < 50
    convert({"big": "x" * 2000})  # larger than the whole budget: converted, not kept
    assert cache.size_bytes <= 1000


@pytest.mark.parametrize("cache", [None, EncodeCache()], ids=["uncached", "cached"])
def test_a_schema_whose_properties_are_not_an_object_is_refused_as_a_message_error(cache):
    request = request_with(tool("t", {"anyOf": [{"type": "object"}], "properties": "path"}))
    with pytest.raises(MessageError, match="malformed request for Anthropic"):
        encoded_tools(request, cache)
    assert cache is None or len(cache) == 0


def test_bounds_below_one_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        EncodeCache(max_entries=0)


def _claude_code_request(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / name).read_text())
    return anthropic_messages.decode_request(body.get("body", body))  # type: ignore[no-any-return]


@pytest.mark.parametrize(("name", "conversations"), [("tools_t0.json", 0), ("tools_t2.json", 1)])
def test_claude_codes_request_encodes_to_the_same_bytes_cold_warm_and_without_a_cache(name, conversations):
    request = _claude_code_request(name)
    cache = EncodeCache()
    profile = get_profile("anthropic")
    bodies = []
    for c in (None, cache, cache, cache):
        hits = cache.hits
        bodies.append(anthropic_messages.encode_request(request, Target(profile, MODEL, api_key=KEY, cache=c)).body)
    assert bodies[0] == bodies[1] == bodies[2] == bodies[3]
    # the warm encode converted none: its tools were found as one list (kept whole the
    # second time it was seen), and the history's turns when it is long enough to be kept
    # (tools_t2: 9 messages; tools_t0's 2 are converted every time)
    assert cache.hits - hits == 1 + conversations


class _Recorder:
    """A sync transport answering every request with "ok", keeping each body sent."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def send(self, request: Any, base_url: str, timeouts: Any) -> Response:
        self.bodies.append(request.body)
        acc = Accumulator(model="m", id="x")
        acc.feed(TextDelta("ok"))
        body = orjson.dumps(codec_for("anthropic_messages").encode_response(acc.result()))
        return Response(200, {"content-type": "application/json"}, body)

    def close(self) -> None:
        pass


def test_a_client_converts_its_tools_once_across_turns_in_the_cache_it_was_given():
    cache = EncodeCache()
    recorder = _Recorder()
    tools = [tool("read", OPTIONAL_PATH), tool("run", {"type": "object", "properties": {"cmd": {"type": "string"}}})]
    with Client(f"anthropic/{MODEL}", api_key=KEY, transport=recorder, encode_cache=cache) as client:
        assert client.encode_cache is cache
        client.complete([{"role": "user", "content": "one"}], tools=tools)
        client.complete([{"role": "user", "content": "two"}], tools=tools)
    # the list and its 2 schemas; then the list again (seen before: now kept whole), its schemas found
    assert (cache.misses, cache.hits) == (4, 2)
    sent = [orjson.loads(b)["tools"] for b in recorder.bodies[-2:]]
    assert sent[0] == sent[1]


def test_every_client_has_a_cache_of_its_own_by_default():
    with Client(f"anthropic/{MODEL}", api_key=KEY, transport=_Recorder()) as a, \
            Client(f"anthropic/{MODEL}", api_key=KEY, transport=_Recorder()) as b:
        assert isinstance(a.encode_cache, EncodeCache)
        assert a.encode_cache is not b.encode_cache


def test_the_gateways_clients_share_the_gateways_cache(tmp_path, monkeypatch):
    from modelwire.config import load_config
    from modelwire.gateway.app import Gateway

    monkeypatch.setenv("MW_TEST_KEY", KEY)
    path = tmp_path / "modelwire.yaml"
    path.write_text("models:\n"
                    f"  a: {{provider: anthropic, model: {MODEL}, api_key_env: MW_TEST_KEY}}\n"
                    "  b: {provider: anthropic, model: claude-opus-4-1, api_key_env: MW_TEST_KEY}\n")
    gateway = Gateway(load_config(str(path)), environ={})
    assert gateway.client("a").encode_cache is gateway.client("b").encode_cache is gateway.encode_cache


# ------------------------------------------------------------ conversations
def _history(n: int) -> list[dict[str, Any]]:
    """An agent's conversation: a question, then rounds of a signed thinking block and a
    tool call, and its result."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "fix the parser"}]
    for i in range(n):
        out.append({"role": "assistant", "content": f"step {i}", "reasoning_details": [
            {"issuer": "anthropic", "block": {"type": "thinking", "thinking": f"t{i}", "signature": f"c2ln{i}"}}],
            "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]})
        out.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"result {i}"})
    return out


def _encoded(messages: list[dict[str, Any]], cache: EncodeCache | None, profile: ProviderProfile | None = None) -> bytes:
    target = Target(profile or get_profile("anthropic"), MODEL, api_key=KEY, cache=cache)
    return anthropic_messages.encode_request({"model": MODEL, "messages": messages}, target).body


def test_an_agents_next_turn_converts_only_its_new_messages():
    cache = EncodeCache()
    history = _history(6)
    _encoded(json.loads(json.dumps(history)), cache)
    size = cache.size_bytes
    nxt = [*history, *_history(7)[-2:]]  # the answer to the tool result, and its result
    assert _encoded(json.loads(json.dumps(nxt)), cache) == _encoded(nxt, None)
    assert len(cache) == 1  # one conversation: the new turn took the old one's place
    assert size < cache.size_bytes < 2 * size + 4096


@pytest.mark.parametrize("where", ["text", "tool result", "signature", "cache_control"])
def test_a_message_changed_in_place_with_the_same_length_is_converted_again(where):
    cache = EncodeCache()
    history = _history(6)
    _encoded(history, cache)
    changed = json.loads(json.dumps(history))
    if where == "text":
        changed[3]["content"] = "stop 1"  # "step 1": one letter
    elif where == "tool result":
        changed[-1]["content"] = "result 6"  # "result 5"
    elif where == "signature":
        changed[5]["reasoning_details"][0]["block"]["signature"] = "c2lu2"  # "c2ln2"
    else:
        changed[9]["cache_control"] = {"type": "ephemeral"}
    assert _encoded(changed, cache) == _encoded(changed, None) != _encoded(history, None)


def test_earlier_thinking_is_dropped_from_kept_turns_once_a_new_user_message_starts_a_loop():
    profile = dataclasses.replace(get_profile("anthropic"), name="drops", drop_earlier_thinking=True)
    cache = EncodeCache()
    history = _history(6)
    first = orjson.loads(_encoded(history, cache, profile))
    assert first["messages"][-2]["content"][0]["type"] == "thinking"  # the current loop keeps it
    nxt = [*history, {"role": "assistant", "content": "done"}, {"role": "user", "content": "now the docs"}]
    body = _encoded(nxt, cache, profile)
    assert body == _encoded(nxt, None, profile)
    assert not any(b["type"] == "thinking" for m in orjson.loads(body)["messages"] for b in m["content"]
                   if isinstance(m["content"], list))


def test_a_conversation_kept_for_one_model_is_not_reused_where_system_messages_are_native():
    history = [*_history(5), {"role": "system", "content": "be brief"}, {"role": "assistant", "content": "ok"},
               {"role": "user", "content": "go on"}]
    cache = EncodeCache()
    for model in ("claude-sonnet-4-5", "claude-opus-4-8", "claude-sonnet-4-5"):
        target = Target(get_profile("anthropic"), model, api_key=KEY, cache=cache)
        plain = Target(get_profile("anthropic"), model, api_key=KEY)
        request = {"model": model, "messages": history}
        assert anthropic_messages.encode_request(request, target).body == \
            anthropic_messages.encode_request(request, plain).body


def test_a_client_converts_an_agents_earlier_turns_once_across_calls():
    cache = EncodeCache()
    recorder = _Recorder()
    history = _history(6)
    with Client(f"anthropic/{MODEL}", api_key=KEY, transport=recorder, encode_cache=cache) as client:
        client.complete(history)
        hits = cache.hits
        nxt = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "and the docs"}]
        client.complete(nxt)
    assert cache.hits == hits + 1  # the conversation found, its turns kept
    sent = orjson.loads(recorder.bodies[-1])["messages"]
    assert sent == orjson.loads(_encoded(prepare_conversation(nxt), None))["messages"]
