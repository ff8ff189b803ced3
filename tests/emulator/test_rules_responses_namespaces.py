"""The emulator's Responses endpoint takes namespace tools and answers namespaced calls
as the API does: ``function_call`` items with ``namespace`` and ``name`` apart."""

from __future__ import annotations

import json

import pytest

from .conftest import KEY

COLOR = {"type": "namespace", "name": "mcp__demo", "description": "Tools of the demo server.",
         "tools": [{"type": "function", "name": "lookup_color", "description": "Favourite colour of a person.",
                    "parameters": {"type": "object", "properties": {"person": {"type": "string"}}}}]}
AUTH = {"authorization": f"Bearer {KEY}"}


def _post(http, body):
    return http.post("/v1/responses", json={"model": "gpt-5-mini", **body}, headers=AUTH)


def test_the_model_calls_a_namespace_member_in_its_namespace(http, emu):
    emu.set_script([{"tool_calls": [{"name": "mcp__demo__lookup_color", "arguments": {"person": "Ada"}}]}])
    answer = _post(http, {"input": "What colour does Ada like?", "tools": [COLOR]})
    assert answer.status_code == 200, answer.text
    call = next(i for i in answer.json()["output"] if i["type"] == "function_call")
    assert (call["namespace"], call["name"], json.loads(call["arguments"])) == (
        "mcp__demo", "lookup_color", {"person": "Ada"})


def test_the_deterministic_model_sees_namespace_members(http, emu):
    answer = _post(http, {"input": "Look up the favourite colour of Ada.", "tools": [COLOR]})
    assert answer.status_code == 200, answer.text
    calls = [(i.get("namespace"), i["name"]) for i in answer.json()["output"] if i["type"] == "function_call"]
    assert calls == [("mcp__demo", "lookup_color")]


def test_an_echoed_namespaced_call_and_its_output_are_one_exchange(http, emu):
    emu.set_script([{"text": "Ada likes teal."}])
    history = [{"type": "message", "role": "user", "content": "Ada's colour?"},
               {"type": "function_call", "call_id": "call_1", "namespace": "mcp__demo", "name": "lookup_color",
                "arguments": "{}"},
               {"type": "function_call_output", "call_id": "call_1", "output": "teal"}]
    answer = _post(http, {"input": history, "tools": [COLOR], "store": False})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("broken,param", [
    ({"type": "namespace", "name": "mcp__demo", "tools": []}, "tools[0].description"),
    ({"type": "namespace", "description": "x", "tools": []}, "tools[0].name"),
    ({"type": "namespace", "name": "n", "description": "x", "tools": [{"type": "web_search"}]}, "tools[0].tools[0].type"),
], ids=["no-description", "no-name", "hosted-member"])
def test_a_malformed_namespace_is_a_400_naming_the_field(http, emu, broken, param):
    answer = _post(http, {"input": "hi", "tools": [broken]})
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == param
