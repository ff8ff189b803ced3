"""prepare_conversation's cache as the Client uses it: what it hands out is made from the
caller's own messages, which no encoder changes, so encoding twice from the cache sends
the same bytes as without one; short conversations skip it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from modelwire.codecs import Target, codec_for
from modelwire.codecs.cache import EncodeCache
from modelwire.messages import apply_cache_layout, prepare_conversation
from modelwire.messages._kept import MIN_MESSAGES
from modelwire.providers import get_profile

_MARK = {"type": "ephemeral"}
_SIGNED = {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "plan", "signature": "sig"}}


def _call(cid: str, **extra: Any) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "Read", "arguments": '{"path": "a.py"}'}, **extra}


def _conversation(vision: bool = True) -> list[Any]:
    """Every shape an encoder could be tempted to change in place: parts with
    cache_control (more marks than Anthropic allows), signed thinking, calls with marks,
    results with parts, a later system message, a call with no result, a reasoning-only
    turn, a call without an id; long enough to be kept."""
    rich = [
        {"role": "system", "content": [{"type": "text", "text": "be brief", "cache_control": dict(_MARK)}]},
        {"role": "user", "content": [{"type": "text", "text": "look", "cache_control": dict(_MARK)},
                                     *([{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]
                                       if vision else [])]},
        {"role": "assistant", "content": "reading", "reasoning_content": "plan", "reasoning_details": [_SIGNED],
         "tool_calls": [_call("c1", cache_control=dict(_MARK)), _call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "x = 1", "cache_control": dict(_MARK)}]},
        {"role": "assistant", "content": "", "reasoning_content": "hm"},
        {"role": "system", "content": "from now on, say why"},
        {"role": "user", "content": "and b.py?", "cache_control": dict(_MARK)},
        {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "Read", "arguments": "{}"}}]},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "done <b>", "cache_control": dict(_MARK)},
        {"role": "user", "content": [{"type": "text", "text": "next", "cache_control": dict(_MARK)}]},
    ]
    earlier = [m for n in range(MIN_MESSAGES // 2) for m in (
        {"role": "user", "content": f"step {n}"},
        {"role": "assistant", "content": None, "tool_calls": [_call(f"e{n}")]},
        {"role": "tool", "tool_call_id": f"e{n}", "content": "ok"},
        {"role": "assistant", "content": f"done {n}"})]
    return rich[:2] + earlier + rich[2:]


_TARGETS = [("anthropic", "claude-sonnet-4-5"), ("deepseek-anthropic", "deepseek-chat"), ("openai", "gpt-4.1"),
            ("openrouter", "anthropic/claude-sonnet-4.5"), ("openai-responses", "gpt-5"), ("gemini", "gemini-2.5-pro")]


def _body(messages: list[Any], name: str, model: str, cache: EncodeCache | None, layout: bool) -> bytes:
    profile = get_profile(name)
    prepared = prepare_conversation(messages, cache=cache)
    if layout:
        prepared = apply_cache_layout(prepared)
    request = {"model": model, "messages": prepared, "max_tokens": 256, "stream": False}
    return codec_for(profile.api_mode).encode_request(request, Target(profile, model, cache=cache)).body  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", [False, True], ids=["as sent", "cache layout"])
@pytest.mark.parametrize(("name", "model"), _TARGETS, ids=[n for n, _ in _TARGETS])
def test_encoding_twice_from_the_cache_changes_no_message_and_sends_the_same_bytes(name, model, layout):
    messages = _conversation(get_profile(name).vision)
    before = orjson.dumps(messages)
    cache = EncodeCache()
    plain = _body(copy.deepcopy(messages), name, model, None, layout)
    _body(messages, name, model, cache, layout)  # a first call: noted as seen
    first = _body(messages, name, model, cache, layout)
    hits = cache.hits
    second = _body(messages, name, model, cache, layout)
    assert cache.hits > hits, "the second call found the first one's work"
    assert first == second == plain
    assert orjson.dumps(messages) == before, "no encoder changed a message it was handed"
    # a gateway parses every request anew: equal messages, new objects
    assert _body(orjson.loads(before), name, model, cache, layout) == plain


def test_a_message_changed_in_place_after_a_call_is_prepared_anew():
    messages = _conversation()
    cache = EncodeCache()
    prepare_conversation(messages, cache=cache)
    prepare_conversation(messages, cache=cache)
    messages[1]["content"][0]["text"] = "look closer"  # the caller edits its history
    messages[-9]["tool_calls"].append(_call("c3"))
    assert prepare_conversation(messages, cache=cache) == prepare_conversation(messages)


def test_what_is_handed_out_is_the_callers_messages_copied_not_the_caches():
    messages = _conversation()
    cache = EncodeCache()
    prepare_conversation(messages, cache=cache)
    prepare_conversation(messages, cache=cache)
    out: list[Any] = prepare_conversation(messages, cache=cache)
    # as without a cache: each message a new dict, its parts the caller's own
    assert out[1] is not messages[1] and out[1]["content"] is messages[1]["content"]
    out[1]["content"] = "changed by a consumer"
    next(m for m in out if m.get("reasoning_details"))["tool_calls"].clear()
    assert prepare_conversation(messages, cache=cache) == prepare_conversation(messages)


def _long(n: int) -> list[Any]:
    out: list[Any] = [{"role": "system", "content": "s"}]
    while len(out) < n:
        out += [{"role": "user", "content": f"q{len(out)}"}, {"role": "assistant", "content": "a"}]
    return out[:n]


def test_short_conversations_are_not_kept_and_a_first_call_keeps_no_copies():
    cache = EncodeCache()
    prepare_conversation(_long(MIN_MESSAGES - 1), cache=cache)
    assert len(cache) == 0
    prepare_conversation(_long(MIN_MESSAGES), cache=cache)
    assert len(cache) == 1 and cache.size_bytes < len(orjson.dumps(_long(MIN_MESSAGES))), "only noted as seen"
    prepare_conversation(_long(MIN_MESSAGES + 2), cache=cache)
    assert cache.size_bytes > len(orjson.dumps(_long(MIN_MESSAGES + 2))), "its copies kept from the second call"
