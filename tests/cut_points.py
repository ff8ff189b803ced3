"""Where to cut an emulator's stream so that the cut lands inside a tool call.

The emulator's model is deterministic: replaying the request it logged last gives the
same events, so a test finds the place to cut from the events themselves instead of
hard-coding how many the model sends before a call's arguments (which changes with it).
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

__all__ = ["TWO_CALLS", "cut_inside_call", "sse_events"]

# a question the emulator answers with two tool calls, one per tool (chat tool specs)
_CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TWO_CALLS = {
    "prompt": "What is the weather and the time in Paris?",
    "tools": [
        {"type": "function", "function": {"name": "get_weather", "description": "the weather in a city",
                                          "parameters": _CITY}},
        {"type": "function", "function": {"name": "get_time", "description": "the time in a city",
                                          "parameters": _CITY}},
    ],
}


def sse_events(body: bytes) -> list[tuple[str | None, bytes]]:
    """``(event name, data)`` per SSE event of a whole stream body."""
    out = []
    for frame in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        name, data = None, []
        for line in frame.split(b"\n"):
            if line.startswith(b"event:"):
                name = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data.append(line[5:].strip())
        if data:
            out.append((name, b"\n".join(data)))
    return out


def _call_pieces(event: dict[str, Any]) -> list[str]:
    """``"start"`` for a tool call's start, ``"args"`` for a non-empty argument fragment,
    in the order one upstream event holds them (any of the three protocols)."""
    kind = event.get("type")
    if kind == "content_block_start":
        return ["start"] if event["content_block"].get("type") == "tool_use" else []
    if kind == "content_block_delta":
        delta = event["delta"]
        return ["args"] if delta.get("type") == "input_json_delta" and delta.get("partial_json") else []
    if kind == "response.output_item.added":
        return ["start"] if event["item"].get("type") == "function_call" else []
    if kind == "response.function_call_arguments.delta":
        return ["args"] if event.get("delta") else []
    pieces = []
    for choice in event.get("choices") or ():
        for call in (choice.get("delta") or {}).get("tool_calls") or ():
            if call.get("id"):
                pieces.append("start")
            if (call.get("function") or {}).get("arguments"):
                pieces.append("args")
    return pieces


def cut_inside_call(emulator: Any, call: int) -> int:
    """The ``after`` of a ``close_mid_stream`` fault that cuts the answer to the request
    the emulator logged last right after the first argument fragment of tool call
    ``call`` (0-based): that call started and never ended."""
    entry = emulator.requests()["requests"][-1]
    assert entry["stream"], "replay a streamed request"
    headers = {"authorization": "Bearer sk-replay", "x-api-key": "sk-replay", "anthropic-version": "2023-06-01"}
    r = httpx.post(emulator.base_url + entry["path"], content=orjson.dumps(entry["body"]), headers=headers,
                   timeout=30)
    assert r.status_code == 200, r.text
    starts = 0
    for i, (_, data) in enumerate(sse_events(r.content)):
        if data == b"[DONE]":
            break
        for piece in _call_pieces(orjson.loads(data)):
            starts += piece == "start"
            if piece == "args" and starts == call + 1:
                return i + 1
    raise AssertionError(f"the answer has no argument fragment of tool call {call}")
