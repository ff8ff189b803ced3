"""estimate_tokens: a documented estimate, checked against its own rules."""

from __future__ import annotations

import pytest

from modelwire.tokens import (
    AUDIO_TOKENS,
    FILE_TOKENS,
    IMAGE_TOKENS,
    IMAGE_TOKENS_LOW,
    MESSAGE_OVERHEAD,
    TOOL_CALL_OVERHEAD,
    estimate_text_tokens,
    estimate_tokens,
)


def test_ascii_text_is_about_four_characters_per_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 4000) == 1000


def test_non_latin_text_counts_more_per_character() -> None:
    # CJK: about 0.9 tokens per character; real tokenizers give 0.7-1.2.
    assert estimate_tokens("你好世界" * 25) == 25 + 67
    assert estimate_tokens("привет" * 10) > estimate_tokens("privet" * 10)


def test_messages_add_overhead_and_every_kind_of_content() -> None:
    messages = [
        {"role": "user", "content": [
            {"type": "text", "text": "abcdefgh"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}},
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA"}},
        ]},
        {"role": "assistant", "content": None, "reasoning_content": "abcd",
         "tool_calls": [{"id": "c", "type": "function",
                         "function": {"name": "abcd", "arguments": "{\"a\":1}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "abcdabcd"},
    ]
    expected = (
        3 * MESSAGE_OVERHEAD
        + 2 + IMAGE_TOKENS + IMAGE_TOKENS_LOW + AUDIO_TOKENS + FILE_TOKENS
        + 1 + TOOL_CALL_OVERHEAD + 1 + 2
        + 2
    )
    assert estimate_tokens(messages) == expected
    assert estimate_tokens(messages[2]) == MESSAGE_OVERHEAD + 2


def test_a_request_counts_its_messages_and_tools() -> None:
    messages = [{"role": "user", "content": "abcd"}]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    bare = estimate_tokens({"model": "m", "messages": messages})
    assert bare == estimate_tokens(messages) == MESSAGE_OVERHEAD + 1
    assert estimate_tokens({"model": "m", "messages": messages, "tools": tools}) > bare


def test_big_base64_images_do_not_count_as_text() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400_000}}
    assert estimate_tokens([{"role": "user", "content": [image]}]) == MESSAGE_OVERHEAD + IMAGE_TOKENS


def test_estimate_grows_with_content() -> None:
    short = [{"role": "user", "content": "hello"}]
    long = short + [{"role": "assistant", "content": "hello there, how are you today?"}]
    assert estimate_tokens(long) > estimate_tokens(short)


def test_estimate_text_tokens_handles_lone_surrogates() -> None:
    assert estimate_text_tokens("a\ud800b") >= 1


def test_other_types_are_rejected() -> None:
    with pytest.raises(TypeError, match="not int"):
        estimate_tokens(5)
