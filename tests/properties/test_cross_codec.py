"""Conversions between the three codecs keep what a conversation means.

The gateway path is ``front.decode_request -> internal -> upstream.encode_request``
and back ``upstream decoder -> internal -> front encoder``. Whatever the pair of
protocols, these must survive: every text segment (in order, by role), every
tool call (name, arguments as JSON, in order), and every tool result (its text,
answering the same call), and every image. Tool-call ids may be rewritten (Anthropic allows only
``[A-Za-z0-9_-]``), but consistently: one original id maps to one wire id,
two different ids never collapse into one, and each result follows its call.
"""

from __future__ import annotations

import dataclasses
import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target, codec_for
from modelwire.completion import Completion
from modelwire.events import Finish, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from modelwire.messages import prepare_conversation
from modelwire.providers import get_profile
from modelwire.types import empty_usage

MODES = ("chat_completions", "anthropic_messages", "responses")
TARGETS = {
    "chat_completions": Target(get_profile("openai"), "gpt-4.1"),
    "anthropic_messages": Target(get_profile("anthropic"), "claude-sonnet-4-6"),
    "responses": Target(dataclasses.replace(get_profile("openai"), api_mode="responses"), "gpt-5"),
}
PAIRS = [(a, b) for a in MODES for b in MODES]
PAIR_IDS = [f"{a}->{b}" for a, b in PAIRS]

# ------------------------------------------------------------------ strategies
# No "<": inline reasoning tags are a separate rule (tests/test_messages_thinktags.py).
_TEXT = st.text(
    alphabet=string.ascii_letters + string.digits + " .,!?'\"-:;()\n" + "éüßñ中文日本語😀",
    min_size=1,
    max_size=40,
).map(str.strip).filter(bool)
_NAME = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,15}", fullmatch=True)
_JSON_SCALAR = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(), _TEXT)
_ARGS = st.dictionaries(_NAME, st.one_of(_JSON_SCALAR, st.lists(_JSON_SCALAR, max_size=3)),
                        max_size=3)
# ids as real providers mint them, plus characters some protocols reject
_ID = st.one_of(
    st.from_regex(r"call_[A-Za-z0-9]{8,24}", fullmatch=True),
    st.from_regex(r"toolu_[A-Za-z0-9]{12}", fullmatch=True),
    st.from_regex(r"[a-z]{2,6}[.:|/][a-z0-9]{1,6}", fullmatch=True),
)


_PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
        "DwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
_IMAGE = st.sampled_from([None, _PNG, "https://example.com/cat.png"])


def _content(text_parts: list[str], as_parts: bool, image: str | None) -> Any:
    if as_parts or image:
        parts: list[dict[str, Any]] = [{"type": "text", "text": t} for t in text_parts]
        if image:
            parts.insert(1, {"type": "image_url", "image_url": {"url": image}})
        return parts
    return "\n".join(text_parts)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(_TEXT)})
    used_ids: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        parts = draw(st.lists(_TEXT, min_size=1, max_size=2))
        content = _content(parts, draw(st.booleans()), draw(_IMAGE))
        messages.append({"role": "user", "content": content})
        kind = draw(st.sampled_from(["none", "text", "calls", "text+calls"]))
        if kind == "none":
            continue
        reply: dict[str, Any] = {"role": "assistant",
                                 "content": draw(_TEXT) if "text" in kind else None}
        if "calls" in kind:
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                call_id = draw(_ID.filter(lambda i: i not in used_ids))
                used_ids.add(call_id)
                calls.append({"id": call_id, "type": "function", "function": {
                    "name": draw(_NAME), "arguments": json.dumps(draw(_ARGS))}})
            reply["tool_calls"] = calls
            messages.append(reply)
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": draw(_TEXT)})
        else:
            messages.append(reply)
    if messages[-1]["role"] == "assistant":
        # Claude 4.6 and later reject a final assistant turn (no prefill).
        messages.append({"role": "user", "content": draw(_TEXT)})
    return messages


def _tools_for(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = sorted({c["function"]["name"] for m in messages for c in m.get("tool_calls") or []})
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in names]


# ------------------------------------------------------------------ meaning
def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content] if content.strip() else []
    if isinstance(content, list):
        return [p["text"] for p in content
                if isinstance(p, dict) and p.get("type") == "text" and p["text"].strip()]
    return []


def _segments(content: Any) -> list[tuple[str, str]]:
    """("text", words) and ("image", url) in order."""
    if not isinstance(content, list):
        return [("text", t) for t in _texts(content)]
    out = []
    for part in content:
        if part.get("type") == "image_url":
            out.append(("image", part["image_url"]["url"]))
        else:
            out.extend(("text", t) for t in _texts([part]))
    return out


def meaning(messages: list[dict[str, Any]]) -> list[tuple]:
    """What a conversation says, with message boundaries and id spellings removed.

    A run of text from one role is compared as its words in order: protocols
    merge same-role neighbours (Anthropic joins two user strings with a newline),
    so where one message ends and the next begins is not meaning. Calls keep
    name, parsed arguments and the ordinal of their id; results refer to that
    ordinal.
    """
    ids: dict[str, int] = {}
    out: list[tuple] = []

    def add_text(role: str, text: str) -> None:
        words = tuple(text.split())
        if out and out[-1][0] == "text" and out[-1][1] == role:
            out[-1] = ("text", role, out[-1][2] + words)
        else:
            out.append(("text", role, words))

    for m in messages:
        role = m["role"]
        if role == "tool":
            assert m["tool_call_id"] in ids, f"result for an unknown id: {m['tool_call_id']!r}"
            out.append(("result", ids[m["tool_call_id"]], "".join(_texts(m["content"]))))
            continue
        role = "system" if role == "developer" else role
        for kind, value in _segments(m.get("content")):
            if kind == "text":
                add_text(role, value)
            else:
                out.append(("image", role, value))
        for call in m.get("tool_calls") or []:
            assert call["id"] not in ids, f"two calls share the id {call['id']!r}"
            ids[call["id"]] = len(ids)
            out.append(("call", call["function"]["name"], json.loads(call["function"]["arguments"]),
                        ids[call["id"]]))
    return out


def _through(mode: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    codec = codec_for(mode)
    request = {"model": "m", "messages": messages, "tools": _tools_for(messages)}
    encoded = codec.encode_request(request, TARGETS[mode])
    return codec.decode_request(encoded.body, encoded.headers)["messages"]


# ---------------------------------------------------------------- requests
@pytest.mark.parametrize(("front", "upstream"), PAIRS, ids=PAIR_IDS)
@settings(max_examples=25)
@given(conversation=conversations())
def test_a_conversation_keeps_its_meaning_through_any_two_codecs(
    front: str, upstream: str, conversation: list[dict[str, Any]]
) -> None:
    expected = meaning(conversation)
    at_front = _through(front, conversation)
    assert meaning(at_front) == expected
    assert meaning(_through(upstream, at_front)) == expected


@pytest.mark.parametrize(("front", "upstream"), PAIRS, ids=PAIR_IDS)
def test_ids_that_differ_only_in_rejected_characters_stay_distinct(front: str, upstream: str) -> None:
    # Anthropic allows only [A-Za-z0-9_-]: a sanitizer that maps "ab.cd" and
    # "ab_cd" both to "ab_cd" gives two tool_use blocks one id (a 400).
    conversation = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "ab.cd", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "ab_cd", "type": "function", "function": {"name": "f", "arguments": '{"n":2}'}},
        ]},
        {"role": "tool", "tool_call_id": "ab.cd", "content": "one"},
        {"role": "tool", "tool_call_id": "ab_cd", "content": "two"},
    ]
    expected = meaning(conversation)
    assert meaning(_through(upstream, _through(front, conversation))) == expected


# ------------------------------------------------------- foreign reasoning
_SECRET = "R3AS0N"


def _with_foreign_reasoning(messages: list[dict[str, Any]], where: list[str]) -> list[dict[str, Any]]:
    """Reasoning that no target here can verify, in every place providers put it."""
    out = []
    for n, m in enumerate(messages):
        if m["role"] == "assistant":
            m = dict(m)
            tag = f"{_SECRET}-{n}"
            if "reasoning" in where:
                m["reasoning"] = f"{tag} plain"
            if "details" in where:
                m["reasoning_details"] = [
                    {"issuer": "some-other-provider",
                     "block": {"type": "thinking", "thinking": f"{tag} block", "signature": "c2ln"}},
                    {"type": "reasoning.text", "text": f"{tag} openrouter item", "signature": "x"},
                ]
            if "inline" in where and isinstance(m.get("content"), str):
                m["content"] = f"<think>{tag} inline</think>{m['content']}"
        out.append(m)
    return out


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=25)
@given(conversation=conversations(),
       where=st.lists(st.sampled_from(["reasoning", "details", "inline"]), min_size=1, unique=True))
def test_foreign_reasoning_is_never_sent_as_text(
    mode: str, conversation: list[dict[str, Any]], where: list[str]
) -> None:
    # Foreign reasoning pasted into assistant text makes Anthropic refuse
    # (reasoning_extraction, oh-my-pi #7241); elsewhere it leaks thoughts as words.
    # None of these targets echoes reasoning_content or accepts these issuers.
    messages = prepare_conversation(_with_foreign_reasoning(conversation, where))
    request = {"model": "m", "messages": messages, "tools": _tools_for(messages)}
    body = codec_for(mode).encode_request(request, TARGETS[mode]).body.decode()
    assert _SECRET not in body


# --------------------------------------------------------------- responses
@st.composite
def completions(draw: st.DrawFn) -> Completion:
    text = draw(st.one_of(st.none(), _TEXT))
    calls = [
        {"id": draw(st.from_regex(r"call_[A-Za-z0-9]{8,24}", fullmatch=True)), "type": "function",
         "function": {"name": draw(_NAME), "arguments": json.dumps(draw(_ARGS))}}
        for _ in range(draw(st.integers(0 if text else 1, 3)))
    ]
    ids = [c["id"] for c in calls]
    if len(set(ids)) != len(ids):
        calls = calls[:1]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return Completion(message=message, finish_reason="tool_calls" if calls else "stop",  # type: ignore[arg-type]
                      usage=empty_usage(), model="m", id="resp_1")


def _answer(completion: Completion) -> tuple:
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
             for c in completion.tool_calls]
    return completion.text, calls, completion.finish_reason


def _events(completion: Completion) -> list[Any]:
    events: list[Any] = []
    if completion.text:
        half = len(completion.text) // 2
        events += [TextDelta(completion.text[:half]), TextDelta(completion.text[half:])]
    for index, call in enumerate(completion.tool_calls):
        args = call["function"]["arguments"]
        events += [ToolCallStart(index, call["id"], call["function"]["name"]),
                   ToolCallDelta(index, args[:3]), ToolCallDelta(index, args[3:]),
                   ToolCallEnd(index)]
    events.append(Finish(completion.finish_reason))
    return [e for e in events if not isinstance(e, TextDelta) or e.text]


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=40)
@given(completion=completions())
def test_a_response_body_keeps_text_and_calls(mode: str, completion: Completion) -> None:
    codec = codec_for(mode)
    decoded = codec.decode_response(codec.encode_response(completion))
    assert _answer(decoded) == _answer(completion)
    assert [c["id"] for c in decoded.tool_calls] == [c["id"] for c in completion.tool_calls]


@pytest.mark.parametrize(("upstream", "front"), PAIRS, ids=PAIR_IDS)
@settings(max_examples=15)
@given(completion=completions())
def test_a_stream_keeps_text_and_calls_through_any_two_codecs(
    upstream: str, front: str, completion: Completion
) -> None:
    """Upstream SSE decoded, re-encoded as the front door's SSE, decoded again."""

    def relay(mode: str, events: list[Any]) -> list[Any]:
        codec = codec_for(mode)
        encoder = codec.StreamEncoder(model="m", id="resp_1")
        wire = b"".join(encoder.feed(e) for e in events) + encoder.close()
        decoder = codec.StreamDecoder()
        return decoder.feed(wire) + decoder.close()

    events = relay(front, relay(upstream, _events(completion)))
    accumulator = Accumulator(model="m")
    for event in events:
        accumulator.feed(event)
    assert _answer(accumulator.result()) == _answer(completion)
