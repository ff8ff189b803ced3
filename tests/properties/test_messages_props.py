"""Property tests for the message rules: splitter chunking invariance and
the invariants of prepare_conversation."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from modelwire.errors import MessageError
from modelwire.messages import (
    ThinkTagSplitter,
    is_reasoning_only,
    normalize_reasoning,
    prepare_conversation,
)

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


# ------------------------------------------------------- prepare_conversation
_IDS = st.sampled_from(["a", "b", "c", None])
_CALLS = st.lists(
    st.builds(
        lambda id, name, args: {k: v for k, v in {
            "id": id, "type": "function", "function": {"name": name, "arguments": args}}.items()
            if v is not None},
        _IDS, st.sampled_from(["f", "g"]), st.sampled_from(['{"x":1}', "{", "{}"]),
    ),
    max_size=3,
)
_CONTENT = st.sampled_from(["", "hi", "<think>r</think>", "<think>r</think>ok", None, "  "])
_MESSAGE = st.one_of(
    st.just({"role": "user", "content": "u"}),
    st.just({"role": "system", "content": "s"}),
    st.builds(
        lambda content, calls, reasoning: {
            "role": "assistant", "content": content,
            **({"tool_calls": calls} if calls else {}),
            **({"reasoning": reasoning} if reasoning else {}),
        },
        _CONTENT, _CALLS, st.sampled_from([None, "why"]),
    ),
    st.builds(lambda id: {"role": "tool", "tool_call_id": id, "content": "r"},
              st.sampled_from(["a", "b", "c", "zz"])),
)
_CONVERSATIONS = st.lists(_MESSAGE, max_size=12)


def _assert_invariants(out: list[dict[str, Any]]) -> None:
    i = 0
    while i < len(out):
        msg = out[i]
        assert msg["role"] != "tool", f"orphan tool result at {i}: {out}"
        assert not is_reasoning_only(msg)
        assert "reasoning" not in msg
        calls = msg.get("tool_calls") or []
        ids = [c["id"] for c in calls]
        assert all(isinstance(c, str) and c for c in ids)
        assert len(set(ids)) == len(ids), "call ids are unique in a turn"
        answers = []
        i += 1
        while i < len(out) and out[i]["role"] == "tool":
            answers.append(out[i]["tool_call_id"])
            i += 1
        assert sorted(answers) == sorted(ids), "every call answered exactly once, right after it"


@given(_CONVERSATIONS)
def test_system_messages_stay_where_they_were(messages: list[dict]) -> None:
    # a system message later in the conversation is an instruction from that point on
    # (Claude Code sends one after the first user turn): never hoisted, merged or dropped
    out = prepare_conversation(messages)
    sent = [m["content"] for m in messages if m["role"] in ("system", "user")]
    kept = [m["content"] for m in out if m["role"] in ("system", "user")]
    assert kept == sent
    roles = [m["role"] for m in out if m["role"] in ("system", "user")]
    assert roles == [m["role"] for m in messages if m["role"] in ("system", "user")]


@given(_CONVERSATIONS)
def test_prepared_conversation_satisfies_the_invariants(messages: list[dict]) -> None:
    before = copy.deepcopy(messages)
    out = prepare_conversation(messages)
    assert messages == before, "the caller's conversation is never changed"
    _assert_invariants(out)


@given(_CONVERSATIONS)
def test_prepare_is_idempotent(messages: list[dict]) -> None:
    once = prepare_conversation(messages)
    assert prepare_conversation(once) == once
    assert prepare_conversation(once, repair=False) == once


@given(_CONVERSATIONS)
def test_strict_mode_either_rejects_or_agrees_with_repair(messages: list[dict]) -> None:
    try:
        strict = prepare_conversation(messages, repair=False)
    except MessageError as exc:
        assert exc.index is not None and 0 <= exc.index < len(messages)
        assert f"messages[{exc.index}]" in str(exc)
        return
    assert strict == prepare_conversation(messages)



# ------------------------------------------------------- normalize_reasoning
_REASONING_TEXT = st.sampled_from(["", " ", "alpha", "alpha beta", "beta", "gamma\n"])
_ASSISTANT = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={
        "reasoning": _REASONING_TEXT,
        "reasoning_content": _REASONING_TEXT,
        "reasoning_details": st.lists(st.one_of(
            st.builds(lambda t: {"type": "reasoning.text", "text": t}, _REASONING_TEXT),
            st.builds(lambda t: {"type": "reasoning.summary", "summary": t}, _REASONING_TEXT),
            st.just({"type": "reasoning.encrypted", "data": "opaque"}),
            st.just({"issuer": "anthropic", "block": {"type": "redacted_thinking", "data": "d"}}),
        ), max_size=3),
        "content": st.one_of(
            st.none(),
            _TEXTS,
            st.lists(st.one_of(
                st.just({"type": "thinking", "thinking": "delta", "signature": "s"}),
                st.just({"type": "thinking", "thinking": "epsilon"}),
                st.just({"type": "redacted_thinking", "data": "r"}),
                st.builds(lambda t: {"type": "text", "text": t}, _TEXTS),
            ), max_size=4),
        ),
    },
)


@given(_ASSISTANT)
def test_normalize_reasoning_is_pure_idempotent_and_keeps_one_shape(message: dict) -> None:
    before = copy.deepcopy(message)
    once = normalize_reasoning(message)
    assert message == before
    assert normalize_reasoning(once) == once
    assert "reasoning" not in once
    assert once.get("reasoning_content", "x").strip(), "no empty reasoning_content"
    for entry in once.get("reasoning_details", []):
        assert set(entry) == {"issuer", "block"}
    content = once.get("content")
    parts = content if isinstance(content, list) else []
    assert not any(p.get("type") in ("thinking", "redacted_thinking") for p in parts)
    # every verifiable block survives, exactly as received
    blocks = [entry["block"] for entry in once.get("reasoning_details", [])]
    for detail in message.get("reasoning_details", []):
        assert (detail["block"] if "issuer" in detail else detail) in blocks
    original = message.get("content")
    for part in original if isinstance(original, list) else []:
        if part["type"] == "redacted_thinking" or part.get("signature"):
            assert part in blocks
