"""The Responses input items Codex sends reach every upstream with their meaning.

One conversation holds each kind: reasoning with and without ``encrypted_content``, a
``function_call_output`` whose output is a content array with an image, a custom tool
call (``apply_patch``) and its output, a ``local_shell_call`` and its output, a user
message with an ``input_image``. Each upstream protocol's emulator enforces its own
rules (every call answered, images where that protocol takes them); the assertions read
what it received.
"""

from __future__ import annotations

import json

import httpx
import pytest

GATEWAY_KEY = "gw-test-key-0123456789"
UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]
PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/"
       "P8Fu7N9hAAAAAElFTkSuQmCC")
TOOLS = [
    {"type": "function", "name": "exec_command", "description": "Run a command.", "strict": False,
     "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
    {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
     "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
    {"type": "local_shell"},
]
INPUT = [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is in this picture?"},
                                                    {"type": "input_image", "image_url": PNG, "detail": "auto"}]},
    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "I list the files first."}], "content": None},
    {"type": "function_call", "call_id": "call_exec", "name": "exec_command", "arguments": '{"cmd": "ls"}'},
    {"type": "function_call_output", "call_id": "call_exec",
     "output": [{"type": "input_text", "text": "dot.png"}, {"type": "input_image", "image_url": PNG}]},
    {"type": "custom_tool_call", "call_id": "call_patch", "name": "apply_patch", "input": "*** Begin Patch"},
    {"type": "custom_tool_call_output", "call_id": "call_patch", "output": "Done!"},
    {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_shell", "status": "completed",
     "action": {"type": "exec", "command": ["cat", "notes.txt"], "env": {}}},
    {"type": "local_shell_call_output", "id": "call_shell", "output": "remember the milk"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And now?"}]},
]


def _post(gateway, body: dict) -> httpx.Response:
    return httpx.post(gateway.base_url + "/v1/responses", json=body, timeout=30,
                      headers={"authorization": f"Bearer {GATEWAY_KEY}"})


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_every_codex_item_kind_reaches_the_upstream(gateway, emulator, upstream):
    emulator.set_script([{"text": "A red square."}])
    try:
        answer = _post(gateway, {"model": upstream, "input": INPUT, "tools": TOOLS, "store": False,
                                 "include": ["reasoning.encrypted_content"]})
    finally:
        emulator.set_script(None)
    assert answer.status_code == 200, answer.text
    assert answer.json()["output"][-1]["content"][0]["text"] == "A red square."
    sent = emulator.requests()["requests"][-1]["body"]
    text = json.dumps(sent)
    # every call went as a call and every result as a result, each with its id
    for call_id in ("call_exec", "call_patch", "call_shell"):
        assert text.count(call_id) >= 2, call_id
    flat = text.replace("\\", "").replace(" ", "")  # arguments as JSON strings or as objects alike
    assert "remember the milk" in text and "Done!" in text and "***BeginPatch" in flat
    assert '"command":["cat","notes.txt"]' in flat
    # both images (the user's and the tool result's), as image data
    assert text.count("iVBORw0KGgo") == 2
    names = [t.get("name") or t.get("function", {}).get("name") for t in sent["tools"]]
    assert names == ["exec_command", "apply_patch", "local_shell"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_models_call_of_local_shell_comes_back_as_a_local_shell_call(gateway, emulator, stream):
    emulator.set_script([{"tool_calls": [{"name": "local_shell", "arguments": {"command": ["ls", "-la"]}}]}])
    try:
        answer = _post(gateway, {"model": "emu-chat", "input": "List the files.", "tools": TOOLS, "stream": stream})
    finally:
        emulator.set_script(None)
    assert answer.status_code == 200, answer.text
    if stream:
        events = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
        output = next(e["response"] for e in events if e["type"] == "response.completed")["output"]
    else:
        output = answer.json()["output"]
    calls = [i for i in output if i["type"] == "local_shell_call"]
    assert [c["action"] for c in calls] == [{"type": "exec", "command": ["ls", "-la"], "env": {}}]
    assert calls[0]["call_id"] and calls[0]["status"] == "completed"
