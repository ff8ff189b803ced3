"""Usage read off relayed bytes: a JSON answer's from its top-level ``usage`` only, however
the body orders its keys and whatever nested ``"usage"`` keys its content holds; a
stream's the same however its bytes are split; odd values count as 0, never raise."""

from __future__ import annotations

import itertools
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.gateway.metering import StreamUsage, body_usage, usage_of

ANTHROPIC_USAGE = {"input_tokens": 7, "cache_creation_input_tokens": 11, "cache_read_input_tokens": 13,
                   "cache_creation": {"ephemeral_5m_input_tokens": 11, "ephemeral_1h_input_tokens": 0},
                   "output_tokens": 5, "service_tier": "standard"}
CHAT_USAGE = {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39,
              "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 2}}
# a decoy: tool input (raw JSON in Anthropic answers) that holds a "usage" object of its own
DECOY = {"type": "tool_use", "id": "toolu_1", "name": "report", "input": {"usage": {"input_tokens": 999}}}


def test_anthropic_usage_counts_cache_reads_and_writes_in_the_input():
    assert usage_of("anthropic_messages", ANTHROPIC_USAGE) == {
        "prompt_tokens": 31, "completion_tokens": 5, "total_tokens": 36, "cache_read_tokens": 13,
        "cache_write_tokens": 11, "reasoning_tokens": 0}


def test_chat_usage_keeps_cached_and_reasoning_details():
    assert usage_of("chat_completions", CHAT_USAGE) == {
        "prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39, "cache_read_tokens": 4,
        "cache_write_tokens": 0, "reasoning_tokens": 2}


def test_relayed_usage_reads_every_providers_spelling_as_the_codec_does():
    # DeepSeek's cache hits and OpenRouter's cache writes (Chat Completions), Bedrock
    # Mantle's cache writes (Responses): a relayed answer is billed as a decoded one
    deepseek = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105, "prompt_cache_hit_tokens": 60}
    assert usage_of("chat_completions", deepseek)["cache_read_tokens"] == 60
    openrouter = {**CHAT_USAGE, "prompt_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 7}}
    assert usage_of("chat_completions", openrouter)["cache_write_tokens"] == 7
    mantle = {"input_tokens": 50, "output_tokens": 3, "input_tokens_details": {"cache_write_tokens": 20}}
    assert usage_of("responses", mantle)["cache_write_tokens"] == 20


@pytest.mark.parametrize("odd", [None, "12", True, 1.5, [3]], ids=repr)
def test_an_odd_responses_detail_counts_zero(odd):
    usage = usage_of("responses", {"input_tokens": 9, "output_tokens": 2, "input_tokens_details": odd,
                                   "output_tokens_details": odd})
    assert usage is not None
    assert (usage["prompt_tokens"], usage["cache_read_tokens"], usage["reasoning_tokens"]) == (9, 0, 0)


@pytest.mark.parametrize("odd", [None, "12", True, 1.5, [3], {"n": 1}], ids=repr)
def test_an_odd_count_is_zero_and_the_others_still_count(odd):
    usage = usage_of("chat_completions", {**CHAT_USAGE, "completion_tokens": odd,
                                          "prompt_tokens_details": odd})
    assert usage == {"prompt_tokens": 30, "completion_tokens": 0, "total_tokens": 39, "cache_read_tokens": 0,
                     "cache_write_tokens": 0, "reasoning_tokens": 2}


_value = st.recursive(st.none() | st.integers() | st.text(alphabet='ab{}[]"\\:, ', max_size=6),
                      lambda inner: st.lists(inner, max_size=2)
                      | st.dictionaries(st.sampled_from(["usage", "x", "input"]), inner, max_size=2),
                      max_leaves=8)


@settings(max_examples=300)
@given(before=st.dictionaries(st.sampled_from(["id", "content", "model"]), _value, max_size=3),
       after=st.dictionaries(st.sampled_from(["stop_reason", "metadata", "z"]), _value, max_size=3),
       decoy_after=st.booleans(), indent=st.booleans())
def test_a_json_answer_gives_its_top_level_usage_however_its_keys_are_ordered(before, after, decoy_after, indent):
    body = {**before, "content": [DECOY], "usage": ANTHROPIC_USAGE,
            **({"extra": [DECOY]} if decoy_after else {}), **after}
    raw = json.dumps(body, indent=2 if indent else None).encode()
    assert body_usage("anthropic_messages", raw) == usage_of("anthropic_messages", ANTHROPIC_USAGE)


@pytest.mark.parametrize("raw", [
    b'{"content": [], "usage": null}', b'{"content": []}', b'not json', b'["usage"]',
    b'{"content": [{"text": "usage"}], "stop": "\\"usage\\": {}"}',
], ids=["null", "absent", "not-json", "not-an-object", "only-in-strings"])
def test_a_json_answer_without_a_usage_object_has_none(raw):
    assert body_usage("anthropic_messages", raw) is None


def _sse(events: list[dict]) -> bytes:
    return b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), orjson.dumps(e)) for e in events)


ANTHROPIC_STREAM = _sse([
    {"type": "message_start", "message": {"id": "msg_1", "usage": {**ANTHROPIC_USAGE, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": DECOY},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * 300}},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
    {"type": "message_stop"},
])


@settings(max_examples=200)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(ANTHROPIC_STREAM)), max_size=8))
def test_a_stream_gives_the_same_usage_however_its_bytes_are_split(cuts):
    tap = StreamUsage("anthropic_messages")
    points = [0, *sorted(cuts), len(ANTHROPIC_STREAM)]
    for a, b in itertools.pairwise(points):
        if b > a:
            tap.feed(ANTHROPIC_STREAM[a:b])
    assert tap.usage == usage_of("anthropic_messages", ANTHROPIC_USAGE)


def test_a_chat_stream_counts_its_last_chunk_and_skips_the_nulls():
    chunks = [b'data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}\n\n'] * 3
    chunks.append(b"data: " + orjson.dumps({"choices": [], "usage": CHAT_USAGE}) + b"\n\ndata: [DONE]\n\n")
    tap = StreamUsage("chat_completions")
    for chunk in chunks[:3]:
        tap.feed(chunk)
    assert tap.usage is None
    tap.feed(chunks[3])
    assert tap.usage == usage_of("chat_completions", CHAT_USAGE)
