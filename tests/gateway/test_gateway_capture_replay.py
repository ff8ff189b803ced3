"""gateway.capture writes the upstream exchanges of chosen models; an emulator in replay
mode serves them back, so a conversation seen through the gateway replays offline."""

from __future__ import annotations

import json

import openai

from modelwire.config import load_config
from modelwire.emulator import Emulator
from modelwire.gateway.testing import RunningGateway

KEY = "sk-" + "capture-replay-0001"
ASK = [{"role": "user", "content": "What is 17 times 23?"}]


def _config(tmp_path, base_url: str, capture: str | None, *, failing_only: bool = False):
    path = tmp_path / "modelwire.yaml"
    lines = [(f'models:\n  ds: {{provider: deepseek, model: cap-model, base_url: "{base_url}", '
             f'api_key_env: CAP_KEY}}\n')]
    if capture:
        lines.append(f'gateway:\n  capture: {{dir: "{capture}", models: [ds], '
                     f'failing_only: {str(failing_only).lower()}, redact: [user]}}\n')
    path.write_text("".join(lines))
    return load_config(str(path))


def test_a_captured_turn_replays_through_the_gateway_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("CAP_KEY", KEY)
    folder = tmp_path / "captures"
    with Emulator() as live:
        config = _config(tmp_path, live.openai_base_url("deepseek"), str(folder))
        with RunningGateway(config, environ={}) as gw:
            sdk = openai.OpenAI(base_url=gw.base_url + "/v1", api_key="unused")
            first = sdk.chat.completions.create(model="ds", messages=ASK, user="alice")
    [line] = (folder / "capture.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["model"] == "ds" and record["api_mode"] == "chat_completions"
    # a capture by model on a gateway without keys: no key name, but the request is findable
    assert record["key"] is None and record["door"] == "chat_completions"
    assert record["request_id"].startswith("req_") and len(record["id"]) == 12
    assert record["request"]["headers"]["authorization"] == "[redacted]"
    assert KEY not in line and record["request"]["body"]["user"] == "[redacted]"
    with Emulator(replay=folder) as replay:
        config = _config(tmp_path, replay.openai_base_url("deepseek"), None)
        with RunningGateway(config, environ={}) as gw:
            sdk = openai.OpenAI(base_url=gw.base_url + "/v1", api_key="unused")
            again = sdk.chat.completions.create(model="ds", messages=ASK, user="bob")
        served = replay.requests()["requests"]
    assert again.choices[0].message.content == first.choices[0].message.content
    assert "391" in again.choices[0].message.content
    assert len(served) == 1 and served[0]["status"] == 200


def test_only_failures_are_captured_by_default_and_they_replay_as_failures(tmp_path, monkeypatch):
    monkeypatch.setenv("CAP_KEY", KEY)
    folder = tmp_path / "captures"
    with Emulator() as live:
        config = _config(tmp_path, live.openai_base_url("deepseek"), str(folder), failing_only=True)
        live.set_faults([{"fault": "overloaded", "times": 1}])
        with RunningGateway(config, environ={}) as gw:
            sdk = openai.OpenAI(base_url=gw.base_url + "/v1", api_key="unused", max_retries=0)
            answer = sdk.chat.completions.create(model="ds", messages=ASK)  # retried upstream
    records = [json.loads(x) for x in (folder / "capture.jsonl").read_text().splitlines()]
    assert "391" in answer.choices[0].message.content
    # the failed attempt only: the retry that answered is not a failure
    assert len(records) == 1 and records[0]["answer"]["status"] >= 500 and records[0]["failed"]
    with Emulator(replay=folder) as replay:
        config = _config(tmp_path, replay.openai_base_url("deepseek"), None)
        with RunningGateway(config, environ={}) as gw:
            r = openai.OpenAI(base_url=gw.base_url + "/v1", api_key="unused", max_retries=0)
            try:
                r.chat.completions.create(model="ds", messages=ASK)
            except openai.APIStatusError as exc:
                status = exc.status_code
            else:
                status = 200
    # the replay holds only the failure: the gateway's retries ask again and get it again
    assert records[0]["answer"]["status"] == 529 and status == 503  # overloaded, in the door's shape
