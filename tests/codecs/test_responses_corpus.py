"""The Responses codec against every recorded ``/responses`` exchange in tests/corpus.

Requests decode and re-encode to an equivalent request (same meaning; the
normalizations below say which differences are deliberate and why); responses,
errors and streams decode; each stream folds to the same message as the
``response`` object its own ``response.completed`` carries; a decoded stream
re-encoded and decoded again gives the same events.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import load_corpus

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target, responses
from modelwire.codecs.sse import SSEDecoder
from modelwire.errors import ProviderError, UnsupportedContentError
from modelwire.events import ReasoningBlock, UsageEvent
from modelwire.providers.profile import ProviderProfile

EXCHANGES = [(name, ex) for name, ex in load_corpus() if ex["api"] == "responses"]
STREAMS = [(n, ex) for n, ex in EXCHANGES if "sse" in ex["response"]]
BODIES = [(n, ex) for n, ex in EXCHANGES if "body" in ex["response"] and ex["response"]["status"] == 200]
ERRORS = [(n, ex) for n, ex in EXCHANGES if ex["response"]["status"] >= 400]
IDS = lambda items: [n for n, _ in items]

PROFILE = ProviderProfile(name="openai", api_mode="responses", issuer="openai")

# Recorded requests the internal model cannot express, and why (counted in the output).
NOT_EXPRESSIBLE = {
    "openai__responses__multimodal-tool-return-matrix-direct-uploaded-file-image-openai-5af8d9_t1":
        "input_image by uploaded file_id: a Chat Completions image part needs a URL",
    "openai__responses__openai-instructions-with-responses-logprobs":
        "include message.output_text.logprobs: token log-probabilities are not carried",
    "openai__responses__openai-instructions-with-responses-logprobs-streaming":
        "include message.output_text.logprobs: token log-probabilities are not carried",
}


def test_corpus_has_responses_exchanges():
    assert len(EXCHANGES) >= 30
    print(f"\nresponses corpus: {len(EXCHANGES)} exchanges, {len(STREAMS)} streams, "
          f"{len(BODIES)} bodies, {len(ERRORS)} errors")


# ------------------------------------------------------------------- requests
def _normalize_request(body: dict[str, Any]) -> dict[str, Any]:
    """Meaning-preserving normal form; each rule is a deliberate encoder choice."""
    body = {k: v for k, v in body.items() if v is not None}  # null == absent
    body.pop("stream", None) if body.get("stream") is False else None
    # store: false is our default (nothing persisted upstream), and then ids go
    body["store"] = body.get("store", False)
    include = [i for i in body.get("include") or () if i != "reasoning.encrypted_content"]
    body.pop("include", None)
    if include:
        body["include"] = include  # encrypted reasoning is always asked for when thinking
    if body.get("text") == {"format": {"type": "text"}}:
        del body["text"]  # the default format
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = [_normalize_item(i) for i in items or ()]
    # leading system messages and `instructions` mean the same thing
    lead = []
    while items and items[0].get("role") == "system":
        lead.append(_text_of(items.pop(0)["content"]))
    if lead:
        body["instructions"] = "\n\n".join(([body["instructions"]] if "instructions" in body else []) + lead)
    body["input"] = items
    if "tools" in body:
        body["tools"] = [_normalize_tool(t) for t in body["tools"]]
    return body


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content)


def _normalize_item(item: dict[str, Any]) -> dict[str, Any]:
    item = {k: v for k, v in item.items() if v is not None or k == "encrypted_content"}
    item.pop("id", None)  # replayed ids are stripped: store is false
    kind = item.get("type", "message")
    if kind == "message":
        item.pop("type", None)
        if item.get("role") == "assistant":
            # phase/status/annotations of a replayed assistant message are not kept
            return {"role": "assistant", "content": _text_of(item["content"])}
        content = item["content"]
        if isinstance(content, str):
            content = [{"type": "input_text", "text": content}]
        item["content"] = content
    elif kind == "reasoning":
        item.pop("status", None)
        item.setdefault("summary", [])
    return item


def _normalize_tool(tool: dict[str, Any]) -> dict[str, Any]:
    tool = {k: v for k, v in tool.items() if v is not None}
    if tool.get("type") == "function":
        # omitted strict is Responses' auto-strict; the internal model means false
        tool["strict"] = tool.get("strict", False)
    return tool


@pytest.mark.parametrize("name,ex", EXCHANGES, ids=IDS(EXCHANGES))
def test_recorded_request_reencodes_to_an_equivalent_request(name, ex):
    original = ex["request"]["body"]
    if name in NOT_EXPRESSIBLE:
        with pytest.raises(UnsupportedContentError):
            responses.decode_request(original)
        pytest.skip(f"not expressible: {NOT_EXPRESSIBLE[name]}")
    request = responses.decode_request(json.dumps(original).encode())
    assert request["metadata"]["source_api"] == "responses"
    encoded = responses.encode_request(request, Target(PROFILE, model=original["model"], api_key="sk-fake-0000"))
    assert encoded.path == "/responses"
    assert encoded.headers["authorization"] == "Bearer sk-fake-0000"
    again = json.loads(encoded.body)
    assert _normalize_request(again) == _normalize_request(original)
    # reasoning blocks travel byte-exact
    sent = [i.get("encrypted_content") for i in original.get("input") or () if isinstance(i, dict)
            and i.get("type") == "reasoning"]
    assert sent == [i.get("encrypted_content") for i in again["input"] if i.get("type") == "reasoning"]


def test_not_expressible_requests_are_counted():
    names = {n for n, _ in EXCHANGES}
    assert set(NOT_EXPRESSIBLE) <= names
    print(f"\nresponses requests: {len(EXCHANGES) - len(NOT_EXPRESSIBLE)} re-encoded equivalent, "
          f"{len(NOT_EXPRESSIBLE)} not expressible: {sorted(NOT_EXPRESSIBLE.values())}")


# ------------------------------------------------------------------ responses
@pytest.mark.parametrize("name,ex", BODIES, ids=IDS(BODIES))
def test_recorded_response_decodes(name, ex):
    body = ex["response"]["body"]
    completion = responses.decode_response(json.dumps(body).encode())
    assert completion.id == body["id"] and completion.model == body["model"]
    calls = [o for o in body["output"] if o["type"] == "function_call"]
    assert [c["id"] for c in completion.tool_calls] == [c["call_id"] for c in calls]
    assert completion.finish_reason == ("tool_calls" if calls else "stop")
    text = "".join(p.get("text", "") for o in body["output"] if o["type"] == "message"
                   for p in o["content"] if p["type"] == "output_text")
    assert completion.text == text
    blocks = [d["block"] for d in completion.message.get("reasoning_details", [])]
    assert blocks == [o for o in body["output"] if o["type"] == "reasoning"]
    usage = body["usage"]
    assert completion.usage["prompt_tokens"] == usage["input_tokens"]
    assert completion.usage["cache_read_tokens"] == usage["input_tokens_details"]["cached_tokens"]
    assert completion.usage["reasoning_tokens"] == usage["output_tokens_details"]["reasoning_tokens"]


@pytest.mark.parametrize("name,ex", ERRORS, ids=IDS(ERRORS))
def test_recorded_error_decodes(name, ex):
    resp = ex["response"]
    error = responses.decode_error(resp["status"], resp["headers"], json.dumps(resp["body"]).encode())
    assert isinstance(error, ProviderError)
    assert error.status == resp["status"]
    assert str(error) == resp["body"]["error"]["message"]
    assert error.code == resp["body"]["error"]["code"]


def test_model_not_found_is_its_own_class_even_on_a_400():
    (ex,) = [e for n, e in ERRORS if "model-not-found" in n]
    error = responses.decode_error(400, {}, ex["response"]["body"])
    assert type(error).__name__ == "ModelNotFoundError"


# -------------------------------------------------------------------- streams
def _decode(sse: bytes) -> tuple[list, responses.StreamDecoder]:
    decoder = responses.StreamDecoder()
    events = decoder.feed(sse) + decoder.close()
    return events, decoder


def _fold(events) -> Any:
    acc = Accumulator()
    for e in events:
        acc.feed(e)
    return acc.result()


def _without_reasoning_ids(message: dict[str, Any]) -> dict[str, Any]:
    message = dict(message)
    if "reasoning_details" in message:
        message["reasoning_details"] = [
            {**d, "block": {k: (bool(v) if k == "encrypted_content" else v)
                            for k, v in d["block"].items() if k != "id"}}
            for d in message["reasoning_details"]
        ]
    return message


@pytest.mark.parametrize("name,ex", STREAMS, ids=IDS(STREAMS))
def test_stream_folds_to_the_same_message_as_its_completed_response(name, ex):
    sse = ex["response"]["sse"].encode()
    events, decoder = _decode(sse)
    assert decoder.unknown_events == 0
    streamed = _fold(events)
    parsed = [json.loads(e.data) for e in SSEDecoder().feed(sse) if e.data.startswith("{")]
    terminal = [d for d in parsed if d["type"] in ("response.completed", "response.incomplete")][-1]["response"]
    twin = responses.decode_response(terminal)
    # OpenRouter renames its transient rs_tmp_ items in the final object, and every
    # server re-encrypts encrypted_content each time it serializes the item: the
    # final object's copy is the one kept, what the non-streamed answer carries
    assert _without_reasoning_ids(streamed.message) == _without_reasoning_ids(twin.message)
    final_items = [i for i in terminal.get("output") or [] if i.get("type") == "reasoning"]
    assert [d["block"] for d in streamed.message.get("reasoning_details", [])] == final_items
    assert streamed.finish_reason == twin.finish_reason
    assert streamed.usage == twin.usage
    assert decoder.id == terminal["id"]


def test_stream_and_non_stream_twins_give_the_same_answer():
    base = "openai__responses__openai-instructions-with-responses-logprobs"
    by_name = dict(EXCHANGES)
    streamed = _fold(_decode(by_name[base + "-streaming"]["response"]["sse"].encode())[0])
    plain = responses.decode_response(by_name[base]["response"]["body"])
    assert streamed.message == plain.message
    assert streamed.finish_reason == plain.finish_reason == "stop"


@pytest.mark.parametrize("name,ex", STREAMS, ids=IDS(STREAMS))
def test_reencoded_stream_decodes_to_the_same_events(name, ex):
    events, decoder = _decode(ex["response"]["sse"].encode())
    encoder = responses.StreamEncoder(model=decoder.model, id=decoder.id)
    body = b"".join(encoder.feed(e) for e in events) + encoder.close()
    again, decoder2 = _decode(body)
    assert decoder2.id == decoder.id and decoder2.unknown_events == 0

    def comparable(e):
        # a reasoning item streamed before its block arrives is announced under
        # the encoder's id (the SDK requires added/done ids to match); the block
        # is otherwise byte-exact
        if isinstance(e, ReasoningBlock):
            return ReasoningBlock(e.issuer, {k: v for k, v in e.block.items() if k != "id"})
        if isinstance(e, UsageEvent):
            # the counts must survive; ``raw`` is the upstream's own object, which the
            # encoder rewrites from the counts (never copies: it may be another protocol's)
            return UsageEvent({k: v for k, v in e.usage.items() if k != "raw"})
        return e

    assert [comparable(e) for e in again] == [comparable(e) for e in events]


def _structure(sse: str) -> list[tuple[str, tuple[str, ...]]]:
    """Event names and the keys of their data, ignoring fields we never send."""
    out = []
    for e in SSEDecoder().feed(sse.encode()) + SSEDecoder().close():
        if not e.data.startswith("{"):
            continue
        data = json.loads(e.data)
        keys = tuple(sorted(set(data) - {"obfuscation"}))
        out.append((data["type"], keys))
    return out


# streams whose every event we reproduce (the others carry hosted-tool progress
# events, annotations or raw reasoning_text events, which normalize away)
STRUCTURAL = [
    "openai__responses__responses-basic-streaming",
    "openai__responses__multi-tool-streaming-openairesponsescommon-openai-gpt-4o-mini_t0",
    "openai__responses__openai-responses-streaming-usage",
    "openai__responses__refusal-openai-gpt-4o-responses-async-stream",
    "openai__responses__response-stream-incomplete",
    "openai__responses__responses-stream-prompt-caching-cache-read",
    "openai__responses__dd-thinking-reasoning-summary-stream-aaef3e68",
    "azure_openai__responses__thinking-streaming-azureresponseswithsummarythinking-azure-gpt-5-mini_t0",
    "bedrock_mantle__responses__reused-tool-call-ids-stream_t1",
]


@pytest.mark.parametrize("name", STRUCTURAL)
def test_encoder_writes_the_event_sequence_and_fields_the_api_sends(name):
    sse = dict(EXCHANGES)[name]["response"]["sse"]
    events, decoder = _decode(sse.encode())
    encoder = responses.StreamEncoder(model=decoder.model, id=decoder.id)
    ours = (b"".join(encoder.feed(e) for e in events) + encoder.close()).decode()
    theirs = _structure(sse)
    mine = _structure(ours)
    assert [t for t, _ in mine] == [t for t, _ in theirs]
    assert mine == theirs
    # framing: an event: line before each data: line, blank line after each event
    assert ours.startswith("event: response.created\ndata: {")
    assert ours.endswith("}\n\n")
    sequence = [json.loads(e.data)["sequence_number"] for e in SSEDecoder().feed(ours.encode())]
    assert sequence == list(range(len(sequence)))
