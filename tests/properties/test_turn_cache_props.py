"""Whatever the history, an agent's turns encode to the same bytes (or the same error) with
no cache, a cold one, or one warmed by the earlier turns of the same conversation; and a
message changed anywhere (text, a tool result, a signature, cache_control) is converted
again."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs import Target, anthropic_messages
from modelwire.codecs.cache import EncodeCache
from modelwire.errors import MessageError
from modelwire.kept_json import KeptDict
from modelwire.providers import get_profile

ANTHROPIC = get_profile("anthropic")
PROFILES = [
    ANTHROPIC,
    get_profile("moonshot-anthropic"),  # unsigned thinking echo, its own issuer
    dataclasses.replace(ANTHROPIC, name="drops-earlier-thinking", drop_earlier_thinking=True),
]
MODELS = ["claude-sonnet-4-5", "claude-opus-4-8"]  # the second takes mid-conversation system messages
SHARED = EncodeCache(max_entries=64, max_bytes=256 * 1024)  # across examples: evictions mix in
PNG = "data:image/png;base64," + "iVBORw0KGgo" * 3

words = st.sampled_from(["", " ", "read it", "ok", "run the tests", "done."])
marks = st.sampled_from([None, {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}])


def _marked(part: dict[str, Any], mark: Any) -> dict[str, Any]:
    return {**part, "cache_control": mark} if mark else part


parts = st.one_of(
    st.builds(lambda t, m: _marked({"type": "text", "text": t}, m), words, marks),
    st.builds(lambda m: _marked({"type": "image_url", "image_url": {"url": PNG}}, m), marks),
    st.just({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}),
)
contents = st.one_of(words, st.lists(parts, min_size=1, max_size=3))
ids = st.sampled_from(["call_1", "call_2", "toolu_3"])


@st.composite
def reasoning(draw: st.DrawFn) -> dict[str, Any]:
    issuer = draw(st.sampled_from(["anthropic", "moonshot", "openai"]))
    if draw(st.booleans()):
        block = {"type": "redacted_thinking", "data": draw(st.sampled_from(["ZGF0YQ==", "b3RoZXI="]))}
    else:
        block = {"type": "thinking", "thinking": draw(words),
                 "signature": draw(st.sampled_from(["", "c2ln", "c2lnMg=="]))}
    return {"issuer": issuer, "block": block}


@st.composite
def assistant(draw: st.DrawFn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": draw(st.one_of(st.none(), contents))}
    calls = draw(st.lists(st.builds(lambda i, a: {"id": i, "type": "function", "function": {
        "name": "Read", "arguments": a}}, ids, st.sampled_from(['{"path": "a"}', "{}", "not json"])), max_size=2))
    if calls:
        msg["tool_calls"] = calls
    details = draw(st.lists(reasoning(), max_size=2))
    if details:
        msg["reasoning_details"] = details
    if draw(st.booleans()):
        msg["reasoning_content"] = draw(words)
    if draw(st.booleans()):  # an interleaving, valid or not for these lists
        msg["block_order"] = draw(st.lists(st.sampled_from(["reasoning", "text", "tool_call"]), max_size=5))
    mark = draw(marks)
    if mark:
        msg["cache_control"] = mark
    return msg


def _message(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user", "user", "assistant", "assistant", "tool", "tool", "system"]))
    if kind == "assistant":
        return draw(assistant())
    if kind == "tool":
        msg = {"role": "tool", "tool_call_id": draw(ids), "content": draw(contents)}
        if draw(st.booleans()):
            msg["is_error"] = True
        mark = draw(marks)
        return {**msg, "cache_control": mark} if mark else msg
    msg = {"role": kind, "content": draw(contents)}
    mark = draw(marks)
    return {**msg, "cache_control": mark} if mark else msg


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    head = [{"role": "system", "content": draw(contents)}] if draw(st.booleans()) else []
    return head + [{"role": "user", "content": draw(contents)}] + [
        _message(draw) for _ in range(draw(st.integers(4, 16)))]


def _outcome(messages: list[dict[str, Any]], profile: Any, model: str, cache: EncodeCache | None) -> Any:
    request = {"model": model, "messages": messages, "thinking": "medium", "max_tokens": 20000}
    try:
        return anthropic_messages.encode_request(request, Target(profile, model, cache=cache)).body
    except MessageError as exc:
        return ("error", str(exc), exc.index)


@settings(max_examples=250, deadline=None)
@given(history=histories(), profile=st.sampled_from(PROFILES), shared=st.booleans(),
       turns=st.lists(st.tuples(st.integers(1, 18), st.sampled_from(MODELS)), min_size=1, max_size=4))
def test_every_turn_of_a_conversation_is_the_same_bytes_cold_warm_and_uncached(history, profile, shared, turns):
    warm = SHARED if shared else EncodeCache()
    # the agent's turns: growing prefixes, each to either model (a fallback changes it)
    for n, model in sorted(turns) + [(len(history), turns[0][1])]:
        turn = copy.deepcopy(history[:n])  # new objects each turn, as a gateway parses them
        uncached = _outcome(turn, profile, model, None)
        assert _outcome(turn, profile, model, EncodeCache()) == uncached  # cold
        assert _outcome(turn, profile, model, warm) == uncached  # warm from the earlier turns
        assert _outcome(turn, profile, model, warm) == uncached  # the same turn again


@settings(max_examples=150, deadline=None)
@given(history=histories(), profile=st.sampled_from(PROFILES), model=st.sampled_from(MODELS),
       ends=st.lists(st.integers(1, 18), min_size=1, max_size=4))
def test_a_history_the_gateway_kept_is_the_same_bytes_and_is_never_changed(history, profile, model, ends):
    cache = EncodeCache()
    for n in [*sorted(ends), len(history)]:
        plain = copy.deepcopy(history[:n])
        # as the door hands a kept history on: its messages read-only, all but the last two
        kept = [KeptDict(copy.deepcopy(m), orjson.dumps(m)) if i < len(plain) - 2 else copy.deepcopy(m)
                for i, m in enumerate(plain)]
        uncached = _outcome(plain, profile, model, None)
        assert _outcome(kept, profile, model, cache) == uncached
        assert _outcome(kept, profile, model, cache) == uncached  # the same turn again
        assert _outcome(kept, profile, model, None) == uncached
        assert all(m == orjson.loads(m.json) for m in kept if type(m) is KeptDict)


def _changes(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """Copies of ``msg`` each with one field changed."""
    out = []
    for key, value in msg.items():
        if key == "content" and isinstance(value, str):
            out.append({**msg, key: value + " (edited)"})
            if value:  # the same length: only the bytes tell
                out.append({**msg, key: ("x" if value[0] != "x" else "y") + value[1:]})
        elif key == "content" and isinstance(value, list):
            out.append({**msg, key: [*value, {"type": "text", "text": "more"}]})
        elif key == "cache_control":
            out.append({k: v for k, v in msg.items() if k != key})
        elif key == "reasoning_details":
            first = copy.deepcopy(value)
            block = first[0]["block"]
            field = "signature" if "signature" in block else "data"
            block[field] += "QQ=="
            out.append({**msg, key: first})
            if value[0]["block"][field]:  # one letter of it, the same length
                same = copy.deepcopy(value)
                old = same[0]["block"][field]
                same[0]["block"][field] = old[:-1] + ("A" if old[-1] != "A" else "B")
                out.append({**msg, key: same})
        elif key == "tool_calls":
            calls = copy.deepcopy(value)
            calls[0]["function"]["arguments"] = '{"path": "b"}'
            out.append({**msg, key: calls})
    if "cache_control" not in msg:
        out.append({**msg, "cache_control": {"type": "ephemeral"}})
    return out


@settings(max_examples=150, deadline=None)
@given(history=histories(), profile=st.sampled_from(PROFILES), model=st.sampled_from(MODELS), data=st.data())
def test_a_message_changed_anywhere_in_the_history_is_converted_again(history, profile, model, data):
    cache = EncodeCache()
    _outcome(copy.deepcopy(history), profile, model, cache)  # warm: every turn kept
    i = data.draw(st.integers(0, len(history) - 1))
    for changed in _changes(history[i]):
        edited = [*history[:i], changed, *history[i + 1:]]
        assert _outcome(copy.deepcopy(edited), profile, model, cache) == _outcome(edited, profile, model, None)
