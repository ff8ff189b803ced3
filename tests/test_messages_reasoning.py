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


def test_whitespace_reasoning_content_is_removed() -> None:
    out = normalize_reasoning({"role": "assistant", "content": "hi", "reasoning_content": "  \n"})
    assert out == {"role": "assistant", "content": "hi"}


def test_a_non_string_reasoning_content_is_removed() -> None:
    out = normalize_reasoning({"role": "assistant", "content": "hi", "reasoning_content": 42})
    assert out == {"role": "assistant", "content": "hi"}


def test_normalized_entries_beside_a_raw_item_are_kept_and_the_raw_one_wrapped() -> None:
    entry = {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "a", "signature": "s"}}
    raw = {"type": "reasoning.text", "text": "b"}
    out = normalize_reasoning({"role": "assistant", "content": "x",
                               "reasoning_details": [entry, raw]})
    assert out["reasoning_details"] == [entry, {"issuer": "openrouter", "block": raw}]
    assert out["reasoning_content"] == "b"


def test_an_entry_with_extra_keys_is_a_raw_item() -> None:
    odd = {"issuer": "x", "block": {}, "extra": 1}
    out = normalize_reasoning({"role": "assistant", "content": "x", "reasoning_details": [odd]})
    assert out["reasoning_details"] == [{"issuer": "openrouter", "block": odd}]


def test_an_empty_details_list_is_removed() -> None:
    out = normalize_reasoning({"role": "assistant", "content": "x", "reasoning_details": []})
    assert "reasoning_details" not in out


def test_a_summary_list_is_joined_by_blank_lines() -> None:
    item = {"type": "reasoning.summary", "summary": [{"text": "one"}, {"type": "x"}, {"text": "two"}]}
    out = normalize_reasoning({"role": "assistant", "content": "x", "reasoning_details": [item]})
    assert out["reasoning_content"] == "one\n\ntwo"


def test_a_summary_list_without_text_falls_to_the_next_key() -> None:
    item = {"type": "reasoning.text", "summary": [{"type": "x"}], "text": "the text"}
    out = normalize_reasoning({"role": "assistant", "content": "x", "reasoning_details": [item]})
    assert out["reasoning_content"] == "the text"


def test_thinking_parts_beside_other_parts_leave_those_in_order() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:,"}}
    thinking = {"type": "thinking", "thinking": "t", "signature": "s"}
    out = normalize_reasoning({"role": "assistant", "content": [
        {"type": "text", "text": "a"}, thinking, image, "odd"]})
    assert out["content"] == [{"type": "text", "text": "a"}, image, "odd"]
    assert out["reasoning_content"] == "t"


def test_content_parts_without_thinking_are_untouched() -> None:
    msg = {"role": "assistant", "content": [{"type": "text", "text": "plain"}, "odd"]}
    assert normalize_reasoning(msg) == msg


def test_inline_tags_beside_tool_calls_leave_none_and_alone_leave_empty_text() -> None:
    calls = [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    with_calls = normalize_reasoning({"role": "assistant", "content": "<think>t</think>",
                                      "tool_calls": calls})
    alone = normalize_reasoning({"role": "assistant", "content": "<think>t</think>"})
    assert (with_calls["content"], alone["content"]) == (None, "")
    kept = normalize_reasoning({"role": "assistant", "content": "<think>t</think>answer",
                                "tool_calls": calls})
    assert kept["content"] == "answer"


def test_text_with_a_bracket_but_no_tag_is_unchanged() -> None:
    msg = {"role": "assistant", "content": "a < b and c > d"}
    assert normalize_reasoning(msg) == msg


def test_one_piece_keeps_its_spacing_several_are_trimmed() -> None:
    one = normalize_reasoning({"role": "assistant", "content": "x", "reasoning": " a \n"})
    assert one["reasoning_content"] == " a \n"
    two = normalize_reasoning({"role": "assistant", "content": "<think> b </think>x",
                               "reasoning": " a "})
    assert two["reasoning_content"] == "a\n\nb"


def test_turns_with_calls_refusals_or_passthrough_are_never_reasoning_only() -> None:
    base = {"role": "assistant", "content": "", "reasoning_content": "r"}
    calls = [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    assert is_reasoning_only(base)
    assert not is_reasoning_only({**base, "tool_calls": calls})
    assert not is_reasoning_only({**base, "refusal": "no"})
    assert not is_reasoning_only({**base, "passthrough": [{"issuer": "x", "block": {}}]})


def test_visible_parts_make_a_turn_more_than_reasoning() -> None:
    base = {"role": "assistant", "reasoning_content": "r"}
    assert is_reasoning_only({**base, "content": [{"type": "text", "text": "  "}]})
    assert not is_reasoning_only({**base, "content": [{"type": "text", "text": "hi"}]})
    assert not is_reasoning_only({**base, "content": [{"type": "image_url", "image_url": {}}]})
    assert not is_reasoning_only({**base, "content": [{"type": "text", "text": 5}]})
    assert not is_reasoning_only({**base, "content": ["odd"]})
    assert not is_reasoning_only({**base, "content": 7})


def test_a_content_item_that_is_not_a_part_is_kept_as_it_is() -> None:
    msg = {"role": "assistant", "content": ["odd", {"type": "text", "text": "hi"}]}
    assert normalize_reasoning(msg) == msg
    with_reasoning = {**msg, "reasoning": "thought"}
    assert normalize_reasoning(with_reasoning) == {**msg, "reasoning_content": "thought"}


def test_reasoning_beside_tool_calls_without_content_is_folded() -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    msg = {"role": "assistant", "content": None, "reasoning": "thought", "tool_calls": calls}
    assert normalize_reasoning(msg) == {"role": "assistant", "content": None,
                                        "reasoning_content": "thought", "tool_calls": calls}


def test_a_stray_closing_tag_leaves_the_content_without_it() -> None:
    # Qwen3 templates open the block in the prompt: the reply carries only "</think>"
    msg = {"role": "assistant", "content": "reasoned</think>\n\nanswer"}
    assert normalize_reasoning(msg) == {"role": "assistant", "content": "reasoned\n\nanswer"}
    blank = {"role": "assistant", "content": "<think> </think>Hi"}
    assert normalize_reasoning(blank) == {"role": "assistant", "content": "Hi"}
