"""Property tests for the message rules: splitter chunking invariance and
the invariants of prepare_conversation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from modelwire.messages import ThinkTagSplitter

# ------------------------------------------------------------ think-tag splitter
_WORDS = st.sampled_from(
    ["<think>", "</think>", "<THINKING>", "</thinking>", "<thought>", "</Thought>",
     "<reasoning>", "</reasoning>", "<REASONING_SCRATCHPAD>", "</reasoning_scratchpad>",
     "<", ">", "</", "<thi", "nk>", "<b>", "a", "bc", " ", "\n", "\n\n", "x<y", "é", "\u212a"]
)
_TEXTS = st.lists(_WORDS, max_size=25).map("".join)


def _joined(chunks: list[str]) -> tuple[str, str]:
    splitter = ThinkTagSplitter()
    pieces = [p for c in chunks for p in splitter.feed(c)] + splitter.close()
    assert all(piece for _, piece in pieces), "pieces are never empty"
    reasoning = "".join(p for k, p in pieces if k == "reasoning")
    text = "".join(p for k, p in pieces if k == "text")
    return reasoning, text


@given(_TEXTS, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_any_chunking_gives_the_same_reasoning_and_text(text: str, cuts: list[int]) -> None:
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert _joined(chunks) == _joined([text])


@given(_TEXTS)
def test_one_character_chunks_give_the_same_result(text: str) -> None:
    assert _joined(list(text)) == _joined([text])


@given(st.text(alphabet=st.characters(blacklist_characters="<"), max_size=50))
def test_text_without_angle_brackets_passes_through_unchanged(text: str) -> None:
    assert _joined([text]) == ("", text)
