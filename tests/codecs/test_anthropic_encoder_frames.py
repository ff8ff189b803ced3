"""The Anthropic stream encoder frames events by hand and writes text/thinking deltas
from a frame rendered once per block; the bytes must equal the general framing."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs.anthropic_messages.encode import StreamEncoder
from modelwire.codecs.sse import encode_event
from modelwire.events import Finish, ReasoningDelta, TextDelta, ToolCallEnd, ToolCallStart


def _general(enc: StreamEncoder, kind: str, text: str) -> bytes:
    field = "text" if kind == "text_delta" else "thinking"
    payload = {"type": "content_block_delta", "index": enc._index, "delta": {"type": kind, field: text}}
    return encode_event(orjson.dumps(payload), "content_block_delta")


_steps = st.lists(st.one_of(
    st.tuples(st.just("text"), st.text(min_size=1, max_size=10)),
    st.tuples(st.just("thinking"), st.text(min_size=1, max_size=10)),
    st.tuples(st.just("tool"), st.just(""))), min_size=1, max_size=25)


@settings(max_examples=200)
@given(steps=_steps)
def test_framed_deltas_equal_the_general_framing(steps):
    enc = StreamEncoder(model="claude-x", id="msg_1")
    calls = 0
    for kind, text in steps:
        if kind == "tool":
            enc.feed(ToolCallStart(index=calls, id=f"toolu_{calls}", name="f"))
            enc.feed(ToolCallEnd(index=calls))
            calls += 1
            continue
        event = TextDelta(text) if kind == "text" else ReasoningDelta(text=text)
        out = enc.feed(event)
        delta_kind = "text_delta" if kind == "text" else "thinking_delta"
        # whatever opened a block comes first; the delta itself is the last event
        assert out.endswith(_general(enc, delta_kind, text))
    enc.feed(Finish("stop"))
    assert enc.close().endswith(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")


def test_hand_framing_equals_encode_event():
    enc = StreamEncoder(model="m")
    payload = {"type": "ping", "text": "line\nbreak\r\n"}
    assert enc._ev("ping", payload) == encode_event(orjson.dumps(payload), "ping")
