"""The Chat Completions stream encoder renders text and reasoning chunks from a frame
made once; the bytes must be exactly what dumping the whole chunk gives."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs.chat_completions.encode import StreamEncoder
from modelwire.codecs.sse import TEXT_MARK, split_at_text_mark
from modelwire.events import ReasoningDelta, TextDelta


def _slow(enc: StreamEncoder, field: str, text: str) -> bytes:
    return enc._chunk({field: text})


@settings(max_examples=300)
@given(text=st.text(min_size=1), model=st.text(min_size=1, max_size=20), created=st.integers(0, 2**40))
def test_framed_chunks_equal_dumped_chunks(text, model, created):
    enc = StreamEncoder(model=model, created=created)
    enc.feed(TextDelta("x"))  # past the role chunk
    assert enc.feed(TextDelta(text)) == _slow(enc, "content", text)
    assert enc.feed(ReasoningDelta(text)) == _slow(enc, "reasoning_content", text)


def test_a_model_name_holding_the_marker_takes_the_slow_way():
    model = "m" + TEXT_MARK
    enc = StreamEncoder(model=model)
    out = enc.feed(TextDelta("hi"))
    chunk = orjson.loads(out.split(b"data: ")[2])
    assert chunk["model"] == model and chunk["choices"][0]["delta"] == {"content": "hi"}


def test_empty_text_sends_nothing_after_the_role_chunk():
    enc = StreamEncoder(model="m")
    enc.feed(TextDelta("a"))
    assert enc.feed(TextDelta("")) == b"" and enc.feed(ReasoningDelta("")) == b""


def test_split_at_text_mark_only_when_the_marker_is_there_once():
    once = orjson.dumps({"a": "x", "t": TEXT_MARK, "b": 1})
    assert split_at_text_mark(once) == (b'{"a":"x","t":', b',"b":1}')
    # what the frame is for: before + json(text) + after is the event for that text
    before, after = split_at_text_mark(once)
    assert before + orjson.dumps("h\u00e9\n\"") + after == orjson.dumps({"a": "x", "t": "h\u00e9\n\"", "b": 1})
    assert split_at_text_mark(orjson.dumps({"a": TEXT_MARK, "t": TEXT_MARK})) is None
    assert split_at_text_mark(b'{"t":"plain"}') is None
