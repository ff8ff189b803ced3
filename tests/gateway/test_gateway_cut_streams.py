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
    events = _cut_answer(gateway, emulator_clean, "chat", upstream)
    chunks = [data for _, data in events if isinstance(data, dict) and "choices" in data]
    assert any(d.get("tool_calls") for c in chunks for d in [c["choices"][0]["delta"]])  # the calls began
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]] == [None] * len(chunks)
    assert "error" in events[-1][1], events[-1]
    error = events[-1][1]["error"]
    assert error["type"] == "server_error", error
    assert error.get("code") != "invalid_request_error"


@upstreams
def test_anthropic_door_never_closes_the_half_tool_use_block(gateway, emulator_clean, upstream):
    events = _cut_answer(gateway, emulator_clean, "anthropic", upstream)
    kinds = [data["type"] for _, data in events]
    tool_blocks = {data["index"] for _, data in events
                   if data["type"] == "content_block_start" and data["content_block"]["type"] == "tool_use"}
    stopped = {data["index"] for _, data in events if data["type"] == "content_block_stop"}
    inputs: dict[int, str] = {}
    for _, data in events:
        if data["type"] == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
            inputs[data["index"]] = inputs.get(data["index"], "") + data["delta"]["partial_json"]
    finished = tool_blocks & stopped
    assert len(finished) == FINISHED[upstream]
    assert tool_blocks - stopped, "the half call was closed as if finished"
    for index in finished:  # a closed call is a whole one
        assert orjson.loads(inputs[index])["city"] == "Paris"
    assert "message_delta" not in kinds and "message_stop" not in kinds
    assert events[-1] == ("error", {"type": "error", "error": {"type": "api_error",
                                                               "message": events[-1][1]["error"]["message"]}})


@upstreams
def test_responses_door_fails_the_response_without_finishing_the_half_call(gateway, emulator_clean, upstream):
    events = _cut_answer(gateway, emulator_clean, "responses", upstream)
    checked = []
    for name, data in events:  # every event, the failure too, in the published schema
        if isinstance(data.get("response"), dict):  # usage has its own test (wire shapes)
            data = {**data, "response": {**data["response"], "usage": None}}
        checked.append(conform(ResponseStreamEvent, data, RESPONSES_EXTENSIONS))
        assert checked[-1].type == name
    added = [data["item"]["id"] for _, data in events if data["type"] == "response.output_item.added"]
    done = [data["item"]["id"] for _, data in events if data["type"] == "response.output_item.done"]
    assert len(added) == 2 and len(done) == FINISHED[upstream]
    assert done == added[:len(done)]  # only the calls the upstream finished
    kinds = [data["type"] for _, data in events]
    assert kinds.count("response.function_call_arguments.done") == FINISHED[upstream]
    assert "response.completed" not in kinds and "error" not in kinds
    failed = checked[-1]
    assert isinstance(failed, ResponseFailedEvent)
    assert failed.response.status == "failed"
    assert failed.response.error.code == "server_error"
    assert failed.response.id == events[0][1]["response"]["id"]
    assert [item.id for item in failed.response.output] == done
