"""Anthropic streams: any chunking gives the same events; encode -> decode is the identity
over the events an Anthropic stream can carry; decode_request inverts encode_request."""

from __future__ import annotations

import json

from conftest import corpus_files
from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.codecs.anthropic_messages.response import finish_reason
from modelwire.events import (
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.providers.profile import ProviderProfile

STREAMS = [p for p in corpus_files("*__anthropic_messages__*.json")
           if "sse" in json.loads(p.read_text())["response"]]


def _decode(chunks: list[bytes]):
    dec = am.StreamDecoder()
    out = []
    for c in chunks:
        out += dec.feed(c)
    return out + dec.close()


@given(st.sampled_from(STREAMS), st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_any_chunking_of_a_recorded_stream_gives_the_same_events(path, cuts):
    data = json.loads(path.read_text())["response"]["sse"].encode()
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    assert _decode(chunks) == _decode([data])


texts = st.text(min_size=1, max_size=12)


@st.composite
def anthropic_events(draw):
    """An event sequence the Anthropic decoder itself produces: blocks in order."""
    usage = am.usage_from({"input_tokens": draw(st.integers(0, 99)), "output_tokens": 1,
                           "cache_read_input_tokens": draw(st.integers(0, 9))})
    out = [UsageEvent(usage)]
    calls = 0
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["text", "thinking", "redacted", "tool", "server"]))
        if kind == "text":
            out += [TextDelta(t) for t in draw(st.lists(texts, min_size=1, max_size=3))]
            if draw(st.booleans()):
                out.append(Passthrough("anthropic", {"type": "citations", "citations": [{"type": "char_location", "cited_text": "x"}]}))
        elif kind == "thinking":
            parts = draw(st.lists(texts, min_size=1, max_size=3))
            sig = draw(st.text(alphabet="ABCxyz+/=", min_size=4, max_size=10))
            out += [ReasoningDelta(text=t) for t in parts] + [ReasoningDelta(signature=sig),
                    ReasoningBlock("anthropic", {"type": "thinking", "thinking": "".join(parts), "signature": sig})]
        elif kind == "redacted":
            out += [ReasoningDelta(redacted="EmwK"), ReasoningBlock("anthropic", {"type": "redacted_thinking", "data": "EmwK"})]
        elif kind == "tool":
            out.append(ToolCallStart(calls, f"toolu_{calls}", "f"))
            frags = draw(st.lists(st.sampled_from(['{"a"', ": 1", ', "b": "x"', "}"]), min_size=1, max_size=3))
            out += [ToolCallDelta(calls, f) for f in frags] + [ToolCallEnd(calls)]
            calls += 1
        else:
            out.append(Passthrough("anthropic", {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                                 "input": {"query": draw(texts)}}))
    final = am.usage_from({**usage["raw"], "output_tokens": draw(st.integers(1, 999))})
    native = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens", "pause_turn", "refusal"]))
    out += [UsageEvent(final), Finish(finish_reason(native), native=native)]
    return out


@given(anthropic_events())
def test_encoding_then_decoding_events_is_the_identity(events):
    enc = am.StreamEncoder(model="claude-x", id="msg_1")
    data = b"".join(enc.feed(e) for e in events) + enc.close()
    assert _counts(_decode([data])) == _counts(events)


def _counts(events):
    """Usage events by their counts: ``raw`` is the upstream's own object, which the encoder
    rewrites from the counts (never copies: it may be another protocol's)."""
    return [UsageEvent({k: v for k, v in e.usage.items() if k != "raw"}) if isinstance(e, UsageEvent) else e
            for e in events]


PROFILE = ProviderProfile(name="anthropic", api_mode="anthropic_messages", issuer="anthropic",
                          anthropic_version="2023-06-01", fine_grained_tool_streaming=False)


@st.composite
def native_requests(draw):
    """Internal requests in the subset an Anthropic request represents exactly."""
    msgs = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": draw(texts.filter(str.strip))})
    n = 0
    for _ in range(draw(st.integers(1, 3))):
        msgs.append({"role": "user", "content": draw(texts.filter(str.strip))})
        if draw(st.booleans()):
            cid = f"toolu_{n}"
            n += 1
            msgs.append({"role": "assistant", "content": draw(texts.filter(str.strip)),
                         "tool_calls": [{"id": cid, "type": "function",
                                         "function": {"name": "f", "arguments": json.dumps({"k": draw(texts)}, separators=(",", ":"), ensure_ascii=False)}}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "content": draw(texts.filter(str.strip))})
        msgs.append({"role": "assistant", "content": draw(texts.filter(str.strip))})
    if msgs[-1]["role"] == "assistant":
        msgs.append({"role": "user", "content": draw(texts.filter(str.strip))})
    req = {"model": "claude-sonnet-4-5", "messages": msgs, "max_tokens": draw(st.integers(1, 64000))}
    if n:
        req["tools"] = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
        req["tool_choice"] = draw(st.sampled_from(["auto", "required"]))
    if draw(st.booleans()):
        req["temperature"] = draw(st.sampled_from([0.0, 0.5, 1.0]))
    if draw(st.booleans()):
        req["stop"] = [draw(texts)]
    return req


@given(native_requests())
def test_decode_request_inverts_encode_request(req):
    enc = am.encode_request(req, Target(PROFILE, req["model"]))
    back = am.decode_request(enc.body, enc.headers)
    back.pop("metadata")
    assert back == req
