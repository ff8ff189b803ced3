"""Responses ``namespace`` tools through the internal model (flat function names) and back.

Codex CLI groups MCP tools in a namespace per server and its sub-agent tools in
``multi_agent_v1``; models without namespaces see each member as one function whose name
fits every provider's limits, and the client gets ``function_call`` items with
``namespace`` and ``name`` apart, streamed and not.
"""

from __future__ import annotations

import re

import orjson
import pytest

from modelwire.codecs import Target, anthropic_messages, chat_completions, responses
from modelwire.codecs.responses._namespaces import flat_name
from modelwire.completion import Completion
from modelwire.events import Finish, ToolCallDelta, ToolCallEnd, ToolCallStart
from modelwire.providers.profile import ProviderProfile
from modelwire.types import empty_usage

PARAMS = {"type": "object", "properties": {"person": {"type": "string"}}, "required": ["person"]}
TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {}}},
    {"type": "namespace", "name": "mcp__demo", "description": "Tools of demo.",
     "tools": [{"type": "function", "name": "lookup_color", "description": "Colour of a person.",
                "strict": False, "parameters": PARAMS}]},
    {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.",
     "tools": [{"type": "function", "name": "spawn_agent", "parameters": {"type": "object", "properties": {}}},
               {"type": "custom", "name": "notes", "description": "Free text."}]},
]
NAME_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _request(**more):
    return responses.decode_request({"model": "m", "input": "What colour does Ada like?", "tools": TOOLS, **more})


def test_namespace_members_become_flat_functions_in_the_request_order():
    req = _request()
    names = [t["function"]["name"] for t in req["tools"]]
    assert names == ["exec_command", "mcp__demo__lookup_color", "multi_agent_v1__spawn_agent", "multi_agent_v1__notes"]
    assert req["tools"][1]["function"]["parameters"] == PARAMS
    assert req["tools"][1]["function"]["description"] == "Colour of a person."
    assert req["metadata"]["custom_tools"] == ["multi_agent_v1__notes"]


@pytest.mark.parametrize("space,name", [
    ("mcp__a-very-long-server-name-that-someone-configured", "and_a_tool_with_a_long_name_too"),
    ("mcp__my.server", "read file"),
], ids=["too-long", "bad-characters"])
def test_flat_names_fit_every_providers_tool_name_rule_and_stay_distinct(space, name):
    flat = flat_name(space, name)
    assert NAME_RULE.fullmatch(flat)
    assert flat != flat_name(space, name + "2") and flat == flat_name(space, name)


def test_a_flat_name_another_tool_has_is_made_unique():
    tools = [{"type": "function", "name": "mcp__demo__lookup_color"}, TOOLS[1]]
    req = responses.decode_request({"model": "m", "input": "hi", "tools": tools})
    names = [t["function"]["name"] for t in req["tools"]]
    assert names[0] == "mcp__demo__lookup_color" and names[1] != names[0] and NAME_RULE.fullmatch(names[1])


@pytest.mark.parametrize("codec", [chat_completions, anthropic_messages], ids=["chat", "anthropic"])
def test_an_upstream_without_namespaces_gets_plain_functions(codec):
    api = "chat_completions" if codec is chat_completions else "anthropic_messages"
    req = _request()
    req["metadata"]["source_api"] = "responses"
    target = Target(profile=ProviderProfile(name="x", base_url="http://127.0.0.1:9", api_mode=api), model="m")
    raw = codec.encode_request(req, target).body
    body = orjson.loads(raw)
    names = [t.get("name") or t["function"]["name"] for t in body["tools"]]
    assert "mcp__demo__lookup_color" in names and all(NAME_RULE.fullmatch(n) for n in names)
    assert b"x-modelwire" not in raw  # the door's own mark stays out of the wire


def test_a_responses_upstream_gets_the_namespaces_back_as_they_came():
    history = [
        {"type": "message", "role": "user", "content": "What colour does Ada like?"},
        {"type": "function_call", "call_id": "call_1", "namespace": "mcp__demo", "name": "lookup_color",
         "arguments": '{"person": "Ada"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "teal"},
    ]
    req = responses.decode_request({"model": "m", "input": history, "tools": TOOLS[:2]})
    target = Target(profile=ProviderProfile(name="x", base_url="http://127.0.0.1:9", api_mode="responses"), model="m")
    raw = responses.encode_request(req, target).body
    body = orjson.loads(raw)
    assert body["tools"] == [
        {"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {}},
         "strict": False},
        {"type": "namespace", "name": "mcp__demo", "description": "Tools of demo.", "tools": [
            {"type": "function", "name": "lookup_color", "description": "Colour of a person.", "parameters": PARAMS,
             "strict": False}]},
    ]
    call = body["input"][1]
    assert (call["type"], call["namespace"], call["name"]) == ("function_call", "mcp__demo", "lookup_color")
    assert b"x-modelwire" not in raw


def _completion(name: str) -> Completion:
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": '{"person": "Ada"}'}}]}
    return Completion(message=message, finish_reason="tool_calls", usage=empty_usage(), model="m", id="x")


def test_the_models_call_comes_back_with_namespace_and_name_apart():
    out = responses.encode_response(_completion("mcp__demo__lookup_color"), _request())["output"]
    call = next(i for i in out if i["type"] == "function_call")
    assert (call["namespace"], call["name"], call["call_id"]) == ("mcp__demo", "lookup_color", "call_1")
    plain = responses.encode_response(_completion("exec_command"), _request())["output"]
    assert "namespace" not in next(i for i in plain if i["type"] == "function_call")


def test_a_namespaced_custom_tool_call_comes_back_as_a_custom_call_in_its_namespace():
    completion = _completion("multi_agent_v1__notes")
    completion.message["tool_calls"][0]["function"]["arguments"] = '{"input": "remember"}'
    item = next(i for i in responses.encode_response(completion, _request())["output"] if i["type"] != "message")
    assert item == {"id": item["id"], "type": "custom_tool_call", "status": "completed", "call_id": "call_1",
                    "name": "notes", "input": "remember", "namespace": "multi_agent_v1"}


def test_the_streamed_call_comes_back_with_namespace_and_name_apart():
    encoder = responses.StreamEncoder(model="m", request=_request())
    events = [ToolCallStart(0, "call_1", "mcp__demo__lookup_color"), ToolCallDelta(0, '{"person": "Ada"}'),
              ToolCallEnd(0), Finish("tool_calls")]
    sse = b"".join(encoder.feed(e) for e in events) + encoder.close()
    frames = [orjson.loads(line[6:]) for line in sse.split(b"\n") if line.startswith(b"data: ")]
    items = [f["item"] for f in frames if f["type"] in ("response.output_item.added", "response.output_item.done")]
    assert [(i["namespace"], i["name"]) for i in items] == [("mcp__demo", "lookup_color")] * 2
    done = next(f for f in frames if f["type"] == "response.completed")["response"]["output"]
    assert (done[0]["namespace"], done[0]["name"]) == ("mcp__demo", "lookup_color")


def test_echoed_namespaced_calls_and_tool_choice_use_the_flat_name():
    history = [
        {"type": "message", "role": "user", "content": "What colour does Ada like?"},
        {"type": "function_call", "call_id": "call_1", "namespace": "mcp__demo", "name": "lookup_color",
         "arguments": '{"person": "Ada"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "teal"},
    ]
    req = responses.decode_request({"model": "m", "input": history, "tools": TOOLS,
                                    "tool_choice": {"type": "function", "namespace": "mcp__demo",
                                                    "name": "lookup_color"}})
    assert req["messages"][1]["tool_calls"][0]["function"]["name"] == "mcp__demo__lookup_color"
    assert req["tool_choice"] == {"type": "function", "function": {"name": "mcp__demo__lookup_color"}}


def test_a_responses_upstreams_namespaced_call_decodes_to_the_flat_name():
    body = {"id": "resp_1", "object": "response", "status": "completed", "model": "m", "output": [
        {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
         "namespace": "mcp__demo", "name": "lookup_color", "arguments": "{}"}]}
    assert responses.decode_response(body).message["tool_calls"][0]["function"]["name"] == "mcp__demo__lookup_color"
    item = body["output"][0]
    sse = b"".join(
        f"event: {t}\ndata: {orjson.dumps(d).decode()}\n\n".encode() for t, d in [
            ("response.created", {"type": "response.created", "response": {**body, "output": [], "status": "in_progress"}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": body})])
    decoder = responses.StreamDecoder()
    starts = [e for e in decoder.feed(sse) + decoder.close() if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["mcp__demo__lookup_color"]
