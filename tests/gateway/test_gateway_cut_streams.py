"""An upstream cut in the middle of a tool call: every door says so honestly.

The emulator answers with two tool calls and the connection drops right after the
first argument fragment of the second. No door may present the half call as finished
(no ``content_block_stop``, no ``response.output_item.done``, no chat ``finish_reason``),
and the error event names an upstream failure (``api_error``, ``server_error``, a
Responses ``response.failed``), never a client mistake an SDK would not retry.
Calls the upstream did finish are still delivered whole where the protocol allows it.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from openai.types.responses import ResponseFailedEvent, ResponseStreamEvent

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

from ..cut_points import TWO_CALLS, cut_inside_call, sse_events
from .conftest import GATEWAY_KEY
from .wire_schema import RESPONSES_EXTENSIONS, conform

HEADERS = {"authorization": f"Bearer {GATEWAY_KEY}", "x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"}
# calls the upstream finished before the cut: Chat Completions ends calls only with its
# finish_reason, so a Chat Completions upstream cut mid-answer has finished none
FINISHED = {"emu-chat": 0, "emu-anthropic": 1, "emu-responses": 1}
upstreams = pytest.mark.parametrize("upstream", list(FINISHED))


def _body(door: str, model: str) -> tuple[str, dict[str, Any]]:
    tools = TWO_CALLS["tools"]
    messages = [{"role": "user", "content": TWO_CALLS["prompt"]}]
    if door == "chat":
        return "/v1/chat/completions", {"model": model, "stream": True, "messages": messages, "tools": tools}
    if door == "anthropic":
        return "/v1/messages", {"model": model, "stream": True, "max_tokens": 1024, "messages": messages, "tools": [
            {"name": t["function"]["name"], "description": t["function"]["description"],
             "input_schema": t["function"]["parameters"]} for t in tools]}
    return "/v1/responses", {"model": model, "stream": True, "input": TWO_CALLS["prompt"],
                             "tools": [{"type": "function", **t["function"]} for t in tools]}


def _cut_answer(gateway, emulator, door: str, upstream: str) -> list[tuple[str | None, Any]]:
    """The door's stream for an answer cut inside its second tool call."""
    path, body = _body(door, upstream)
    whole = httpx.post(gateway.base_url + path, json=body, headers=HEADERS, timeout=30)
    assert whole.status_code == 200, whole.text
    emulator.set_faults([{"fault": "close_mid_stream", "after": cut_inside_call(emulator, 1), "times": 1}])
    cut = httpx.post(gateway.base_url + path, json=body, headers=HEADERS, timeout=30)
    assert cut.status_code == 200, cut.text  # the stream had started: the error is in it
    assert emulator.requests()["requests"][-1]["aborted_by_fault"]
    return [(name, data.decode() if data == b"[DONE]" else orjson.loads(data))
            for name, data in sse_events(cut.content)]


@upstreams
def test_chat_door_never_finishes_a_cut_answer_and_blames_the_upstream(gateway, emulator_clean, upstream):
    _check_chat(_cut_answer(gateway, emulator_clean, "chat", upstream))


@upstreams
def test_anthropic_door_never_closes_the_half_tool_use_block(gateway, emulator_clean, upstream):
    _check_anthropic(_cut_answer(gateway, emulator_clean, "anthropic", upstream), FINISHED[upstream])


@upstreams
def test_responses_door_fails_the_response_without_finishing_the_half_call(gateway, emulator_clean, upstream):
    _check_responses(_cut_answer(gateway, emulator_clean, "responses", upstream), FINISHED[upstream])


def _check_chat(events: list[tuple[str | None, Any]]) -> None:
    chunks = [data for _, data in events if isinstance(data, dict) and "choices" in data]
    assert any(d.get("tool_calls") for c in chunks for d in [c["choices"][0]["delta"]])  # the calls began
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]] == [None] * len(chunks)
    assert "error" in events[-1][1], events[-1]
    error = events[-1][1]["error"]
    assert error["type"] == "server_error", error
    assert error.get("code") != "invalid_request_error"


def _check_anthropic(events: list[tuple[str | None, Any]], finished_calls: int) -> None:
    kinds = [data["type"] for _, data in events]
    tool_blocks = {data["index"] for _, data in events
                   if data["type"] == "content_block_start" and data["content_block"]["type"] == "tool_use"}
    stopped = {data["index"] for _, data in events if data["type"] == "content_block_stop"}
    inputs: dict[int, str] = {}
    for _, data in events:
        if data["type"] == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
            inputs[data["index"]] = inputs.get(data["index"], "") + data["delta"]["partial_json"]
    finished = tool_blocks & stopped
    assert len(finished) == finished_calls
    assert tool_blocks - stopped, "the half call was closed as if finished"
    for index in finished:  # a closed call is a whole one
        assert orjson.loads(inputs[index])["city"] == "Paris"
    assert "message_delta" not in kinds and "message_stop" not in kinds
    name, data = events[-1]
    assert (name, data["type"], data["error"]["type"]) == ("error", "error", "api_error"), data
    assert data["error"]["message"]


def _check_responses(events: list[tuple[str | None, Any]], finished_calls: int, *, output: bool = True) -> None:
    """``output``: the failed response lists the finished items (the lane, which does
    not parse the upstream's bytes, lists none)."""
    checked = []
    for name, data in events:  # every event, the failure too, in the published schema
        if isinstance(data.get("response"), dict):  # usage has its own test (wire shapes)
            data = {**data, "response": {**data["response"], "usage": None}}
        checked.append(conform(ResponseStreamEvent, data, RESPONSES_EXTENSIONS))
        assert checked[-1].type == name
    added = [data["item"]["id"] for _, data in events if data["type"] == "response.output_item.added"]
    done = [data["item"]["id"] for _, data in events if data["type"] == "response.output_item.done"]
    assert len(added) == 2 and len(done) == finished_calls
    assert done == added[:len(done)]  # only the calls the upstream finished
    kinds = [data["type"] for _, data in events]
    assert kinds.count("response.function_call_arguments.done") == finished_calls
    assert "response.completed" not in kinds and "error" not in kinds
    failed = checked[-1]
    assert isinstance(failed, ResponseFailedEvent)
    assert failed.response.status == "failed"
    assert failed.response.error.code == "server_error"
    assert failed.response.id == events[0][1]["response"]["id"]
    assert [item.id for item in failed.response.output] == (done if output else [])
    assert failed.sequence_number == checked[-2].sequence_number + 1


# ------------------------------------------------------------ the same-protocol lane
# upstreams that take the door's protocol as the first party sends it: the gateway
# forwards the client's bytes and relays the upstream's, then adds only the error event
@pytest.fixture(scope="module")
def lane(emulator, tmp_path_factory):
    path = tmp_path_factory.mktemp("cut-lane") / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  claude: {{provider: anthropic, model: claude-sonnet-4-5, base_url: \"{emulator.anthropic_base_url()}\", "
        "api_key_env: CUT_ANTHROPIC_KEY}\n"
        f"  gpt: {{provider: openai, model: gpt-5-mini, base_url: \"{emulator.openai_base_url()}\", "
        "api_key_env: CUT_OPENAI_KEY}\n"
        f"  gpt-r: {{provider: openai, model: gpt-5-mini, api_mode: responses, "
        f"base_url: \"{emulator.openai_base_url()}\", api_key_env: CUT_OPENAI_KEY}}\n"
        "gateway: {keys_env: CUT_KEYS}\n")
    mp = pytest.MonkeyPatch()
    mp.setenv("CUT_ANTHROPIC_KEY", "sk-ant-cut-lane-test")  # upstream keys come from the environment
    mp.setenv("CUT_OPENAI_KEY", "sk-cut-lane-test")
    try:
        with RunningGateway(load_config(str(path)), environ={"CUT_KEYS": GATEWAY_KEY}) as gw:
            yield gw
    finally:
        mp.undo()


def _cut_lane_answer(lane, emulator, door: str, model: str) -> list[tuple[str | None, Any]]:
    path, body = _body(door, model)
    whole = httpx.post(lane.base_url + path, json=body, headers=HEADERS, timeout=30)
    assert whole.headers.get("x-modelwire-lane") == "passthrough", whole.headers
    return _cut_answer(lane, emulator, door, model)


def test_lane_chat_door_never_finishes_a_cut_answer(lane, emulator_clean):
    _check_chat(_cut_lane_answer(lane, emulator_clean, "chat", "gpt"))


def test_lane_anthropic_door_never_closes_the_half_tool_use_block(lane, emulator_clean):
    _check_anthropic(_cut_lane_answer(lane, emulator_clean, "anthropic", "claude"), 1)


def test_lane_responses_door_fails_the_response(lane, emulator_clean):
    _check_responses(_cut_lane_answer(lane, emulator_clean, "responses", "gpt-r"), 1, output=False)
