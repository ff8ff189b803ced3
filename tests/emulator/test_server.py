"""Keys, profiles, script mode, the request log and the public pytest fixture."""

from __future__ import annotations

import json

import httpx
import pytest

from modelwire.emulator import Emulator
from modelwire.emulator.script import load_script

from .conftest import KEY, anthropic_headers, openai_headers

CHAT = {"model": "emulator-1", "messages": [{"role": "user", "content": "hi"}]}
MSG = {"model": "claude-sonnet-4-6", "max_tokens": 100,
       "messages": [{"role": "user", "content": "hi"}]}


def test_fixture_yields_a_running_lenient_emulator(emulator):
    assert emulator.base_url.startswith("http://127.0.0.1:")
    assert emulator.openai_base_url() == emulator.base_url + "/v1"
    assert emulator.openai_base_url("deepseek") == emulator.base_url + "/p/deepseek/v1"
    assert emulator.anthropic_base_url("anthropic") == emulator.base_url + "/p/anthropic"
    assert httpx.get(emulator.base_url + "/v1/models",
                     headers=openai_headers()).json()["object"] == "list"


def test_missing_key_is_401_in_each_protocols_shape(http):
    a = http.post("/v1/messages", json=MSG, headers={"anthropic-version": "2023-06-01"})
    assert a.status_code == 401
    assert a.json()["error"] == {"type": "authentication_error",
                                 "message": "x-api-key header is required"}
    o = http.post("/v1/chat/completions", json=CHAT)
    assert o.status_code == 401 and o.json()["error"]["type"] == "invalid_request_error"


def test_keys_restrict_access():
    with Emulator(keys=["k-allowed-000001"]) as emu, httpx.Client(base_url=emu.base_url) as http:
        bad = http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_api_key"
        assert KEY not in bad.text  # the key is masked in the message
        good = http.post("/v1/chat/completions", json=CHAT,
                         headers={"authorization": "Bearer k-allowed-000001"})
        assert good.status_code == 200
        a = http.post("/v1/messages", json=MSG, headers=anthropic_headers())
        assert a.status_code == 401 and a.json()["error"]["message"] == "invalid x-api-key"


def test_unknown_profile_is_404(http):
    r = http.post("/p/nonesuch/v1/chat/completions", json=CHAT, headers=openai_headers())
    assert r.status_code == 404 and "unknown emulator profile" in r.json()["error"]["message"]


def test_unknown_default_profile_is_refused():
    with pytest.raises(ValueError, match="unknown emulator profile"):
        Emulator(profile="nonesuch")


def test_request_log_masks_secrets_and_keeps_the_body(emu, http):
    emu.reset()
    http.post("/p/kimi/v1/chat/completions", json=CHAT, headers=openai_headers())
    snap = emu.requests()
    (entry,) = snap["requests"]
    assert entry["path"] == "/p/kimi/v1/chat/completions"
    assert entry["profile"] == "kimi" and entry["model"] == "emulator-1"
    assert entry["body"] == CHAT and entry["status"] == 200 and entry["completed"] is True
    assert KEY not in json.dumps(snap) and entry["headers"]["authorization"].startswith("Bearer")
    assert snap["counters"]["endpoints"] == {"chat_completions": 1}
    assert http.get("/__emulator/requests").json()["requests"][0]["n"] == entry["n"]
    assert http.delete("/__emulator/requests").status_code == 204
    assert emu.requests()["requests"] == []


def test_script_replays_responses_in_order_in_every_protocol(emu, http):
    emu.set_script([
        {"text": "scripted hello"},
        {"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]},
        {"reasoning": "pondering", "text": "42"},
        {"status": 429, "error": {"type": "rate_limit_error", "message": "slow down"},
         "headers": {"retry-after": "7"}},
    ])
    one = http.post("/v1/chat/completions", json=CHAT, headers=openai_headers()).json()
    assert one["choices"][0]["message"]["content"] == "scripted hello"
    two = http.post("/v1/messages", json=MSG, headers=anthropic_headers()).json()
    assert two["content"][0] == {"type": "tool_use", "id": two["content"][0]["id"],
                                 "name": "lookup", "input": {"q": "x"}}
    assert two["stop_reason"] == "tool_use"
    three = http.post("/v1/responses", json={"model": "gpt-5.5", "input": "hi"},
                      headers=openai_headers()).json()
    assert [i["type"] for i in three["output"]] == ["reasoning", "message"]
    four = http.post("/v1/messages", json=MSG, headers=anthropic_headers())
    assert four.status_code == 429 and four.headers["retry-after"] == "7"
    assert four.json()["error"] == {"type": "rate_limit_error", "message": "slow down"}
    five = http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
    assert five.status_code == 500 and "script exhausted" in five.json()["error"]["message"]


def test_script_still_enforces_the_rules(emu, http):
    emu.set_script([{"text": "never sent"}])
    r = http.post("/v1/messages", json={"model": "claude-sonnet-4-6", "messages": MSG["messages"]},
                  headers=anthropic_headers())
    assert r.status_code == 400
    assert emu.backend.script.remaining == 1


def test_script_file_errors_name_the_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"text": "ok"}\n# comment\n\n{"txt": "typo"}\n')
    with pytest.raises(ValueError, match=r"s.jsonl:4: unknown keys txt"):
        load_script(path)
    path.write_text('{"text": "ok"}\n{"status": 503}\n')
    assert load_script(path).remaining == 2


def test_script_from_file_through_the_emulator(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"text": "from file", "finish_reason": "length"}\n')
    with Emulator(script=path) as emu:
        r = httpx.post(emu.openai_base_url() + "/chat/completions", json=CHAT,
                       headers=openai_headers()).json()
        assert r["choices"][0] == {"index": 0, "logprobs": None, "finish_reason": "length",
                                   "message": {"role": "assistant", "content": "from file",
                                               "refusal": None, "annotations": []}}


def test_usage_follows_the_documented_formula(http):
    body = {"model": "emulator-1", "messages": [{"role": "user", "content": "hello"}]}
    usage = http.post("/v1/chat/completions", json=body, headers=openai_headers()).json()["usage"]
    prompt_chars = len(json.dumps([None, body["messages"]], separators=(",", ":")))
    assert usage["prompt_tokens"] == -(-prompt_chars // 4)


def test_shared_emulator_is_started_once_and_serves():
    from modelwire.emulator import shared_emulator

    one = shared_emulator()
    assert shared_emulator() is one
    r = httpx.post(one.openai_base_url() + "/chat/completions", json=CHAT, headers=openai_headers())
    assert r.status_code == 200


@pytest.mark.parametrize(("host", "status"), [("10.1.2.3", 403), ("127.0.0.1", 200)])
def test_control_endpoints_answer_loopback_clients_only(host, status):
    from starlette.testclient import TestClient

    from modelwire.emulator.app import build_app
    from modelwire.emulator.endpoints import Backend

    with TestClient(build_app(Backend()), client=(host, 50000)) as client:
        assert client.get("/__emulator/requests").status_code == status
        assert client.post("/__emulator/faults", json={"fault": "quota"}).status_code == status


def test_successful_answers_carry_rate_limit_headers(http):
    o = http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
    assert o.headers["x-ratelimit-remaining-requests"] == "59"
    a = http.post("/v1/messages", json=MSG, headers=anthropic_headers())
    assert a.headers["anthropic-ratelimit-requests-remaining"] == "49"
    assert a.headers["request-id"].startswith("req_")


def test_listening_socket_is_tcp_so_answers_are_not_held_by_nagle(emulator):
    import socket

    # asyncio turns on TCP_NODELAY for accepted connections only when the listening
    # socket's proto is TCP; without it every answer waited for a delayed ACK
    assert emulator._socket.proto == socket.IPPROTO_TCP


def test_request_log_filters_by_number_and_endpoint(emu, http):
    mark = max([e["n"] for e in emu.requests()["requests"]], default=0)
    http.post("/v1/chat/completions", json=CHAT, headers=openai_headers())
    http.post("/v1/messages", json=MSG, headers=anthropic_headers())
    assert [e["endpoint"] for e in emu.requests(since=mark)["requests"]] == [
        "chat_completions", "messages"]
    over_http = http.get("/__emulator/requests", params={"since": mark, "endpoint": "messages"})
    assert [e["endpoint"] for e in over_http.json()["requests"]] == ["messages"]
