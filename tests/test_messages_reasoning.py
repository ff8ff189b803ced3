"""normalize_reasoning: every place providers put reasoning, folded into one shape."""

from __future__ import annotations

import copy

from modelwire.messages import is_reasoning_only, normalize_reasoning

SIGNED = {"type": "thinking", "thinking": "Let me add.", "signature": "EqQBCkgIARABGAIi"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}


def test_reasoning_string_field_becomes_reasoning_content() -> None:
    # OpenRouter / Groq / Cerebras / Ollama send a plain `reasoning` string;
    # Mistral rejects the key on replay, so it must not survive.
    out = normalize_reasoning({"role": "assistant", "content": "4", "reasoning": "2+2"})
    assert out == {"role": "assistant", "content": "4", "reasoning_content": "2+2"}


def test_reasoning_content_wins_over_reasoning_as_in_the_seed() -> None:
    # the seed reads reasoning_content or reasoning: the first present, never both joined
    out = normalize_reasoning(
        {"role": "assistant", "content": "x", "reasoning": "first", "reasoning_content": "second"}
    )
    assert out["reasoning_content"] == "second" and "reasoning" not in out
    out = normalize_reasoning(
        {"role": "assistant", "content": "x", "reasoning": "first", "reasoning_content": ""})
    assert out["reasoning_content"] == "first"


def test_same_text_in_two_fields_is_not_duplicated() -> None:
    out = normalize_reasoning(
        {"role": "assistant", "content": "x", "reasoning": "same", "reasoning_content": "same"}
    )
    assert out["reasoning_content"] == "same"


def test_openrouter_reasoning_details_are_wrapped_verbatim_and_not_duplicated() -> None:
    items = [
        {"type": "reasoning.text", "text": "Step 1. ", "signature": "sig", "format": "anthropic-claude-v1",
         "index": 0},
        {"type": "reasoning.encrypted", "data": "gAAAAB", "format": "openai-responses-v1", "index": 1},
    ]
    message = {"role": "assistant", "content": "ok", "reasoning": "Step 1.", "reasoning_details": items}
    out = normalize_reasoning(message)
    assert out["reasoning_content"] == "Step 1."
    assert out["reasoning_details"] == [{"issuer": "openrouter", "block": items[0]},
                                        {"issuer": "openrouter", "block": items[1]}]
    assert out["reasoning_details"][0]["block"] is items[0]  # exactly as received


def test_reasoning_details_text_keys_are_read_in_order() -> None:
    out = normalize_reasoning({
        "role": "assistant",
        "content": "ok",
        "reasoning_details": [
            {"type": "reasoning.summary", "summary": "A summary"},
            {"type": "x", "thinking": "A thought"},
            {"type": "y", "content": "Some content"},
        ],
    })
    assert out["reasoning_content"] == "A summary\n\nA thought\n\nSome content"


def test_issuer_keyword_names_raw_blocks() -> None:
    out = normalize_reasoning(
        {"role": "assistant", "content": "ok", "reasoning_details": [{"type": "reasoning.text", "text": "t"}]},
        issuer="vercel",
    )
    assert out["reasoning_details"][0]["issuer"] == "vercel"


def test_entries_already_normalized_pass_unchanged() -> None:
    entry = {"issuer": "openai-responses", "block": {"type": "reasoning", "encrypted_content": "e"}}
    out = normalize_reasoning({"role": "assistant", "content": "ok", "reasoning_details": [entry]})
    assert out["reasoning_details"] == [entry]
    assert "reasoning_content" not in out


def test_thinking_parts_in_content_move_to_reasoning_details_in_order() -> None:
    message = {
        "role": "assistant",
        "content": [SIGNED, {"type": "text", "text": "The answer is 4."}, REDACTED],
    }
    out = normalize_reasoning(message)
    assert out["content"] == [{"type": "text", "text": "The answer is 4."}]
    assert out["reasoning_content"] == "Let me add."
    assert out["reasoning_details"] == [
        {"issuer": "anthropic", "block": SIGNED},
        {"issuer": "anthropic", "block": REDACTED},
    ]


def test_unsigned_thinking_part_keeps_its_text_but_not_the_block() -> None:
    # DeepSeek V4 Pro sends unsigned thinking parts (hermes #21944); an
    # unsigned block verifies nowhere, Anthropic rejects it.
    out = normalize_reasoning(
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"},
                                          {"type": "text", "text": "hi"}]}
    )
    assert out == {"role": "assistant", "content": [{"type": "text", "text": "hi"}],
                   "reasoning_content": "hmm"}


def test_content_with_only_thinking_becomes_empty() -> None:
    out = normalize_reasoning({"role": "assistant", "content": [SIGNED]})
    assert out["content"] == ""
    with_calls = normalize_reasoning({
        "role": "assistant",
        "content": [SIGNED],
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    })
    assert with_calls["content"] is None


def test_inline_tags_leave_content_and_become_reasoning() -> None:
    out = normalize_reasoning({"role": "assistant", "content": "<think>\nplan\n</think>\n\nAnswer"})
    assert out == {"role": "assistant", "content": "Answer", "reasoning_content": "plan"}


def test_unterminated_inline_tag_is_all_reasoning() -> None:
    # DeepSeek-R1 cut by max_tokens (recorded in the corpus), MiniMax M2.7.
    out = normalize_reasoning({"role": "assistant", "content": "<think>\nHmm, the user said hello"})
    assert out == {"role": "assistant", "content": "", "reasoning_content": "Hmm, the user said hello"}


def test_reasoning_is_never_pasted_into_text() -> None:
    out = normalize_reasoning({
        "role": "assistant",
        "content": [SIGNED, {"type": "text", "text": "visible"}],
        "reasoning": "secret plan",
        "reasoning_details": [{"type": "reasoning.text", "text": "more plan"}],
    })
    assert out["content"] == [{"type": "text", "text": "visible"}]
    assert "plan" not in str(out["content"])


def test_tag_made_by_removing_another_is_also_removed() -> None:
    out = normalize_reasoning({"role": "assistant", "content": "<think>a</think><think>b</think>c"})
    assert out == {"role": "assistant", "content": "c", "reasoning_content": "a\n\nb"}


def test_empty_reasoning_fields_are_removed() -> None:
    out = normalize_reasoning(
        {"role": "assistant", "content": "x", "reasoning_content": " ", "reasoning_details": []}
    )
    assert out == {"role": "assistant", "content": "x"}


def test_other_roles_are_copied_untouched() -> None:
    user = {"role": "user", "content": "<think>not mine</think>", "reasoning": "kept"}
    out = normalize_reasoning(user)
    assert out == user and out is not user


def test_normalize_is_pure_and_idempotent() -> None:
    message = {
        "role": "assistant",
        "content": [SIGNED, {"type": "text", "text": "<think>inline</think>x"}],
        "reasoning": "r",
        "reasoning_details": [{"type": "reasoning.text", "text": "d"}],
    }
    before = copy.deepcopy(message)
    once = normalize_reasoning(message)
    assert message == before
    assert normalize_reasoning(once) == once


def test_is_reasoning_only() -> None:
    assert is_reasoning_only({"role": "assistant", "content": "  ", "reasoning_content": "r"})
    assert is_reasoning_only({"role": "assistant", "content": None,
                              "reasoning_details": [{"issuer": "a", "block": {}}]})
    assert is_reasoning_only({"role": "assistant", "content": [{"type": "text", "text": " "}],
                              "reasoning_content": "r"})
    assert not is_reasoning_only({"role": "assistant", "content": "", })  # no reasoning either
    assert not is_reasoning_only({"role": "assistant", "content": "hi", "reasoning_content": "r"})
    assert not is_reasoning_only({"role": "assistant", "content": "", "reasoning_content": "r",
                                  "refusal": "no"})
    assert not is_reasoning_only({"role": "assistant", "content": "", "reasoning_content": "r",
                                  "passthrough": [{"issuer": "anthropic", "block": {}}]})
    assert not is_reasoning_only({"role": "assistant", "reasoning_content": "r",
                                  "content": [{"type": "image_url", "image_url": {"url": "u"}}]})
    assert not is_reasoning_only({"role": "user", "content": "", "reasoning_content": "r"})
