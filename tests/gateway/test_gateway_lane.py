"""The same-protocol lane: the client's bytes go upstream with only the model replaced, and the
upstream's bytes come back untouched; failures a retry can fix go to the translating path."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.config import load_config
from modelwire.gateway.lane import replace_model
from modelwire.gateway.testing import RunningGateway

KEY = "lane-gw-key-0123456789"


@pytest.fixture(scope="module")
def lgw(emulator, tmp_path_factory):
    path = tmp_path_factory.mktemp("lane") / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  claude: {{provider: anthropic, model: claude-sonnet-4-5, base_url: \"{emulator.anthropic_base_url('anthropic')}\", api_key_env: LANE_ANTHROPIC_KEY}}\n"
        f"  gpt: {{provider: openai, model: gpt-5-mini, base_url: \"{emulator.openai_base_url()}\", api_key_env: LANE_OPENAI_KEY}}\n"
        f"  gpt-r: {{provider: openai, model: gpt-5-mini, api_mode: responses, base_url: \"{emulator.openai_base_url('openai')}\", api_key_env: LANE_OPENAI_KEY}}\n"
        f"  gpt-strict: {{provider: openai, model: gpt-5-mini, base_url: \"{emulator.openai_base_url('openai')}\", api_key_env: LANE_OPENAI_KEY}}\n"
        "gateway: {keys_env: LANE_KEYS}\n"
    )
    import os

    os.environ["LANE_ANTHROPIC_KEY"] = "sk-ant-lane-test"
    os.environ["LANE_OPENAI_KEY"] = "sk-lane-test"
    with RunningGateway(load_config(str(path)), environ={"LANE_KEYS": KEY}) as gw:
        yield gw


def _since(emulator) -> int:
    reqs = emulator.requests()["requests"]
    return reqs[-1]["n"] if reqs else 0


def _after(emulator, n):
    return [r for r in emulator.requests()["requests"] if r["n"] > n]


def test_replace_model_touches_only_the_top_level_model_value():
    raw = b'{"messages":[{"role":"user","content":"\\"model\\": \\"x\\"","model":"inner"}],  "model" :  "claude-sonnet-4-6","z":1}'
    out = replace_model(raw, "claude-sonnet-4-5-20250929")
    assert out == raw.replace(b'"claude-sonnet-4-6"', b'"claude-sonnet-4-5-20250929"')
    assert replace_model(b'{"messages": []}', "m") == b'{"messages": []}'


def test_replace_model_with_an_escaped_key_and_a_nested_decoy():
    # the fast path tries the nested "model" first, sees the top level unchanged, and
    # the tokenizer then finds the top-level key spelled with an escape
    raw = b'{"x": {"model": "b"}, "mod\\u0065l": "a"}'
    assert replace_model(raw, "N") == b'{"x": {"model": "b"}, "mod\\u0065l": "N"}'


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["model", "messages", "content", "x"]), inner, max_size=3),
    max_leaves=12)


@settings(max_examples=300)
@given(before=st.dictionaries(st.sampled_from(["messages", "tools", "a"]), _json, max_size=3),
       after=st.dictionaries(st.sampled_from(["stream", "z"]), _json, max_size=2),
       old=st.text(max_size=10), new=st.text(min_size=1, max_size=10), indent=st.booleans())
def test_replace_model_changes_exactly_the_top_level_value(before, after, old, new, indent):
    import json

    body = {**before, "model": old, **after}
    raw = json.dumps(body, indent=2 if indent else None).encode()
    out = replace_model(raw, new)
    if old == new:
        assert out == raw
        return
    assert orjson.loads(out) == {**body, "model": new}
    # only the value's bytes changed: the rest (whitespace, key order, escapes) is the client's
    old_tok, new_tok = json.dumps(old).encode(), orjson.dumps(new)
    spans = [i for i in range(len(raw)) if raw.startswith(old_tok, i)]
    assert out in {raw[:i] + new_tok + raw[i + len(old_tok):] for i in spans}


@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
def test_anthropic_bytes_pass_through_and_thinking_round_trips(lgw, emulator_clean, stream):
    body = {"metadata": {"user_id": "u1"}, "max_tokens": 4096, "model": "claude",
            "thinking": {"type": "enabled", "budget_tokens": 2048}, "stream": stream,
            "tools": [{"name": "calculator", "description": "Evaluate arithmetic",
                       "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}}}}],
            "messages": [{"role": "user", "content": "What is 17 times 23?"}]}
    raw = json.dumps(body, separators=(",", ":")).encode()
    n = _since(emulator_clean)
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json",
               "anthropic-beta": "interleaved-thinking-2025-05-14"}
    r = httpx.post(lgw.base_url + "/v1/messages", content=raw, headers=headers, timeout=30)
    assert r.status_code == 200 and r.headers["x-modelwire-lane"] == "passthrough"
    upstream = _after(emulator_clean, n)[-1]
    assert list(upstream["body"]) == list(body)  # key order as the client sent it
    assert upstream["body"] == {**body, "model": "claude-sonnet-4-5"}
    assert upstream["headers"]["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert upstream["headers"]["x-api-key"] != KEY  # the gateway's own key went upstream
    if stream:
        assert r.text.startswith("event: message_start") and "event: message_stop" in r.text
    # the thinking signature the upstream issued comes back to it byte-exact
    client = anthropic.Anthropic(base_url=lgw.base_url, api_key=KEY, max_retries=0)
    first = client.messages.create(**{k: v for k, v in body.items() if k != "stream"})
    use = next(b for b in first.content if b.type == "tool_use")
    second = client.messages.create(
        **{k: v for k, v in body.items() if k not in ("stream", "messages")},
        messages=body["messages"] + [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "391"}]}])
    assert "391" in second.content[-1].text


def test_chat_stream_passes_through_with_done(lgw):
    r = httpx.post(lgw.base_url + "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                   json={"model": "gpt", "stream": True, "messages": [{"role": "user", "content": "hi"}]}, timeout=30)
    assert r.headers["x-modelwire-lane"] == "passthrough"
    assert r.text.rstrip().endswith("data: [DONE]")


def test_several_choices_and_logprobs_ride_the_lane_as_sent(lgw, emulator_clean):
    # refused where a translation would drop them, forwarded as they are on the lane
    n = _since(emulator_clean)
    body = {"model": "gpt", "n": 2, "logprobs": True, "top_logprobs": 2,
            "messages": [{"role": "user", "content": "hi"}]}
    r = httpx.post(lgw.base_url + "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                   json=body, timeout=30)
    assert r.status_code == 200 and r.headers["x-modelwire-lane"] == "passthrough"
    assert _after(emulator_clean, n)[-1]["body"] == {**body, "model": "gpt-5-mini"}


def test_a_setting_the_model_refuses_leaves_the_lane_for_the_ladder_then_skips_it(lgw, emulator_clean):
    # gpt-5-mini answers 400 unsupported_value to temperature 0.2: the lane hands the
    # request to the translating path, which leaves it out (the lane told the Client); the next
    # such request goes straight there (no lane attempt to be refused again)
    body = {"model": "gpt-strict", "temperature": 0.2, "messages": [{"role": "user", "content": "hi"}]}
    n = _since(emulator_clean)
    first = httpx.post(lgw.base_url + "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                       json=body, timeout=30)
    assert first.status_code == 200 and "x-modelwire-lane" not in first.headers
    assert [("temperature" in r["body"]) for r in _after(emulator_clean, n)] == [True, False]
    n = _since(emulator_clean)
    second = httpx.post(lgw.base_url + "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                        json=body, timeout=30)
    assert second.status_code == 200 and second.json()["choices"][0]["message"]["content"]
    assert [("temperature" in r["body"]) for r in _after(emulator_clean, n)] == [False]


def test_responses_with_replayed_ids_are_translated_not_forwarded(lgw):
    client = openai.OpenAI(base_url=lgw.base_url + "/v1", api_key=KEY, max_retries=0)
    first = client.responses.with_raw_response.create(model="gpt-r", input="What is 6 times 7?")
    assert first.headers["x-modelwire-lane"] == "passthrough"
    items = [i.model_dump(exclude_none=True) for i in first.parse().output]
    second = client.responses.with_raw_response.create(
        model="gpt-r", input=[{"role": "user", "content": "What is 6 times 7?"}, *items,
                               {"role": "user", "content": "thanks"}])
    assert "x-modelwire-lane" not in second.headers and second.parse().output_text


def test_caller_errors_come_back_in_the_door_shape(lgw, emulator_clean):
    r = httpx.post(lgw.base_url + "/v1/messages", headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
                   json={"model": "claude", "max_tokens": 100, "messages": [{"role": "assistant", "content": ""},
                                                                             {"role": "user", "content": "hi"}]},
                   timeout=30)
    assert r.status_code == 400 and r.json()["type"] == "error"


def test_a_rate_limit_in_the_lane_is_handed_to_the_ladder(lgw, emulator_clean):
    emulator_clean.set_faults([{"fault": "rate_limit", "model": "gpt-5-mini", "times": 1, "retry_after": 0.05,
                                "retry_after_form": "ms"}])
    r = httpx.post(lgw.base_url + "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"},
                   json={"model": "gpt", "messages": [{"role": "user", "content": "hi"}]}, timeout=60)
    assert r.status_code == 200, r.text
    assert "x-modelwire-lane" not in r.headers  # served by the translating path after the 429
    assert r.headers["x-modelwire-attempts"] == "2"  # the lane's try counts


@pytest.mark.parametrize("spelling", [b"mwseal1.", b"mwseal1\\u002e", b"\\u006dwseal1.", b"mwSEAL1."])
def test_a_sealed_signature_never_rides_the_lane_however_it_is_spelled(lgw, emulator_clean, spelling):
    # the gateway's own envelopes must be opened (or dropped) before anything goes
    # upstream; JSON may spell any character of one as a \u escape, so a byte search for
    # the plain prefix alone would let an escaped envelope through the lane verbatim
    thinking = b'{"type":"thinking","thinking":"earlier","signature":"' + spelling + b'AAAAbogus"}'
    raw = (b'{"model":"claude","max_tokens":256,"messages":[{"role":"user","content":"hi"},'
           b'{"role":"assistant","content":[' + thinking + b',{"type":"text","text":"hello"}]},'
           b'{"role":"user","content":"again"}]}')
    n = _since(emulator_clean)
    r = httpx.post(lgw.base_url + "/v1/messages", content=raw, timeout=30,
                   headers={"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"})
    assert r.status_code == 200, r.text
    sent = [json.dumps(req["body"]) for req in _after(emulator_clean, n)]
    if spelling == b"mwSEAL1.":  # not the prefix (it is case-sensitive): the client's own bytes
        assert "mwSEAL1.AAAAbogus" in sent[0]  # went out as sent (the upstream judges it)
    else:  # opened, found foreign, dropped: translated, and nothing of it ever upstream
        assert "x-modelwire-lane" not in r.headers and r.headers["x-modelwire-attempts"] == "1"
        assert len(sent) == 1 and "mwseal1" not in sent[0] and "AAAAbogus" not in sent[0]


def test_an_envelope_echoed_at_the_responses_door_is_translated_not_forwarded(lgw, emulator_clean):
    from modelwire.gateway.seal import Sealer

    # a genuine envelope of this gateway (its secret is per process: a foreign one here)
    envelope = Sealer("another-secret-of-enough-size").seal("deepseek", {"type": "reasoning_content", "text": "t"})
    body = {"model": "gpt-r", "input": [
        {"role": "user", "content": "hi"}, {"type": "reasoning", "summary": [], "encrypted_content": envelope},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
        {"role": "user", "content": "again"}]}
    n = _since(emulator_clean)
    r = httpx.post(lgw.base_url + "/v1/responses", json=body, headers={"authorization": f"Bearer {KEY}"}, timeout=30)
    assert r.status_code == 200, r.text
    assert "x-modelwire-lane" not in r.headers
    sent = [json.dumps(req["body"]) for req in _after(emulator_clean, n)]
    assert len(sent) == 1 and "mwseal1" not in sent[0]


def test_the_prefix_in_a_clients_own_text_still_rides_the_lane(lgw, emulator_clean):
    # only reasoning the gateway sealed needs opening: the same letters in a message's
    # text (or a tool's description) are the client's, forwarded as sent
    body = {"model": "claude", "max_tokens": 64, "messages": [
        {"role": "user", "content": "what does mwseal1.AAAA mean?"},
        {"role": "assistant", "content": [{"type": "text", "text": "a prefix: mwseal1."}]},
        {"role": "user", "content": "and mwseal1.x?"}]}
    n = _since(emulator_clean)
    r = httpx.post(lgw.base_url + "/v1/messages", content=json.dumps(body).encode(), timeout=30,
                   headers={"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"})
    assert r.headers.get("x-modelwire-lane") == "passthrough", r.text
    assert _after(emulator_clean, n)[0]["body"]["messages"] == body["messages"]


def test_content_only_the_lane_carries_beside_an_envelope_is_refused_not_forwarded(lgw, emulator_clean):
    # the door could not decode it, so the bytes are searched (escapes too): an envelope
    # there can be neither opened nor forwarded
    thinking = b'{"type":"thinking","thinking":"t","signature":"\\u006dwseal1.AAAAbogus"}'
    raw = (b'{"model":"claude","max_tokens":64,"messages":[{"role":"user","content":"hi"},'
           b'{"role":"assistant","content":[' + thinking + b',{"type":"text","text":"x"}]},'
           b'{"role":"user","content":[{"type":"search_result","source":"s","title":"t",'
           b'"content":[{"type":"text","text":"x"}]},{"type":"text","text":"q"}]}]}')
    n = _since(emulator_clean)
    r = httpx.post(lgw.base_url + "/v1/messages", content=raw, timeout=30,
                   headers={"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"})
    assert r.status_code == 400 and "cannot be expressed" in r.json()["error"]["message"]
    assert _after(emulator_clean, n) == []


@pytest.mark.parametrize("block", [
    {"type": "search_result", "source": "https://example.test/a", "title": "A",
     "content": [{"type": "text", "text": "a fact"}]},
    {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "a page"}]}},
])
def test_blocks_the_internal_model_cannot_carry_still_ride_the_lane(lgw, emulator_clean, block):
    # the lane forwards the client's bytes, so a block modelwire has no internal form for
    # (Anthropic's search results, custom-content documents) goes through untouched
    # rather than being refused; where the request would need translating it still is
    body = {"model": "claude", "max_tokens": 256,
            "messages": [{"role": "user", "content": [block, {"type": "text", "text": "what does it say?"}]}]}
    raw = json.dumps(body).encode()
    n = _since(emulator_clean)
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"}
    r = httpx.post(lgw.base_url + "/v1/messages", content=raw, headers=headers, timeout=30)
    upstream = _after(emulator_clean, n)
    assert len(upstream) == 1 and upstream[0]["body"]["messages"] == body["messages"]
    assert r.headers.get("x-modelwire-lane") == "passthrough"
    assert r.status_code == 200 or r.json()["type"] == "error"  # the upstream's answer, whatever it is
    # to an upstream of another protocol it has to be translated: refused, as before
    n = _since(emulator_clean)
    other = httpx.post(lgw.base_url + "/v1/messages", headers=headers, timeout=30,
                       content=json.dumps({**body, "model": "gpt"}).encode())
    assert other.status_code == 400 and other.json()["type"] == "error"
    assert "cannot be expressed" in other.json()["error"]["message"]
    assert _after(emulator_clean, n) == []


def test_counting_tokens_of_content_the_internal_model_cannot_carry_is_still_refused(lgw):
    body = {"model": "claude", "messages": [{"role": "user", "content": [
        {"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "x"}]}]}]}
    r = httpx.post(lgw.base_url + "/v1/messages/count_tokens", json=body, timeout=30,
                   headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})
    assert r.status_code == 400 and "cannot be expressed" in r.json()["error"]["message"]


def test_a_lane_failure_for_content_only_the_lane_can_carry_is_the_upstreams_answer(lgw, emulator_clean):
    # the translating path cannot serve it, so a rate limit is not handed over to it
    # (which would answer 400 for the content): the client gets the 429 to retry
    emulator_clean.set_faults([{"fault": "rate_limit", "model": "claude-sonnet-4-5", "times": 1,
                                "retry_after": 1}])
    body = {"model": "claude", "max_tokens": 64, "messages": [{"role": "user", "content": [
        {"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "x"}]},
        {"type": "text", "text": "q"}]}]}
    r = httpx.post(lgw.base_url + "/v1/messages", json=body, timeout=30,
                   headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})
    assert r.status_code == 429 and r.json()["type"] == "error"
    assert r.json()["error"]["type"] == "rate_limit_error"


def test_responses_content_without_a_chat_form_rides_the_responses_lane(lgw, emulator_clean):
    # an image by file id has no Chat Completions form (the internal model's), but an
    # OpenAI Responses upstream reads it as sent
    body = {"model": "gpt-r", "input": [{"role": "user", "content": [
        {"type": "input_image", "file_id": "file-abc"}, {"type": "input_text", "text": "what is it?"}]}]}
    n = _since(emulator_clean)
    r = httpx.post(lgw.base_url + "/v1/responses", json=body, headers={"authorization": f"Bearer {KEY}"},
                   timeout=30)
    sent = _after(emulator_clean, n)
    assert len(sent) == 1 and sent[0]["body"]["input"] == body["input"]
    assert r.headers.get("x-modelwire-lane") == "passthrough"


@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
def test_lane_overhead_header_counts_the_gateways_time_not_the_upstreams(lgw, emulator_clean, stream):
    # the upstream holds its answer 0.4 s: the request takes that long, the lane's
    # x-modelwire-overhead-ms (its time before the send, and after the answer) does not
    import time

    emulator_clean.set_faults([{"fault": "hang", "model": "gpt-5-mini", "seconds": 0.4, "times": 1}])
    started = time.perf_counter()
    with httpx.stream("POST", lgw.base_url + "/v1/chat/completions",
                      json={"model": "gpt", "messages": [{"role": "user", "content": "hello"}], "stream": stream},
                      headers={"authorization": f"Bearer {KEY}"}, timeout=10) as resp:
        resp.read()
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert resp.status_code == 200 and resp.headers["x-modelwire-lane"] == "passthrough"
    assert elapsed_ms >= 400
    assert 0 < float(resp.headers["x-modelwire-overhead-ms"]) < 150, resp.headers["x-modelwire-overhead-ms"]


def test_lane_overhead_header_counts_its_time_before_the_send_and_after_the_answer(lgw, emulator_clean, monkeypatch):
    # gateway time on both sides of the upstream's wait, made long on purpose: building
    # the forwarded request (before the send) 0.15 s, settling the credential after the
    # answer 0.2 s; a header that left out either side would read under 0.35 s. A stream's
    # header goes out before its answer, so there only the time before the send counts.
    import time

    from modelwire.gateway import lane

    original_replace, original_succeeded = lane.replace_model, lane.Forward.succeeded

    def slow_replace(*args, **kwargs):
        time.sleep(0.15)
        return original_replace(*args, **kwargs)

    def slow_succeeded(self):
        time.sleep(0.2)
        return original_succeeded(self)

    monkeypatch.setattr(lane, "replace_model", slow_replace)
    monkeypatch.setattr(lane.Forward, "succeeded", slow_succeeded)
    for stream, least in ((False, 350), (True, 150)):
        with httpx.stream("POST", lgw.base_url + "/v1/chat/completions",
                          json={"model": "gpt", "messages": [{"role": "user", "content": "hello"}], "stream": stream},
                          headers={"authorization": f"Bearer {KEY}"}, timeout=10) as resp:
            resp.read()
        assert resp.status_code == 200 and resp.headers["x-modelwire-lane"] == "passthrough"
        overhead = float(resp.headers["x-modelwire-overhead-ms"])
        assert least <= overhead < least + 150, (stream, overhead)
