"""Stop sequences applied by modelwire for an endpoint that has none (modelwire.messages.stops)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.completion import Completion
from modelwire.events import (
    Finish,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.messages.stops import StopDecoder, StopText, cut_completion, find_stop, stop_list

_alphabet = st.text(alphabet="abcX\n", max_size=40)


@settings(max_examples=500)
@given(text=_alphabet, stops=st.lists(st.text(alphabet="abcX\n", min_size=1, max_size=4), min_size=1, max_size=4),
       cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=8))
def test_streamed_text_in_any_pieces_ends_where_the_whole_text_would(text, stops, cuts):
    # whatever the pieces, what goes out is the text up to the first stop sequence
    stops_t = tuple(stops)
    at = find_stop(text, stops_t)[0]
    bounds = sorted({0, len(text), *[c for c in cuts if c <= len(text)]})
    st_ = StopText(stops_t)
    out = "".join(st_.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    if not st_.hit:
        out += st_.flush()
    assert out == (text[:at] if at >= 0 else text)
    assert st_.hit == (at >= 0)


def test_text_that_may_start_a_stop_sequence_is_held_until_it_is_known():
    st_ = StopText(("Observation:",))
    assert st_.feed("Thought: look it up\nObserv") == "Thought: look it up\n"
    assert st_.feed("ed") == "Observed"  # not the stop sequence after all
    assert st_.feed(" fine. Obs") == " fine. "
    assert st_.feed("ervation: 42") == "" and st_.hit
    assert st_.feed("more") == ""


def test_stop_list_takes_a_string_or_a_list_and_skips_empty_ones():
    assert stop_list("x") == ("x",)
    assert stop_list(["a", "", 3, "b"]) == ("a", "b")
    assert stop_list("") == () and stop_list(None) == ()


class _Inner:
    def __init__(self, batches):
        self.batches = list(batches)
        self.model = "m-1"

    def feed(self, data):
        return self.batches.pop(0)

    def close(self):
        return self.batches.pop(0) if self.batches else []


def test_the_decoder_drops_what_came_after_the_stop_and_keeps_usage_and_ends_with_stop():
    usage = {"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12}
    inner = _Inner([
        [TextDelta("Answer: 4"), TextDelta("2\nEND and more")],
        [ToolCallStart(0, "c1", "f"), ToolCallDelta(0, "{}"), ToolCallEnd(0), TextDelta("later")],
        [UsageEvent(usage), Finish("tool_calls", "completed")],
    ])
    dec = StopDecoder(inner, ("END",))
    events = dec.feed(b"") + dec.feed(b"") + dec.feed(b"") + dec.close()
    assert events == [TextDelta("Answer: 4"), TextDelta("2\n"), UsageEvent(usage), Finish("stop", "stop_sequence", "END")]
    assert dec.model == "m-1"


def test_the_decoder_flushes_held_text_before_a_tool_call_when_no_stop_came():
    inner = _Inner([[TextDelta("calling EN"), ToolCallStart(0, "c1", "f")], [Finish("tool_calls")]])
    dec = StopDecoder(inner, ("END",))
    assert dec.feed(b"") == [TextDelta("calling "), TextDelta("EN"), ToolCallStart(0, "c1", "f")]
    assert dec.feed(b"") == [Finish("tool_calls")]


def test_the_decoder_gives_held_text_back_when_the_stream_just_ends():
    dec = StopDecoder(_Inner([[TextDelta("tail EN")], []]), ("END",))
    assert dec.feed(b"") == [TextDelta("tail ")]
    assert dec.close() == [TextDelta("EN")]


@pytest.mark.parametrize("content,stops,text,reason", [
    ("one two STOP three", ("STOP",), "one two ", "stop"),
    ("a b", ("STOP",), "a b", "tool_calls"),
    ("x|y", ("y", "|"), "x", "stop"),
])
def test_a_whole_answer_is_cut_at_the_first_stop_sequence(content, stops, text, reason):
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    done = Completion(message={"role": "assistant", "content": content, "tool_calls": [call]},
                      finish_reason="tool_calls", usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
                      model="m-1")
    cut = cut_completion(done, stops)
    assert cut.text == text and cut.finish_reason == reason
    assert cut.native_finish_reason == ("stop_sequence" if reason == "stop" else None)
    # which sequence ended it: the earliest in the text, not the first in the list
    matched = next((s for s in stops if content.startswith(s, len(text))), None) if reason == "stop" else None
    assert cut.stop_sequence == matched
    if content == "x|y":
        assert matched == "|"  # the earliest in the text, though listed second
    assert (cut.tool_calls == []) == (reason == "stop")  # generated after the stop: not kept
    assert cut.usage == done.usage


def _whole(message: dict) -> Completion:
    return Completion(message={"role": "assistant", **message}, finish_reason="stop",
                      usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}, model="m")


def test_an_answer_without_text_is_never_cut():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    done = _whole({"content": None, "tool_calls": [call]})
    assert cut_completion(done, ("STOP",)) is done


def test_a_stop_at_the_very_start_leaves_empty_text():
    cut = cut_completion(_whole({"content": "STOP and more"}), ("STOP",))
    assert (cut.text, cut.stop_sequence, cut.finish_reason) == ("", "STOP", "stop")


def test_a_refusal_after_the_stop_is_dropped_with_the_rest():
    cut = cut_completion(_whole({"content": "ok STOP", "refusal": "later text"}), ("STOP",))
    assert cut.message == {"role": "assistant", "content": "ok "}


def test_no_stop_found_is_a_negative_position():
    assert find_stop("abc", ("x",))[0] < 0


def test_events_after_the_stop_in_the_same_batch_still_end_the_stream():
    usage = {"prompt_tokens": 1, "completion_tokens": 5, "total_tokens": 6}
    inner = _Inner([[TextDelta("ok END more"), ToolCallStart(0, "c1", "f"), UsageEvent(usage),
                     Finish("tool_calls")]])
    dec = StopDecoder(inner, ("END",))
    assert dec.feed(b"") == [TextDelta("ok "), UsageEvent(usage), Finish("stop", "stop_sequence", "END")]


class _Echo:
    """A decoder whose events are the bytes it was fed, as text."""

    def feed(self, data):
        return [TextDelta(data.decode())]

    def close(self):
        return []


def test_the_decoder_feeds_the_bytes_it_gets_to_the_codecs_decoder():
    dec = StopDecoder(_Echo(), ("END",))
    assert dec.feed(b"hello ") + dec.feed(b"there END x") == [TextDelta("hello "), TextDelta("there ")]
    assert dec.model is None  # a decoder without a model


def test_no_sequence_has_matched_before_a_stop_is_found():
    text = StopText(("END",))
    assert text.matched == ""
    text.feed("no stop yet E")
    assert (text.hit, text.matched, text.held) == (False, "", "E")
    text.feed("ND")
    assert (text.hit, text.matched) == (True, "END")
