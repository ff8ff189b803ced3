"""Reasoning streamed in pieces: shown live as ReasoningDeltas, kept whole as blocks, and
labelled with the endpoint that sent it."""

from __future__ import annotations

import json

import orjson

from modelwire import Client
from modelwire.accumulate import Accumulator
from modelwire.codecs import Target
from modelwire.codecs import chat_completions as cc
from modelwire.codecs import responses as rs
from modelwire.events import ReasoningDelta
from modelwire.providers.catalog import CATALOG


def _sse(*chunks: dict) -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _delta(**delta) -> dict:
    return {"id": "gen-1", "model": "anthropic/claude-sonnet-4.5", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def _end() -> dict:
    return {"id": "gen-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def _decode(codec, data: bytes, issuer: str):
    decoder = codec.StreamDecoder(issuer=issuer)
    events = decoder.feed(data) + decoder.close()
    acc = Accumulator()
    for e in events:
        acc.feed(e)
    return events, acc.result().message


TEXT = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}


def test_reasoning_sent_only_as_items_streams_live_and_fills_reasoning_content():
    # the recorded OpenRouter shape without its plain `reasoning` field (some endpoints
    # send only the items); reasoning.summary items are readable reasoning too
    data = _sse(_delta(role="assistant", content="", reasoning_details=[{**TEXT, "text": "", "signature": ""}]),
                _delta(reasoning_details=[{**TEXT, "text": "This is simple. "}]),
                _delta(reasoning_details=[{**TEXT, "text": "2+2 equals 4."}]),
                _delta(reasoning_details=[{"type": "reasoning.summary", "summary": "Adds.", "index": 1}]),
                _delta(reasoning_details=[{"type": "reasoning.encrypted", "data": "gAAA", "index": 2}]),
                _delta(content="4"), _end())
    events, message = _decode(cc, data, "openrouter")
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == [
        "This is simple. ", "2+2 equals 4.", "Adds."]
    assert message["reasoning_content"] == "This is simple. 2+2 equals 4.Adds."
    assert [d["block"]["type"] for d in message["reasoning_details"]] == [
        "reasoning.text", "reasoning.summary", "reasoning.encrypted"]


def test_beside_a_plain_reasoning_field_the_items_text_is_not_said_twice():
    data = _sse(_delta(reasoning="Think.", reasoning_details=[{**TEXT, "text": "Think."}]),
                _delta(content="ok"), _end())
    events, message = _decode(cc, data, "openrouter")
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Think."]
    assert message["reasoning_content"] == "Think."


def test_a_fragmented_item_is_merged_by_index_and_echoed_byte_exact():
    signature = "Et0BCkgIChACGAIqQA2s7h7tA7IG35fbwVkou9PM2hANVJNUwcEM4q12fTRD"
    data = _sse(_delta(reasoning_details=[{**TEXT, "text": "", "signature": ""}]),
                _delta(reasoning_details=[{**TEXT, "text": "Step one. "}]),
                _delta(reasoning_details=[{"text": "Step two.", "index": 0}]),  # no type
                _delta(reasoning_details=[{**TEXT, "signature": signature}]),
                _delta(reasoning_details=[{"type": "reasoning.text", "signature": signature, "index": 0,
                                           "id": "rd_1"}]),  # the signature said again
                _delta(content="done"), _end())
    _, message = _decode(cc, data, "openrouter")
    final = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0,
             "text": "Step one. Step two.", "signature": signature, "id": "rd_1"}
    assert message["reasoning_details"] == [{"issuer": "openrouter", "block": final}]
    profile = CATALOG["openrouter"]
    body = cc.encode_request({"model": "m", "messages": [
        {"role": "user", "content": "hi"}, message, {"role": "user", "content": "more"}]},
        Target(profile, "m", "sk-test-key", profile.base_url, ()))
    sent = orjson.loads(body.body)["messages"][1]["reasoning_details"]
    assert orjson.dumps(sent) == orjson.dumps([final])


def _event(kind: str, **fields) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


def test_a_responses_reasoning_item_that_grows_takes_its_final_form():
    short, done, final = "gAAAA-short", "gAAAA-" + "d" * 4000, "gAAAA-" + "f" * 4000
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Hi", "annotations": []}]}
    response = {"id": "resp_1", "model": "gpt-5", "status": "completed",
                "output": [{**item, "encrypted_content": final}, message],
                "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}
    data = b"".join([
        _event("response.created", response={"id": "resp_1", "model": "gpt-5"}),
        _event("response.output_item.added", output_index=0, item={**item, "encrypted_content": short}),
        _event("response.output_item.done", output_index=0, item={**item, "encrypted_content": done}),
        _event("response.output_item.added", output_index=1, item={**message, "content": []}),
        _event("response.output_text.delta", output_index=1, item_id="msg_1", content_index=0, delta="Hi"),
        _event("response.output_item.done", output_index=1, item=message),
        _event("response.completed", response=response),
    ])
    _, streamed = _decode(rs, data, "openai")
    whole = rs.decode_response(orjson.dumps(response), issuer="openai").message
    assert streamed["reasoning_details"] == whole["reasoning_details"]
    assert streamed["reasoning_details"][0]["block"]["encrypted_content"] == final
    profile = CATALOG["openai-responses"]
    body = rs.encode_request({"model": "gpt-5", "messages": [
        {"role": "user", "content": "hi"}, streamed, {"role": "user", "content": "more"}]},
        Target(profile, "gpt-5", "sk-test-key", profile.base_url, ()))
    replayed = [i for i in orjson.loads(body.body)["input"] if i.get("type") == "reasoning"]
    assert replayed == [{"type": "reasoning", "summary": [], "encrypted_content": final}]


def test_the_issuer_is_the_endpoint_that_sent_it_and_the_profile_says_the_same():
    base = "http://127.0.0.1:9/v1"  # nothing is sent: the Client only resolves
    with Client("custom/my-model", base_url=base, api_mode="chat_completions",
                api_key="sk-test-key") as client:
        issuer = client.profile.issuer
    assert issuer == f"custom:{base}"  # derived from the base URL, never "openai"
    data = _sse(_delta(reasoning_details=[{**TEXT, "text": "Hm."}]), _delta(content="x"), _end())
    _, message = _decode(cc, data, issuer)
    assert [d["issuer"] for d in message["reasoning_details"]] == [issuer]
    assert CATALOG["openrouter"].issuer == "openrouter"

