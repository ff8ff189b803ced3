"""Each fault, set on the emulator (control endpoint or API) or sent in the
``x-emulator-fault`` header, and what a client observes."""

from __future__ import annotations

import email.utils
import json
import time

import anthropic
import httpx
import openai
import pytest

from modelwire.codecs.sse import SSEDecoder
from modelwire.emulator import Emulator
from modelwire.errors import ProtocolError

from .conftest import KEY, anthropic_headers, openai_headers

CHAT = {"model": "emulator-1", "messages": [{"role": "user", "content": "Tell me about rivers"}]}
MSG = {"model": "claude-sonnet-4-6", "max_tokens": 500,
       "messages": [{"role": "user", "content": "Tell me about rivers"}]}


def _wait_for(predicate, timeout=10.0):
    """Poll observable state, bounded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not reached")


def _last_entry(emu):
    return emu.requests()["requests"][-1]


# ----------------------------------------------------------------- error faults
@pytest.mark.parametrize(("fault", "status", "anthropic_type", "openai_type"), [
    ("quota", 402, "billing_error", "insufficient_quota"),
    ("server_error", 500, "api_error", "server_error"),
    ("unavailable", 503, "api_error", "server_error"),
    ("overloaded", 529, "overloaded_error", "overloaded_error"),
    ("unauthorized", 401, "authentication_error", "invalid_request_error"),
    ("rate_limit", 429, "rate_limit_error", "requests"),
])
def test_error_fault_in_each_protocols_shape(emu, http, fault, status, anthropic_type, openai_type):
    emu.set_faults([{"fault": fault}])
    a = http.post("/v1/messages", json=MSG, headers=anthropic_headers())
    assert a.status_code == status
    assert a.json()["type"] == "error" and a.json()["error"]["type"] == anthropic_type
    o = http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
    assert o.status_code == status
    assert o.json()["error"]["type"] == openai_type


@pytest.mark.parametrize("form", ["seconds", "ms", "http_date", "none"])
def test_rate_limit_retry_after_forms(emu, http, form):
    emu.set_faults([{"fault": "rate_limit", "retry_after": 3, "retry_after_form": form}])
    o = http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
    a = http.post("/v1/messages", json=MSG, headers=anthropic_headers())
    assert o.status_code == a.status_code == 429
    if form == "seconds":
        assert o.headers["retry-after"] == "3"
    elif form == "ms":
        assert o.headers["retry-after-ms"] == "3000" and "retry-after" not in o.headers
    elif form == "http_date":
        when = email.utils.parsedate_to_datetime(o.headers["retry-after"]).timestamp()
        assert abs(when - (time.time() + 3)) < 60
    else:
        assert "retry-after" not in o.headers and "retry-after-ms" not in o.headers
    assert o.headers["x-ratelimit-remaining-requests"] == "0"
    assert o.headers["x-ratelimit-reset-requests"] == "3s"
    assert a.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert a.headers["anthropic-ratelimit-requests-reset"].endswith("Z")


def test_sdk_sees_rate_limit_with_retry_after(emu):
    emu.set_faults([{"fault": "rate_limit", "retry_after": 2}])
    client = anthropic.Anthropic(base_url=emu.anthropic_base_url(), api_key=KEY, max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as info:
        client.messages.create(**MSG)
    assert info.value.response.headers["retry-after"] == "2"


# ------------------------------------------------------------------- matching
def test_fault_filters_and_request_numbers(emu, http):
    emu.set_faults([{"fault": "server_error", "endpoint": "chat_completions", "profile": "groq",
                     "requests": [2]}])
    path = "/p/groq/v1/chat/completions"
    statuses = [http.post(path, json=CHAT, headers=openai_headers()).status_code for _ in range(3)]
    assert statuses == [200, 500, 200]
    assert http.post("/v1/chat/completions", json=CHAT, headers=openai_headers()).status_code == 200
    assert http.post("/p/groq/v1/messages", json=MSG, headers=anthropic_headers()).status_code == 200


def test_fault_rate_and_times_are_deterministic(emu, http):
    emu.set_faults([{"fault": "overloaded", "rate": 0.5, "times": 2, "model": "emulator-1"}])
    statuses = [http.post("/v1/chat/completions", json=CHAT, headers=openai_headers()).status_code
                for _ in range(6)]
    assert statuses == [200, 529, 200, 529, 200, 200]


def test_control_endpoint_sets_lists_and_clears_faults(emu, http):
    r = http.post("/__emulator/faults", json=[{"fault": "quota", "endpoint": "responses"}])
    assert r.status_code == 200 and r.json()["faults"][0]["fault"] == "quota"
    body = {"model": "gpt-5.5", "input": "hi"}
    assert http.post("/v1/responses", json=body, headers=openai_headers()).status_code == 402
    assert http.get("/__emulator/faults").json()["faults"][0]["fired"] == 1
    assert http.delete("/__emulator/faults").status_code == 204
    assert http.post("/v1/responses", json=body, headers=openai_headers()).status_code == 200


def test_control_endpoint_rejects_unknown_fault(http):
    r = http.post("/__emulator/faults", json={"fault": "meteor"})
    assert r.status_code == 400 and "unknown fault" in r.json()["error"]


@pytest.mark.parametrize("header", ['{"fault": "server_error"}', "server_error",
                                    "rate_limit;retry_after=4"])
def test_fault_header_for_direct_callers(http, header):
    r = http.post("/v1/chat/completions", json=CHAT,
                  headers=openai_headers(**{"x-emulator-fault": header}))
    assert r.status_code in (500, 429)
    if "retry_after=4" in header:
        assert r.headers["retry-after"] == "4"


def test_bad_fault_header_is_a_400(http):
    r = http.post("/v1/chat/completions", json=CHAT,
                  headers=openai_headers(**{"x-emulator-fault": "meteor"}))
    assert r.status_code == 400 and "x-emulator-fault" in r.json()["error"]["message"]


# ------------------------------------------------------------------ stream faults
def _stream(http, headers, path="/v1/messages", body=MSG):
    return http.post(path, json=dict(body, stream=True), headers=headers)


def test_close_mid_stream_drops_the_connection(emu, http):
    emu.set_faults([{"fault": "close_mid_stream", "after": 3}])
    with pytest.raises(httpx.RemoteProtocolError):
        _stream(http, anthropic_headers())
    entry = _wait_for(lambda: (e := _last_entry(emu)).get("aborted_by_fault") and e)
    assert entry["chunks_sent"] == 3 and entry["completed"] is False


def test_malformed_sse_line_inside_the_stream(emu, http):
    emu.set_faults([{"fault": "malformed_sse", "after": 2}])
    r = _stream(http, anthropic_headers())
    events = SSEDecoder().feed(r.content)
    bad = [e for e in events if e.data.startswith('{"type": "content_block_delta", "index": 0, "del')]
    assert len(bad) == 1
    with pytest.raises(ValueError):
        json.loads(bad[0].data)
    assert events[-1].event == "message_stop"  # the stream goes on after the bad line


def test_invalid_utf8_inside_the_stream(emu, http):
    emu.set_faults([{"fault": "invalid_utf8", "after": 1}])
    r = _stream(http, openai_headers(), "/v1/chat/completions", CHAT)
    assert b"\xff\xfe\xfd" in r.content
    with pytest.raises(ProtocolError):
        SSEDecoder().feed(r.content)


def test_error_event_inside_a_200_stream_anthropic(emu):
    emu.set_faults([{"fault": "stream_error", "after": 3}])
    client = anthropic.Anthropic(base_url=emu.anthropic_base_url(), api_key=KEY, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as info, client.messages.stream(**MSG) as stream:
        for _ in stream:
            pass
    assert "Overloaded" in str(info.value)


def test_error_event_inside_a_200_stream_chat(emu):
    emu.set_faults([{"fault": "stream_error", "after": 2}])
    client = openai.OpenAI(base_url=emu.openai_base_url(), api_key=KEY, max_retries=0)
    with pytest.raises(openai.APIError, match="server had an error"):
        for _ in client.chat.completions.create(stream=True, **CHAT):
            pass


def test_error_event_inside_a_200_stream_responses(emu, http):
    emu.set_faults([{"fault": "stream_error", "after": 2}])
    r = _stream(http, openai_headers(), "/v1/responses", {"model": "gpt-5.5", "input": "hi"})
    events = SSEDecoder().feed(r.content)
    assert r.status_code == 200
    assert [e.event for e in events] == ["response.created", "response.in_progress", "error"]
    assert json.loads(events[-1].data)["code"] == "server_error"


def test_slow_chunks_and_a_client_that_leaves_is_logged(emu, http):
    emu.set_faults([{"fault": "slow_chunks", "seconds": 2.0}])
    with http.stream("POST", "/v1/chat/completions", json=dict(CHAT, stream=True),
                     headers=openai_headers()) as r:
        first = next(r.iter_raw())
        assert first.startswith(b"data: ")
    entry = _wait_for(lambda: (e := _last_entry(emu))["disconnected"] and e)
    assert entry["completed"] is False and entry["disconnected_at"] is not None


def test_slow_chunks_still_deliver_everything(emu, http):
    emu.set_faults([{"fault": "slow_chunks", "seconds": 0.01}])
    r = _stream(http, openai_headers(), "/v1/chat/completions", CHAT)
    assert r.text.endswith("data: [DONE]\n\n")
    assert _last_entry(emu)["completed"] is True


def test_hang_before_first_byte_and_the_client_giving_up_is_logged(emu):
    emu.set_faults([{"fault": "hang", "seconds": 30}])
    timeout = httpx.Timeout(5, read=0.3)
    with httpx.Client(base_url=emu.base_url, timeout=timeout) as client, \
            pytest.raises(httpx.ReadTimeout):
        client.post("/v1/messages", json=MSG, headers=anthropic_headers())
    entry = _wait_for(lambda: (e := _last_entry(emu))["disconnected"] and e)
    assert entry.get("chunks_sent") == 0


def test_hang_is_bounded_by_max_hang():
    with Emulator(max_hang=0.05) as emu:
        emu.set_faults([{"fault": "hang", "seconds": 3600}])
        r = httpx.post(emu.base_url + "/v1/chat/completions", json=CHAT,
                       headers=openai_headers(), timeout=30)
        assert r.status_code == 200


def test_stream_faults_also_cut_plain_json_bodies(emu, http):
    emu.set_faults([{"fault": "close_mid_stream"}])
    with pytest.raises(httpx.RemoteProtocolError):
        http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
