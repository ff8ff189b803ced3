"""Reasoning arrives in pieces and must come back whole. For each recorded stream with
reasoning (chat ``reasoning_details`` fragments, Responses reasoning items announced in
``output_item.added`` and finished later): the streamed decode, however the bytes are
split, and the non-streamed decode of the same answer give byte-identical
``reasoning_details``, and the next turn's request carries them byte-exact.

The non-streamed answer of a chat stream is built here from its fragments by the rule
OpenRouter documents (pieces with the same index are one item: text and summary joined,
every other field the last non-empty value); a Responses stream's is its own
``response.completed`` object, which is what the non-streamed API returns.
"""

from __future__ import annotations

import json

import orjson
import pytest
from conftest import load_corpus
from hypothesis import given
from hypothesis import strategies as st

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target
from modelwire.codecs import chat_completions as cc
from modelwire.codecs import responses as rs
from modelwire.providers.catalog import CATALOG


def _frames(sse: str) -> list[dict]:
    out = []
    for line in sse.splitlines():
        if line.startswith("data: ") and line[6:].lstrip().startswith("{"):
            out.append(json.loads(line[6:]))
    return out


def _chat_items(frames: list[dict]) -> list[list[dict]]:
    return [item for f in frames for c in f.get("choices") or []
            for item in [(c.get("delta") or {}).get("reasoning_details")] if item]


def _has_reasoning(ex: dict) -> bool:
    sse = ex["response"].get("sse")
    if not isinstance(sse, str) or not ex.get("stream"):
        return False
    frames = _frames(sse)
    if ex["api"] == "chat_completions":
        return bool(_chat_items(frames))
    return ex["api"] == "responses" and any(
        f.get("type") == "response.output_item.done" and f["item"].get("type") == "reasoning"
        for f in frames)


STREAMS = [(n, ex) for n, ex in load_corpus() if _has_reasoning(ex)]
CHAT = [(n, ex) for n, ex in STREAMS if ex["api"] == "chat_completions"]
RESPONSES = [(n, ex) for n, ex in STREAMS if ex["api"] == "responses"]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    return [*pieces, data[last:]]


def _streamed(codec, data: bytes, cuts: list[int], issuer: str) -> dict:
    decoder = codec.StreamDecoder(issuer=issuer)
    acc = Accumulator()
    for piece in _split(data, cuts):
        for event in decoder.feed(piece):
            acc.feed(event)
    for event in decoder.close():
        acc.feed(event)
    return acc.result().message


def _merged(frames: list[dict]) -> list[dict]:
    """OpenRouter's rule, written out independently of the decoder."""
    items: dict[object, dict] = {}
    for fragment in (i for batch in _chat_items(frames) for i in batch):
        cur = items.setdefault(fragment.get("index"), {})
        for k, v in fragment.items():
            if k in ("text", "summary") and isinstance(cur.get(k), str) and isinstance(v, str):
                cur[k] += v
            elif k not in cur or v not in (None, ""):
                cur[k] = v
    return list(items.values())


def _chat_answer(frames: list[dict], streamed: dict) -> bytes:
    message = {"role": "assistant", "content": streamed.get("content"),
               "reasoning_details": _merged(frames)}
    if streamed.get("tool_calls"):
        message["tool_calls"] = streamed["tool_calls"]
    return orjson.dumps({"id": "x", "object": "chat.completion", "model": "m",
                         "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def _next_turn(profile, message: dict) -> dict:
    target = Target(profile, "m", "sk-test-key", profile.base_url, ())
    history = [{"role": "user", "content": "hi"}, message, {"role": "user", "content": "go on"}]
    if message.get("tool_calls"):
        history[2:2] = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"}
                        for c in message["tool_calls"]]
    codec = rs if profile.api_mode == "responses" else cc
    return orjson.loads(codec.encode_request({"model": "m", "messages": history}, target).body)


def test_the_corpus_has_streams_with_reasoning():
    assert len(CHAT) >= 5 and len(RESPONSES) >= 5


@pytest.mark.parametrize(("name", "ex"), CHAT, ids=[n for n, _ in CHAT])
@given(cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_chat_reasoning_details_stream_whole_and_echo_byte_exact(name, ex, cuts):
    frames = _frames(ex["response"]["sse"])
    streamed = _streamed(cc, ex["response"]["sse"].encode(), cuts, "openrouter")
    whole = cc.decode_response(_chat_answer(frames, streamed), issuer="openrouter").message
    got = streamed["reasoning_details"]
    assert orjson.dumps(got) == orjson.dumps(whole["reasoning_details"])
    sent = next(m for m in _next_turn(CATALOG["openrouter"], streamed)["messages"]
                if m["role"] == "assistant")
    assert orjson.dumps(sent["reasoning_details"]) == orjson.dumps([d["block"] for d in got])


@pytest.mark.parametrize(("name", "ex"), RESPONSES, ids=[n for n, _ in RESPONSES])
@given(cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_responses_reasoning_items_take_their_final_form_and_echo_byte_exact(name, ex, cuts):
    frames = _frames(ex["response"]["sse"])
    completed = next(f["response"] for f in frames if f.get("type") == "response.completed")
    streamed = _streamed(rs, ex["response"]["sse"].encode(), cuts, "openai")
    whole = rs.decode_response(orjson.dumps(completed), issuer="openai").message
    got = streamed["reasoning_details"]
    assert orjson.dumps(got) == orjson.dumps(whole["reasoning_details"])
    if not any(d["block"].get("encrypted_content") for d in got):
        return  # nothing a stateless next turn can replay
    sent = [i for i in _next_turn(CATALOG["openai-responses"], streamed)["input"]
            if i.get("type") == "reasoning"]
    # the input form of an output item: no id (stateless) and no status, the rest as received
    wanted = [{k: v for k, v in d["block"].items() if k not in ("id", "status")} for d in got]
    assert orjson.dumps(sent) == orjson.dumps(wanted)
