from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs.sse import SSEDecoder, SSEEvent, encode_event
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


def test_comments_are_ignored():
    dec = SSEDecoder()
    assert dec.feed(b": OPENROUTER PROCESSING\n\ndata: {}\n\n") == [SSEEvent("", "{}")]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_data_lines_are_kept_with_every_line_ending(newline):
    raw = newline.join(["event: delta", "data: one", "data:two", "", "data: three", "", ""])
    assert decode_all([raw.encode()]) == [SSEEvent("delta", "one\ntwo"), SSEEvent("", "three")]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_field_values_without_the_space_keep_every_character(newline):
    raw = newline.join(["event:ping", "data:x", "data:  y", "", ""])
    assert decode_all([raw.encode()]) == [SSEEvent("ping", "x\n y")]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("before", [": keep-alive", "id: 42", "retry: 3000", "custom: x"],
                         ids=["comment", "id", "retry", "unknown-field"])
def test_a_line_before_the_data_lines_does_not_lose_them(before, newline):
    raw = newline.join(["data: a", before, "data: b", "", ""])
    assert decode_all([raw.encode()]) == [SSEEvent("", "a\nb")]


def test_an_event_line_alone_is_an_event_with_empty_data():
    assert decode_all([b"event: ping\n\ndata: x\n\n"]) == [SSEEvent("ping", ""),
                                                              SSEEvent("", "x")]


def test_blank_lines_without_fields_dispatch_nothing():
    assert decode_all([b"\n\n\r\n\rdata: x\n\n\n"]) == [SSEEvent("", "x")]


def test_a_stream_cut_inside_a_utf8_character_is_a_protocol_error():
    dec = SSEDecoder()
    assert dec.feed("data: ✓".encode()[:-1]) == []
    with pytest.raises(ProtocolError, match="^stream ended inside a UTF-8 character$"):
        dec.close()


def test_a_cr_at_the_end_of_a_chunk_waits_for_what_follows():
    dec = SSEDecoder()
    assert dec.feed(b"data: a\r") == []
    assert dec.feed(b"\r") == [SSEEvent("", "a")]  # CR CR: the second ends the event
    assert dec.feed(b"data: b\r") == []
    assert dec.feed(b"\n\n") == [SSEEvent("", "b")]  # CR LF is one line break


def test_the_last_line_without_a_line_break_is_read_on_close():
    dec = SSEDecoder()
    assert dec.feed(b"event: done\r\ndata: {\"a\": 1}") == []
    assert dec.close() == [SSEEvent("done", '{"a": 1}')]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_bare_colon_line_is_a_comment(newline):
    raw = newline.join([":", "data: x", ":", "", ""])
    assert decode_all([raw.encode()]) == [SSEEvent("", "x")]


def test_mixed_line_endings_split_at_each_one():
    raw = b"data: a\ndata: b\r\n\r\ndata: c\rdata: d\n\n"
    assert decode_all([raw]) == [SSEEvent("", "a\nb"), SSEEvent("", "c\nd")]


@pytest.mark.parametrize("chunks", [
    [b"data: a\r", b"\ndata: b\n", b"\ndata: c\n\n"],  # a CR held, then its LF
    [b"data: a\r\n", b"data: b\r\n", b"\ndata: c\n\n"],  # CR LF closing a chunk
], ids=["cr-then-lf", "crlf-at-end"])
def test_a_held_cr_swallows_only_the_lf_right_after_it(chunks):
    assert decode_all(chunks) == [SSEEvent("", "a\nb"), SSEEvent("", "c")]


def test_encoding_splits_every_line_ending_into_data_lines():
    assert encode_event("a\r\nb\rc\nd", "x") == b"event: x\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
    assert encode_event(b"plain text") == b"data: plain text\n\n"
    assert encode_event("a b\nc") == b"data: a b\ndata: c\n\n"
    assert encode_event("a b\rc") == b"data: a b\ndata: c\n\n"


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


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_data_line_without_a_colon_is_an_empty_data_line(newline):
    # the spec: a line without a colon is a field name with an empty value
    raw = newline.join(["data", "", "event: x", "data", "data: y", "", ""])
    assert decode_all([raw.encode()]) == [SSEEvent("", ""), SSEEvent("x", "\ny")]
