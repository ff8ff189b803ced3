"""The connection and body-shape faults: reset_before, empty_stream, json_answer,
as a raw HTTP client sees them, in each protocol."""

from __future__ import annotations

import time

import httpx
import pytest

from modelwire.emulator.faults import parse_header

from .conftest import anthropic_headers, openai_headers

ASK = [{"role": "user", "content": "Tell me about rivers"}]
CASES = {
    "chat": ("/v1/chat/completions", {"model": "emulator-1", "messages": ASK}, openai_headers),
    "messages": ("/v1/messages", {"model": "claude-sonnet-4-6", "max_tokens": 200,
                                  "messages": ASK}, anthropic_headers),
    "responses": ("/v1/responses", {"model": "gpt-5.5", "input": "Tell me about rivers"},
                  openai_headers),
}


def _post(http, case, *, stream):
    path, body, headers = CASES[case]
    return http.post(path, json=dict(body, stream=stream), headers=headers())


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("stream", [True, False])
def test_reset_before_drops_the_connection_without_a_status_line(emu, http, case, stream):
    emu.set_faults([{"fault": "reset_before", "requests": [1]}])
    with pytest.raises(httpx.RemoteProtocolError):
        _post(http, case, stream=stream)
    entry = emu.requests()["requests"][-1]
    assert entry["fault"] == "reset_before" and entry["aborted_by_fault"] is True
    assert entry["completed"] is False
    again = _post(http, case, stream=stream)  # only the first request was cut
    assert again.status_code == 200


@pytest.mark.parametrize("case", list(CASES))
def test_empty_stream_is_a_200_event_stream_with_no_event(emu, http, case):
    emu.set_faults([{"fault": "empty_stream"}])
    resp = _post(http, case, stream=True)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.content.strip() == b": no events"  # an SSE comment, no data line
    assert emu.requests()["requests"][-1]["completed"] is True


def test_empty_stream_on_a_json_request_is_an_empty_body(emu, http):
    emu.set_faults([{"fault": "empty_stream"}])
    resp = _post(http, "chat", stream=False)
    assert resp.status_code == 200 and resp.content == b""


@pytest.mark.parametrize(("case", "marker"), [("chat", "chat.completion"),
                                              ("messages", "message"),
                                              ("responses", "response")])
def test_json_answer_ignores_stream_true(emu, http, case, marker):
    emu.set_faults([{"fault": "json_answer"}])
    resp = _post(http, case, stream=True)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert body.get("object", body.get("type")) == marker
    assert emu.requests()["requests"][-1]["stream"] is True  # the request did ask for a stream


def test_new_faults_filter_by_model_and_parse_from_the_header(emu, http):
    emu.set_faults([{"fault": "empty_stream", "model": "other-model"}])
    assert _post(http, "chat", stream=True).content.count(b"data:") > 1  # not our model
    assert parse_header("reset_before").fault == "reset_before"
    path, body, headers = CASES["chat"]
    resp = http.post(path, json=dict(body, stream=True),
                     headers=dict(headers(), **{"x-emulator-fault": "json_answer"}))
    assert resp.headers["content-type"].startswith("application/json")


def test_stall_sends_some_events_then_goes_silent(emu):
    emu.set_faults([{"fault": "stall", "after": 2, "seconds": 5}])
    path, body, headers = CASES["chat"]
    with httpx.Client(base_url=emu.base_url, timeout=httpx.Timeout(5.0, read=0.3)) as http:
        got = []
        with pytest.raises(httpx.ReadTimeout), http.stream(
                "POST", path, json=dict(body, stream=True), headers=headers()) as resp:
            got.extend(resp.iter_raw())
    assert resp.status_code == 200
    assert b"".join(got).count(b"data:") == 2  # exactly ``after`` events before the silence
    deadline = time.monotonic() + 5
    while not emu.requests()["requests"][-1]["disconnected"] and time.monotonic() < deadline:
        time.sleep(0.01)  # bounded poll: the emulator notices the client hanging up
    assert emu.requests()["requests"][-1]["chunks_sent"] == 2


def test_the_log_names_the_clients_port_so_connection_reuse_is_observable(emu, http):
    for _ in range(2):
        _post(http, "chat", stream=False)
    first, second = emu.requests()["requests"][-2:]
    assert isinstance(first["client_port"], int)
    assert first["client_port"] == second["client_port"]  # one keep-alive connection
