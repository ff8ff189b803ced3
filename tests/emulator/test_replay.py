"""Replay: the emulator serves captured upstream answers to requests that mean the same."""

from __future__ import annotations

import httpx
import openai
import orjson
import pytest

from modelwire.emulator import Emulator
from modelwire.emulator.replay import Replay, meaning
from modelwire.gateway.capture import Capture, CaptureSettings

KEY = "sk-" + "replay-test-key"


def _conversation(call_id: str) -> list[dict]:
    return [
        {"role": "user", "content": "What is 17 times 23? Use the calculator."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "calculator", "arguments": '{"expression": "17 * 23"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "391"},
    ]


def _body(call_id: str, *, stream: bool = False, model: str = "emulator-1") -> dict:
    return {"model": model, "stream": stream, "messages": _conversation(call_id),
            "tools": [{"type": "function", "function": {"name": "calculator", "parameters": {
                "type": "object", "properties": {"expression": {"type": "string"}}}}}]}


def _capture_from(emu: Emulator, folder, bodies: list[dict], *, faults: list | None = None) -> list[bytes]:
    """Send each body to a live emulator and capture the exchange as the gateway would."""
    capture = Capture(CaptureSettings(dir=str(folder), models=("*",), failing_only=False))
    answers = []
    if faults:
        emu.set_faults(faults)
    try:
        for body in bodies:
            raw = orjson.dumps(body)
            headers = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
            resp = httpx.post(emu.openai_base_url() + "/chat/completions", content=raw,
                              headers=headers, timeout=10)
            answers.append(resp.content)
            capture.record(model=body["model"], api_mode="chat_completions", method="POST",
                           path="/v1/chat/completions", headers=headers, body=raw,
                           status=resp.status_code, answer_headers=dict(resp.headers),
                           answer=resp.content, failed=resp.status_code >= 400)
    finally:
        emu.clear_faults()
        capture.close()
    return answers


def test_a_replayed_answer_is_the_captured_one_although_the_ids_differ(tmp_path):
    with Emulator() as live:
        [captured] = _capture_from(live, tmp_path, [_body("call_recorded_1")])
    with Emulator(replay=tmp_path) as replay:
        client = openai.OpenAI(base_url=replay.openai_base_url(), api_key=KEY)
        raw = client.chat.completions.with_raw_response.create(**_body("call_other_id_in_this_run"))
    assert raw.http_response.content == captured  # byte for byte
    assert raw.parse().choices[0].message.content == orjson.loads(captured)["choices"][0]["message"]["content"]
    assert "391" in raw.parse().choices[0].message.content


def test_a_captured_stream_replays_as_a_stream_the_sdk_reads(tmp_path):
    with Emulator() as live:
        [captured] = _capture_from(live, tmp_path, [_body("call_a", stream=True)])
    with Emulator(replay=tmp_path) as replay:
        client = openai.OpenAI(base_url=replay.openai_base_url(), api_key=KEY)
        chunks = list(client.chat.completions.create(**_body("call_b", stream=True)))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    expected = "".join(
        (orjson.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
        for line in captured.decode().split("\n") if line.startswith("data: {"))
    assert text == expected and text


def test_a_captured_failure_replays_with_its_status_and_retry_hint(tmp_path):
    with Emulator() as live:
        _capture_from(live, tmp_path, [_body("call_a")],
                      faults=[{"fault": "rate_limit", "retry_after": 7}])
    with Emulator(replay=tmp_path) as replay:
        resp = httpx.post(replay.openai_base_url() + "/chat/completions",
                          json=_body("call_z"), headers={"authorization": f"Bearer {KEY}"})
    assert resp.status_code == 429
    assert resp.headers["retry-after"] == "7"


def test_a_request_that_means_something_else_gets_a_404_saying_so(tmp_path):
    with Emulator() as live:
        _capture_from(live, tmp_path, [_body("call_a")])
    with Emulator(replay=tmp_path) as replay:
        other = _body("call_a")
        other["messages"][0]["content"] = "What is 18 times 23?"
        resp = httpx.post(replay.openai_base_url() + "/chat/completions", json=other,
                          headers={"authorization": f"Bearer {KEY}"})
    assert resp.status_code == 404
    assert "no captured answer" in resp.json()["error"]["message"]


def test_the_same_request_captured_twice_replays_in_order_then_repeats_the_last(tmp_path):
    with Emulator() as live:
        first, second = _capture_from(live, tmp_path, [_body("a", model="emulator-1"),
                                                       _body("b", model="emulator-1")],
                                      faults=None)
    replay = Replay(tmp_path)
    served = [replay.answer("chat_completions", _body("x"))[2][0] for _ in range(3)]
    assert served == [first, second, second]


def test_meaning_ignores_ids_and_key_order_but_not_arguments():
    a = meaning("chat_completions", _body("call_1"))
    assert a == meaning("chat_completions", dict(reversed(list(_body("call_2").items()))))
    changed = _body("call_1")
    changed["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"expression": "17*24"}'
    assert meaning("chat_completions", changed) != a
    assert meaning("chat_completions", _body("call_1", stream=True)) != a


def test_a_folder_without_captures_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no capture"):
        Replay(tmp_path)
    (tmp_path / "capture.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match=r"capture.jsonl:1 is not a capture record"):
        Replay(tmp_path)
