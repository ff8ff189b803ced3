"""The Responses stream encoder writes output_text.delta events from a frame rendered
once per content part; the stream must be byte-identical to the general framing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs.responses.encode import StreamEncoder
from modelwire.events import Finish, ReasoningDelta, RefusalDelta, TextDelta


class _NoFrames(dict):
    def get(self, key, default=None):
        return None  # every delta takes the general path


_events = st.lists(
    st.one_of(st.builds(TextDelta, st.text(min_size=1, max_size=12)),
              st.builds(RefusalDelta, st.text(min_size=1, max_size=6)),
              st.builds(ReasoningDelta, st.text(min_size=1, max_size=6))),
    min_size=1, max_size=30)


@settings(max_examples=200)
@given(events=_events, rid=st.sampled_from(["resp_abc", "resp_5", "resp_\u00e9\"x"]))
def test_framed_text_deltas_equal_general_framing(events, rid):
    fast = StreamEncoder(model="m", id=rid, created=7)
    slow = StreamEncoder(model="m", id=rid, created=7)
    slow._frames = _NoFrames()
    seq = [*events, Finish("stop")]
    a = b"".join(fast.feed(e) for e in seq) + fast.close()
    b = b"".join(slow.feed(e) for e in seq) + slow.close()
    assert a == b
