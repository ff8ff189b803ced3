"""Hypothesis: the Responses codec's decoders invert its encoders, and chunking never matters.

* any split of a recorded ``/responses`` stream decodes to the same events;
* ``StreamDecoder(StreamEncoder(events)) == events`` over the representable subset
  (a reasoning item streamed before its block is announced under the encoder's
  id: compared without ids);
* ``decode_response(encode_response(c)) == c`` and
  ``decode_request(encode_request(r)) == r`` over their representable subsets.
"""

from __future__ import annotations

import json

from conftest import load_corpus
from hypothesis import given
from hypothesis import strategies as st

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target, responses
from modelwire.codecs.responses.response import usage_in
from modelwire.completion import Completion
from modelwire.events import (
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.providers.profile import ProviderProfile

STREAMS = [ex["response"]["sse"].encode() for _, ex in load_corpus()
           if ex["api"] == "responses" and "sse" in ex["response"]]
PROFILE = ProviderProfile(name="openai", api_mode="responses", issuer="openai")

text = st.text(min_size=1, max_size=12)
ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=10)


def _decode(raw: bytes, chunks=None):
    decoder = responses.StreamDecoder()
    events = []
    for chunk in chunks or [raw]:
        events += decoder.feed(chunk)
    return events + decoder.close()


@given(st.sampled_from(range(len(STREAMS))), st.lists(st.integers(min_value=0), max_size=12))
def test_any_split_of_a_recorded_stream_gives_the_same_events(which, cuts):
    raw = STREAMS[which]
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)])]
    assert _decode(raw, chunks) == _decode(raw)


# ------------------------------------------------------------------ stream events
@st.composite
def segments(draw):
    """A representable event sequence: reasoning, text/refusal and tool-call runs."""
    events = []
    calls = 0
    reasoning_items = 0
    for kind in draw(st.lists(st.sampled_from(["reasoning", "block", "text", "refusal", "calls"]),
                              min_size=1, max_size=6)):
        if kind == "reasoning":
            pieces = draw(st.lists(text, min_size=1, max_size=3))
            if reasoning_items:
                # a new reasoning item's text is kept apart from the last one's
                pieces[0] = "\n\n" + pieces[0]
            reasoning_items += 1
            events += [ReasoningDelta(p) for p in pieces]
            # every Responses reasoning item ends as a block (deltas alone would come
            # back with the summary-only item the encoder must close them with)
            events.append(ReasoningBlock("openai", {
                "type": "reasoning", "summary": [], "encrypted_content": draw(text)}))
        elif kind == "block":  # an encrypted item with no readable summary
            events.append(ReasoningBlock("openai", {
                "id": f"rs_{draw(ident)}", "type": "reasoning", "summary": [], "encrypted_content": draw(text)}))
        elif kind in ("text", "refusal"):
            cls = TextDelta if kind == "text" else RefusalDelta
            events += [cls(p) for p in draw(st.lists(text, min_size=1, max_size=3))]
        else:
            n = draw(st.integers(min_value=1, max_value=3))
            indexes = list(range(calls, calls + n))
            calls += n
            events += [ToolCallStart(i, f"call_{draw(ident)}", draw(ident)) for i in indexes]
            # parallel calls' argument deltas may interleave
            deltas = [(i, p) for i in indexes for p in draw(st.lists(text, max_size=3))]
            order = draw(st.permutations(deltas))
            for i in indexes:  # but each call's own pieces keep their order
                mine = iter(p for j, p in deltas if j == i)
                order = [(j, next(mine)) if j == i else (j, p) for j, p in order]
            events += [ToolCallDelta(i, p) for i, p in order]
            events += [ToolCallEnd(i) for i in indexes]
    numbers = draw(st.tuples(*[st.integers(min_value=0, max_value=10**6)] * 4))
    events.append(UsageEvent(usage_in({
        "input_tokens": numbers[0], "input_tokens_details": {"cached_tokens": numbers[1]},
        "output_tokens": numbers[2], "output_tokens_details": {"reasoning_tokens": numbers[3]},
        "total_tokens": numbers[0] + numbers[2]})))
    if draw(st.booleans()) and not calls:
        events.append(Finish("length", "incomplete: max_output_tokens"))
    else:
        events.append(Finish("tool_calls" if calls else "stop", "completed"))
    return events


def _without_ids(events):
    return [ReasoningBlock(e.issuer, {k: v for k, v in e.block.items() if k != "id"})
            if isinstance(e, ReasoningBlock) else UsageEvent(_counts(e.usage)) if isinstance(e, UsageEvent)
            else e for e in events]


def _counts(usage):
    """Usage by its counts: ``raw`` is the upstream's own object, which the encoder rewrites
    from the counts (never copies: it may be another protocol's)."""
    return {k: v for k, v in usage.items() if k != "raw"}


@given(segments())
def test_stream_decoder_inverts_the_stream_encoder(events):
    encoder = responses.StreamEncoder(model="m", id="resp_prop")
    raw = b"".join(encoder.feed(e) for e in events) + encoder.close()
    assert _without_ids(_decode(raw)) == _without_ids(events)


# ------------------------------------------------------------------ non-stream
@st.composite
def completions(draw):
    blocks = [{"id": f"rs_{n}", "type": "reasoning", "encrypted_content": draw(text),
               "summary": [{"type": "summary_text", "text": t} for t in draw(st.lists(text, max_size=2))]}
              for n in range(draw(st.integers(min_value=0, max_value=2)))]
    events = []
    readable = [p["text"] for b in blocks for p in b["summary"]]
    if readable:
        events.append(ReasoningDelta("\n\n".join(readable)))
    events += [ReasoningBlock("openai", b) for b in blocks]
    if draw(st.booleans()):
        events.append(TextDelta(draw(text)))
    if draw(st.booleans()):
        events.append(RefusalDelta(draw(text)))
    calls = draw(st.lists(st.tuples(ident, ident, st.text(max_size=10)), max_size=3))
    for i, (cid, name, args) in enumerate(calls):
        events += [ToolCallStart(i, f"call_{cid}", name), ToolCallDelta(i, args), ToolCallEnd(i)]
    events.append(UsageEvent(usage_in({"input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
                                       "input_tokens_details": {"cached_tokens": 1},
                                       "output_tokens_details": {"reasoning_tokens": 2}})))
    length = draw(st.booleans()) and not calls
    events.append(Finish("length", "incomplete: max_output_tokens") if length
                  else Finish("tool_calls" if calls else "stop", "completed"))
    acc = Accumulator(model="gpt-x", id="resp_1")
    for e in events:
        acc.feed(e)
    return acc.result()


@given(completions())
def test_decode_response_inverts_encode_response(completion: Completion):
    again = responses.decode_response(json.dumps(responses.encode_response(completion)).encode())
    assert again.message == completion.message
    assert (again.finish_reason, _counts(again.usage), again.model, again.id) == (
        completion.finish_reason, _counts(completion.usage), completion.model, completion.id)


# ------------------------------------------------------------------ requests
@st.composite
def requests(draw):
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(text)})
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if draw(st.booleans()):
            messages.append({"role": "user", "content": draw(text)})
        else:
            messages.append({"role": "user", "content": [
                {"type": "text", "text": draw(text)},
                {"type": "image_url", "image_url": {"url": "https://x.test/" + draw(ident),
                                                    "detail": draw(st.sampled_from(["auto", "low", "high"]))}}]})
        calls = [{"id": f"call_{draw(ident)}_{n}", "type": "function",
                  "function": {"name": draw(ident), "arguments": json.dumps({"v": draw(text)})}}
                 for n in range(draw(st.integers(min_value=0, max_value=2)))]
        turn = {"role": "assistant", "content": draw(text) if not calls or draw(st.booleans()) else None}
        if calls:
            turn["tool_calls"] = calls
        if draw(st.booleans()):
            turn["reasoning_details"] = [{"issuer": "openai", "block": {
                "type": "reasoning", "encrypted_content": draw(text), "summary": []}}]
        messages.append(turn)
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": draw(text)} for c in calls]
    request = {"model": "gpt-x", "messages": messages}
    if draw(st.booleans()):
        request["tools"] = [{"type": "function", "function": {
            "name": draw(ident), "description": draw(text), "parameters": {"type": "object"},
            "strict": draw(st.booleans())}}]
        request["tool_choice"] = draw(st.sampled_from(["auto", "none", "required"]))
    if draw(st.booleans()):
        request["max_tokens"] = draw(st.integers(min_value=1, max_value=10**5))
    if draw(st.booleans()):
        request["temperature"] = draw(st.floats(min_value=0, max_value=2))
    return request


@given(requests())
def test_decode_request_inverts_encode_request(request):
    body = responses.encode_request(request, Target(PROFILE, model="gpt-x")).body
    again = responses.decode_request(body)
    extra = {"store": False}
    if any(m.get("reasoning_details") for m in request["messages"]):
        extra["include"] = ["reasoning.encrypted_content"]  # replayed reasoning asks for more
    expected = {**request, "metadata": {"source_api": "responses"}, "extra": extra}
    assert again == expected
