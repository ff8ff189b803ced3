"""Inline reasoning tags in content: ThinkTagSplitter and split_think_tags."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelwire.messages import ThinkTagSplitter, split_think_tags


def run(*chunks: str) -> list[tuple[str, str]]:
    splitter = ThinkTagSplitter()
    out: list[tuple[str, str]] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    out.extend(splitter.close())
    merged: list[tuple[str, str]] = []
    for kind, piece in out:
        if merged and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + piece)
        else:
            merged.append((kind, piece))
    return merged


@pytest.mark.parametrize(
    "tag", ["think", "thinking", "thought", "reasoning", "REASONING_SCRATCHPAD", "Think", "tHiNkInG"]
)
def test_every_tag_name_in_any_case_is_reasoning(tag: str) -> None:
    assert run(f"<{tag}>plan</{tag}>answer") == [("reasoning", "plan"), ("text", "answer")]


def test_closing_tag_case_may_differ_from_opening() -> None:
    assert run("<THINK>plan</think>answer") == [("reasoning", "plan"), ("text", "answer")]


def test_tag_split_across_chunks_is_recognized() -> None:
    assert run("<thi", "nk>pl", "an</th", "ink>ans", "wer") == [
        ("reasoning", "plan"),
        ("text", "answer"),
    ]


def test_one_character_chunks_give_the_same_pieces() -> None:
    text = "<think>\nstep one\nstep two\n</think>\n\nThe answer is 4."
    assert run(*text) == run(text) == [
        ("reasoning", "step one\nstep two"),
        ("text", "The answer is 4."),
    ]


def test_reasoning_streams_before_the_closing_tag_arrives() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>first ") == [("reasoning", "first")]
    assert splitter.feed("second") == [("reasoning", " second")]


def test_partial_tag_is_held_until_decided() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("Hello <thin") == [("text", "Hello ")]
    assert splitter.feed("g about it") == [("text", "<thing about it")]


def test_unterminated_opening_tag_runs_to_the_end() -> None:
    # MiniMax M2.7 drops the closing tag (hermes #8878); a reply cut by
    # max_tokens ends inside the block (DeepSeek-R1 on Hugging Face).
    assert run("<think>\nHmm, the user just said hello.\n\nKey goals:\n- Acknowledge") == [
        ("reasoning", "Hmm, the user just said hello.\n\nKey goals:\n- Acknowledge")
    ]


def test_unterminated_tag_after_a_newline_runs_to_the_end() -> None:
    assert run("Intro line\n<think>musing that never ends") == [
        ("text", "Intro line\n"),
        ("reasoning", "musing that never ends"),
    ]


def test_unterminated_tag_in_the_middle_of_a_line_is_prose() -> None:
    text = "Wrap your plan in a <think> tag, then answer."
    assert run(text) == [("text", text)]
    assert run(*text) == [("text", text)]


def test_closed_tag_in_the_middle_of_a_line_is_reasoning() -> None:
    assert run("So <think>hidden</think> visible") == [
        ("text", "So "),
        ("reasoning", "hidden"),
        ("text", "visible"),
    ]


def test_angle_bracket_that_is_not_a_tag_is_text() -> None:
    for text in ["a < b and c<d", "<b>bold</b>", "<thinkx>", "<think attr=1>", "x <", "<thin"]:
        assert run(text) == [("text", text)], text


def test_non_ascii_lookalike_is_not_a_tag() -> None:
    text = "<thin\u212a>x</thin\u212a>"  # KELVIN SIGN lowercases to "k"
    assert run(text) == [("text", text)]


def test_stray_closing_tag_is_dropped_and_text_kept() -> None:
    # Qwen3 templates put <think> in the prompt: the reply only closes it.
    assert run("reasoned</think>\n\nanswer") == [("text", "reasoned\n\nanswer")]


def test_only_the_matching_name_closes_a_block() -> None:
    assert run("<thinking>a </think> b</thinking>c") == [
        ("reasoning", "a </think> b"),
        ("text", "c"),
    ]


def test_several_blocks_are_separated_by_a_blank_line() -> None:
    assert run("<think>a</think>x<thought>b</thought>y") == [
        ("reasoning", "a"),
        ("text", "x"),
        ("reasoning", "\n\nb"),
        ("text", "y"),
    ]


def test_whitespace_only_block_yields_nothing() -> None:
    assert run("<think>\n\n</think>\n\nHi") == [("text", "Hi")]


def test_empty_input_yields_nothing() -> None:
    assert run() == []
    assert run("") == []


def test_close_twice_is_harmless() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>a </thi") == [("reasoning", "a")]
    # the held partial closing tag was reasoning after all
    assert splitter.close() == [("reasoning", " </thi")]
    assert splitter.close() == []


def test_split_think_tags_returns_reasoning_and_text() -> None:
    assert split_think_tags("<think>a</think>\n\nb <think>c</think> d") == ("a\n\nc", "b d")
    assert split_think_tags("plain") == ("", "plain")


# feed_plain is the stream decoders' per-delta shortcut: whenever it accepts a piece,
# feed would have returned exactly that piece as text and left the same state behind
_pieces = st.lists(
    st.sampled_from(["a", "b c", " ", "\n", "\n\n", "  \n ", "<", "<th", "ink>", "<think>",
                     "</think>", "<thought>", "</thought>", "x<think>", "\t", "é"]),
    min_size=1, max_size=6,
).map("".join)


def _state(splitter: ThinkTagSplitter) -> tuple[object, ...]:
    return tuple(getattr(splitter, name) for name in ThinkTagSplitter.__slots__)


@given(st.lists(_pieces, max_size=25))
def test_feed_plain_accepts_only_what_feed_returns_as_that_text(chunks: list[str]) -> None:
    fast, general = ThinkTagSplitter(), ThinkTagSplitter()
    for chunk in chunks:
        expected = general.feed(chunk)
        if fast.feed_plain(chunk):
            assert expected == [("text", chunk)]
        else:
            assert fast.feed(chunk) == expected
        assert _state(fast) == _state(general)
    assert fast.close() == general.close()


def test_feed_plain_declines_tags_and_held_input() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed_plain("Hello ")
    assert not splitter.feed_plain("a <think>")  # a '<': only feed can decide
    assert splitter.feed("<thi") == []  # held: maybe a tag
    assert not splitter.feed_plain("s is")  # must go after the held "<thi"
    assert splitter.feed("s is") == [("text", "<this is")]


@given(st.lists(st.sampled_from(["a", " ", "\n", "\t", "é", "think", "/", ">"]), max_size=20).map("".join))
def test_split_think_tags_without_a_bracket_is_the_splitters_answer(text: str) -> None:
    # split_think_tags returns at once when there is no "<" (every plain answer): the
    # same pair the splitter gives, whitespace and all
    splitter = ThinkTagSplitter()
    pieces = splitter.feed(text) + splitter.close()
    expected = ("".join(p for k, p in pieces if k == "reasoning"), "".join(p for k, p in pieces if k == "text"))
    assert split_think_tags(text) == expected == ("", text)


def test_a_bracket_inside_a_block_does_not_hide_its_closing_tag() -> None:
    assert run("<think>is a<b?</think>yes, a<b") == [("reasoning", "is a<b?"), ("text", "yes, a<b")]
    assert run("<think>a <</think>b") == [("reasoning", "a <"), ("text", "b")]


def test_only_a_possible_closing_tag_is_held_back_inside_a_block() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>a<b") == [("reasoning", "a<b")]  # '<b' cannot become '</think>'
    assert splitter.feed(" x<y</th") == [("reasoning", " x<y")]
    assert splitter.feed("ink>answer") == [("text", "answer")]
    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>x<</th") == [("reasoning", "x<")]
    assert splitter.feed("ink>answer") == [("text", "answer")]


def test_a_bracket_before_non_ascii_text_streams_at_once() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("a <é") == [("text", "a <é")]
    # KELVIN SIGN lowercases to "k": "<thinK" must not be held as if it were "<think"
    assert splitter.feed(" <thin\u212a") == [("text", " <thin\u212a")]


def test_a_block_right_after_a_closed_block_starts_at_a_boundary() -> None:
    # the second block opens on a fresh line, so it is reasoning even though it never closes
    assert run("<think>a</think>\n<think>b never closed") == [("reasoning", "a\n\nb never closed")]
    assert run("<think>a  </think>\n<think>b</think>c") == [("reasoning", "a\n\nb"), ("text", "c")]


def test_whitespace_inside_a_block_split_over_chunks_is_kept() -> None:
    assert run("<think>a", " ", "\n", "b</think>") == [("reasoning", "a \nb")]


def test_a_mid_line_block_split_over_chunks_is_joined() -> None:
    assert run("So <think>hid", "den</think> visible") == [
        ("text", "So "), ("reasoning", "hidden"), ("text", "visible")]
