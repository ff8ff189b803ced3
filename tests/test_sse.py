from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs._sse import SSEDecoder, SSEEvent, encode_event
from modelwire.errors import ProtocolError


def decode_all(chunks: list[bytes]) -> list[SSEEvent]:
    dec = SSEDecoder()
    out: list[SSEEvent] = []
    for chunk in chunks:
        out += dec.feed(chunk)
    return out + dec.close()


def test_splits_on_cr_lf_and_crlf_only():
    raw = "event: a\rdata: x\u2028y\r\n\r\nevent: b\ndata: 1\ndata: 2\n\n".encode()
    assert decode_all([raw]) == [SSEEvent("a", "x\u2028y"), SSEEvent("b", "1\n2")]


def test_comments_are_ignored_and_counted():
    dec = SSEDecoder()
    events = dec.feed(b": OPENROUTER PROCESSING\n\ndata: {}\n\n")
    assert events == [SSEEvent("", "{}")] and dec.comments == 1


def test_crlf_split_across_chunks_is_one_line_break():
    assert decode_all([b"data: a\r", b"\n\r", b"\ndata: b\n\n"]) == [
        SSEEvent("", "a"), SSEEvent("", "b")
    ]


def test_utf8_character_split_across_chunks():
    raw = "data: héllo ✓\n\n".encode()
    assert decode_all([raw[:8], raw[8:13], raw[13:]]) == [SSEEvent("", "héllo ✓")]


def test_invalid_utf8_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="UTF-8"):
        decode_all([b"data: \xff\xfe\n\n"])


def test_final_event_without_blank_line_is_flushed_on_close():
    assert decode_all([b"data: [DONE]"]) == [SSEEvent("", "[DONE]")]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "message_start", "content_block_delta"]),
            st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30),
        ),
        max_size=8,
    ),
    st.lists(st.integers(min_value=0, max_value=400), max_size=10),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_any_chunking_gives_the_same_events(events, cuts, newline):
    raw = b"".join(encode_event(data, event or None) for event, data in events)
    raw = raw.replace(b"\n", newline.encode())
    whole = decode_all([raw])
    points = sorted({min(c, len(raw)) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(raw[last:p])
        last = p
    pieces.append(raw[last:])
    assert decode_all(pieces) == whole
    expected = [SSEEvent(e, d) for e, d in events]  # an empty data: line still dispatches
    assert whole == expected
