"""Hypothesis: the Chat Completions codec's invariants.

* any chunking of a recorded stream gives the same events;
* decode_request(encode_request(x)) == x over the representable subset;
* decode_response(encode_response(x)) == x over the representable subset;
* decoding what the StreamEncoder wrote gives back the events it was fed.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import load_corpus
from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs import Target
from modelwire.codecs import chat_completions as cc
from modelwire.completion import Completion
from modelwire.errors import ModelwireError
from modelwire.events import (
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.providers.profile import ProviderProfile

STREAMS = [d["response"]["sse"].encode() for _, d in load_corpus()
           if d.get("api") == "chat_completions" and "sse" in d["response"]]

# text without "<" (inline think tags are split out, by design) and without
# surrogates (not valid UTF-8)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=30)
NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)
CALL_ID = st.from_regex(r"call_[A-Za-z0-9]{4,12}", fullmatch=True)
ARGS = st.dictionaries(NAME, st.integers() | TEXT, max_size=3).map(lambda d: json.dumps(d))


def _comparable(events: list[Any]) -> list[Any]:
    out = []
    for e in events:
        if isinstance(e, UsageEvent):
            out.append(("usage", {k: v for k, v in e.usage.items() if k != "raw"}))
        elif isinstance(e, StreamError):
            out.append(("error", type(e.error), str(e.error)))
        else:
            out.append(e)
    return out


def _decode(data: bytes, cuts: list[int]) -> list[Any]:
    dec = cc.StreamDecoder()
    events: list[Any] = []
    last = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        events += dec.feed(data[last:cut])
        last = cut
    return events + dec.close()


@given(st.sampled_from(STREAMS), st.lists(st.floats(0, 1), max_size=40))
def test_any_chunking_of_a_recorded_stream_gives_the_same_events(data: bytes, fractions: list[float]) -> None:
    cuts = [int(f * len(data)) for f in fractions]
    assert _comparable(_decode(data, cuts)) == _comparable(_decode(data, []))


# ------------------------------------------------------------------ requests
@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": draw(TEXT)})
    for _ in range(draw(st.integers(1, 3))):
        user: Any = draw(TEXT) if draw(st.booleans()) else [{"type": "text", "text": draw(TEXT)}]
        msgs.append({"role": "user", "content": user})
        ids = draw(st.lists(CALL_ID, max_size=3, unique=True))
        if ids:
            calls = [{"id": i, "type": "function", "function": {"name": draw(NAME), "arguments": draw(ARGS)}}
                     for i in ids]
            msgs.append({"role": "assistant", "content": draw(st.none() | TEXT), "tool_calls": calls})
            msgs += [{"role": "tool", "tool_call_id": i, "content": draw(TEXT)} for i in ids]
        msgs.append({"role": "assistant", "content": draw(TEXT)})
    return msgs


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    req: dict[str, Any] = {"model": draw(NAME), "messages": draw(conversations())}
    if draw(st.booleans()):
        req["tools"] = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                        for n in draw(st.lists(NAME, min_size=1, max_size=3, unique=True))]
        req["tool_choice"] = draw(st.sampled_from(["auto", "none", "required"]))
        req["parallel_tool_calls"] = draw(st.booleans())
    optional = {
        "max_tokens": st.integers(1, 100000),
        "temperature": st.floats(0, 2, allow_nan=False),
        "top_p": st.floats(0, 1, allow_nan=False),
        "stop": st.lists(TEXT, min_size=1, max_size=2),
        "response_format": st.just({"type": "json_object"}),
        "stream": st.just(True),  # false is spelled by leaving it out
        "thinking": st.sampled_from(["low", "medium", "high"]),  # xhigh depends on the model
        "extra": st.fixed_dictionaries({"seed": st.integers(0, 9)}),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            req[key] = draw(strategy)
    return req


@given(requests())
def test_decode_request_inverts_encode_request(req: dict[str, Any]) -> None:
    profile = ProviderProfile("openai", reasoning_request="reasoning_effort", developer_role=True)
    encoded = cc.encode_request(req, Target(profile, model=req["model"]))
    back = cc.decode_request(encoded.body)
    expected = dict(req)
    metadata: dict[str, Any] = {"source_api": "chat_completions"}
    if req.get("stream"):
        metadata["stream_options"] = {"include_usage": True}
    if "thinking" in req:
        metadata["native_thinking"] = "reasoning_effort"
        expected["extra"] = {**req.get("extra", {}), "reasoning_effort": req["thinking"]}
    expected["metadata"] = metadata
    assert back == expected


# ----------------------------------------------------------------- responses
@st.composite
def completions(draw: st.DrawFn) -> Completion:
    calls = [{"id": i, "type": "function", "function": {"name": draw(NAME), "arguments": draw(ARGS)}}
             for i in draw(st.lists(CALL_ID, max_size=3, unique=True))]
    text = draw(TEXT)
    msg: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    reasoning = draw(TEXT)
    if reasoning:
        msg["reasoning_content"] = reasoning
        msg["reasoning_details"] = [{"issuer": "openai", "block": {"type": "reasoning_content", "text": reasoning}}]
    if draw(st.booleans()):
        msg["refusal"] = draw(TEXT.filter(bool))
    if calls:
        msg["tool_calls"] = calls
    prompt, completion_tokens, cached, thought = (draw(st.integers(0, 5000)) for _ in range(4))
    usage = {"prompt_tokens": prompt + cached, "completion_tokens": completion_tokens + thought,
             "total_tokens": prompt + cached + completion_tokens + thought, "cache_read_tokens": cached,
             "cache_write_tokens": 0, "reasoning_tokens": thought, "raw": {}}
    reason = "tool_calls" if calls else draw(st.sampled_from(["stop", "length", "content_filter"]))
    return Completion(message=msg, finish_reason=reason, usage=usage,  # type: ignore[arg-type]
                      model=draw(NAME), id=draw(CALL_ID))


@given(completions())
def test_decode_response_inverts_encode_response(c: Completion) -> None:
    back = cc.decode_response(json.dumps(cc.encode_response(c)).encode())
    assert back.message == c.message
    assert (back.finish_reason, back.model, back.id) == (c.finish_reason, c.model, c.id)
    assert {k: v for k, v in back.usage.items() if k != "raw"} == {k: v for k, v in c.usage.items() if k != "raw"}


# ------------------------------------------------------------------- streams
@st.composite
def event_streams(draw: st.DrawFn) -> list[Any]:
    """Event sequences in the form the decoder emits them."""
    events: list[Any] = []
    reasoning = draw(st.lists(TEXT.filter(bool), max_size=3))
    events += [ReasoningDelta(r) for r in reasoning]
    if reasoning:  # complete once the answer starts
        events.append(ReasoningBlock("openai", {"type": "reasoning_content", "text": "".join(reasoning)}))
    events += [TextDelta(t) for t in draw(st.lists(TEXT.filter(bool), max_size=3))]
    n_calls = draw(st.integers(0, 3))
    for i in range(n_calls):
        events.append(ToolCallStart(i, draw(CALL_ID), draw(NAME)))
        events += [ToolCallDelta(i, a) for a in draw(st.lists(TEXT.filter(bool), max_size=3))]
    events += [ToolCallEnd(i) for i in range(n_calls)]
    events.append(Finish("tool_calls" if n_calls else draw(st.sampled_from(["stop", "length"]))))
    if draw(st.booleans()):
        p, c = draw(st.integers(0, 999)), draw(st.integers(0, 999))
        events.append(UsageEvent({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c,
                                  "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0,
                                  "raw": {}}))
    return events


@given(event_streams(), st.lists(st.floats(0, 1), max_size=10))
def test_decoding_what_the_encoder_wrote_gives_the_same_events(events: list[Any], cuts: list[float]) -> None:
    enc = cc.StreamEncoder(model="m", id="chatcmpl-p")
    data = b"".join(enc.feed(e) for e in events) + enc.close()
    assert _comparable(_decode(data, [int(f * len(data)) for f in cuts])) == _comparable(events)


# ----------------------------------------------------------------- bad input
ITEMS = [d for _, d in load_corpus() if d.get("api") == "chat_completions"]
JUNK = st.sampled_from([None, 1, -1, 1.5, True, "x", "", [], {}, [1], {"a": 1}, [None], [{}], "<think>"])


def _paths(obj: Any, path: tuple = ()) -> list[tuple]:
    out = [path] if path else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*path, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, source: list[Any]) -> Any:
    obj = json.loads(json.dumps(draw(st.sampled_from(source))))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(obj)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        node = obj
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = json.loads(json.dumps(draw(JUNK)))
    return obj


PROFILES = [ProviderProfile("p"),
            ProviderProfile("m", tool_id_format="mistral9", reasoning_echo="required", vision=False,
                            unique_tool_names=True, tool_choice_values=frozenset({"auto"})),
            ProviderProfile("o", reasoning_echo="reasoning_details", reasoning_request="openrouter")]


@given(mutated([d["request"]["body"] for d in ITEMS]))
def test_wrong_types_in_a_request_are_typed_errors(body: Any) -> None:
    try:
        req = cc.decode_request(json.dumps(body).encode())
        for profile in PROFILES:
            cc.encode_request(req, Target(profile, "m"))
    except ModelwireError:
        pass  # MessageError / ProtocolError naming the field: never KeyError or TypeError


@given(mutated([d["response"]["body"] for d in ITEMS if "body" in d["response"]]))
def test_wrong_types_in_a_response_are_typed_errors(body: Any) -> None:
    try:
        cc.encode_response(cc.decode_response(json.dumps(body).encode()))
    except ModelwireError:
        pass


@given(st.sampled_from([d["response"]["sse"] for d in ITEMS if "sse" in d["response"]]), st.data())
def test_wrong_types_in_a_stream_chunk_are_typed_errors(sse: str, data: st.DataObject) -> None:
    lines = sse.split("\n")
    chunks = [i for i, line in enumerate(lines) if line.startswith("data: {")]
    i = data.draw(st.sampled_from(chunks))
    lines[i] = "data: " + json.dumps(data.draw(mutated([json.loads(lines[i][6:])])))
    try:
        _decode("\n".join(lines).encode(), [])
    except ModelwireError:
        pass
