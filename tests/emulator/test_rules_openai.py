"""Chat Completions and Responses rules, per profile: a violating request gets the
provider's status and error shape, its valid twin is accepted."""

from __future__ import annotations

import pytest

from .conftest import openai_headers

TOOL = {"type": "function", "function": {"name": "calculator", "description": "arithmetic",
                                         "parameters": {"type": "object", "properties": {}}}}
USER = {"role": "user", "content": "What is 17 times 23?"}
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "calculator", "arguments": '{"expression": "17 * 23"}'}}
ANSWER = {"role": "tool", "tool_call_id": "call_1", "content": "391"}


def chat(messages, **over):
    return {"model": "emulator-1", "messages": messages, "tools": [TOOL], **over}


def assistant(**over):
    return {"role": "assistant", "content": None, "tool_calls": [CALL], **over}


# (id, profile, bad, good, status, fragment)
CHAT_CASES = [
    ("tool_message_without_call", "openai",
     chat([USER, {"role": "assistant", "content": "hm"}, ANSWER]),
     chat([USER, assistant(), ANSWER]), 400,
     "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"),
    ("call_without_tool_message", "openai",
     chat([USER, assistant(), {"role": "user", "content": "and?"}]),
     chat([USER, assistant(), ANSWER, {"role": "user", "content": "and?"}]), 400,
     "The following tool_call_ids did not have response messages: call_1"),
    ("arguments_not_a_string", "lenient",
     chat([USER, assistant(tool_calls=[dict(CALL, function={"name": "calculator",
                                                            "arguments": {"expression": "1"}})]),
           ANSWER]),
     chat([USER, assistant(), ANSWER]), 400,
     "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string"),
    ("duplicate_tool_names_deepseek", "deepseek",
     dict(chat([USER]), tools=[TOOL, TOOL]), chat([USER]), 400, "Tool names must be unique"),
    ("duplicate_tool_names_kimi", "kimi",
     dict(chat([USER]), tools=[TOOL, TOOL]), chat([USER]), 400, "Tool names must be unique"),
    ("duplicate_tool_names_mimo", "mimo",
     dict(chat([USER]), tools=[TOOL, TOOL]), chat([USER]), 400, "Tool names must be unique"),
    ("deepseek_thinking_needs_reasoning_on_tool_turns", "deepseek",
     chat([USER, assistant(), ANSWER], thinking={"type": "enabled"}),
     chat([USER, assistant(reasoning_content="I will compute."), ANSWER],
          thinking={"type": "enabled"}), 400,
     "The `reasoning_content` in the thinking mode must be passed back to the API."),
    ("groq_rejects_reasoning_content", "groq",
     chat([USER, assistant(reasoning_content="r"), ANSWER]),
     chat([USER, assistant(), ANSWER]), 400, "property 'reasoning_content' is unsupported"),
    ("cerebras_rejects_reasoning_content", "cerebras",
     chat([USER, assistant(reasoning_content="r"), ANSWER]),
     chat([USER, assistant(), ANSWER]), 400, "Extra inputs are not permitted"),
]


def _message(body):
    err = body.get("error", body)
    return err["message"] if isinstance(err, dict) else str(err)


@pytest.mark.parametrize(("profile", "bad", "good", "status", "fragment"),
                         [c[1:] for c in CHAT_CASES], ids=[c[0] for c in CHAT_CASES])
def test_chat_rule(http, profile, bad, good, status, fragment):
    path = f"/p/{profile}/v1/chat/completions"
    r = http.post(path, json=bad, headers=openai_headers())
    assert r.status_code == status, r.text
    assert fragment in _message(r.json())
    ok = http.post(path, json=good, headers=openai_headers())
    assert ok.status_code == 200, ok.text
    assert ok.json()["object"] == "chat.completion"


def test_openai_error_shape_has_param_and_code(http):
    r = http.post("/p/openai/v1/chat/completions", headers=openai_headers(),
                  json=chat([USER, {"role": "assistant", "content": "x"}, ANSWER]))
    assert r.json() == {"error": {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a "
                   "preceeding message with 'tool_calls'.",
        "type": "invalid_request_error", "param": "messages.[2].role", "code": None}}
    assert r.headers["x-request-id"].startswith("req_")


def test_mistral_rejects_reasoning_content_with_422_detail(http):
    r = http.post("/p/mistral/v1/chat/completions", headers=openai_headers(),
                  json=chat([USER, assistant(reasoning_content="r"), ANSWER]))
    assert r.status_code == 422
    detail = r.json()["message"]["detail"][0]
    assert detail["type"] == "extra_forbidden"
    assert detail["loc"] == ["body", "messages", 1, "assistant", "reasoning_content"]


def test_lenient_accepts_what_strict_profiles_reject(http):
    for body in (dict(chat([USER]), tools=[TOOL, TOOL]),
                 chat([USER, assistant(reasoning_content="r"), ANSWER])):
        assert http.post("/v1/chat/completions", json=body,
                         headers=openai_headers()).status_code == 200


def test_deepseek_ignores_missing_reasoning_on_turns_without_tool_calls(http):
    body = {"model": "deepseek-reasoner", "messages": [
        USER, {"role": "assistant", "content": "391"}, {"role": "user", "content": "thanks"}]}
    r = http.post("/p/deepseek/v1/chat/completions", json=body, headers=openai_headers())
    assert r.status_code == 200
    assert r.json()["choices"][0]["message"]["reasoning_content"]


# ------------------------------------------------------------------ Responses
FN = {"type": "function", "name": "calculator", "description": "arithmetic",
      "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}
R_USER = {"role": "user", "content": "What is 17 times 23?"}
R_CALL = {"type": "function_call", "call_id": "call_1", "name": "calculator",
          "arguments": '{"expression": "17 * 23"}'}
R_OUT = {"type": "function_call_output", "call_id": "call_1", "output": "391"}


def responses(items, **over):
    return {"model": "gpt-5.5", "input": items, "tools": [FN], "store": False, **over}


def _reasoning_turn(http):
    first = http.post("/v1/responses", headers=openai_headers(), json=responses(
        [R_USER], reasoning={"effort": "low"}, include=["reasoning.encrypted_content"])).json()
    reasoning, call = first["output"]
    call = {k: v for k, v in call.items() if k not in ("id", "status")}
    return reasoning, call, {"type": "function_call_output", "call_id": call["call_id"],
                             "output": "391"}


def test_responses_output_without_call_is_rejected(http):
    r = http.post("/v1/responses", headers=openai_headers(), json=responses([R_USER, R_OUT]))
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "No tool call found for function call output with call_id call_1.")
    ok = http.post("/v1/responses", headers=openai_headers(), json=responses([R_USER, R_CALL, R_OUT]))
    assert ok.status_code == 200 and "391" in ok.text


def test_responses_replayed_item_id_under_store_false_is_404(http):
    r = http.post("/v1/responses", headers=openai_headers(),
                  json=responses([R_USER, dict(R_CALL, id="fc_abc"), R_OUT]))
    assert r.status_code == 404
    assert "Items are not persisted when `store` is set to false" in r.json()["error"]["message"]
    ok = http.post("/v1/responses", headers=openai_headers(),
                   json=responses([R_USER, dict(R_CALL, id="fc_abc"), R_OUT], store=True))
    assert ok.status_code == 200


def test_responses_reasoning_without_its_following_item_is_rejected(http):
    reasoning, call, out = _reasoning_turn(http)
    r = http.post("/v1/responses", headers=openai_headers(),
                  json=responses([R_USER, reasoning, out]))
    assert r.status_code == 400
    assert "was provided without its required following item" in r.json()["error"]["message"]
    ok = http.post("/v1/responses", headers=openai_headers(),
                   json=responses([R_USER, reasoning, call, out]))
    assert ok.status_code == 200, ok.text


def test_responses_tampered_encrypted_content_is_rejected(http):
    reasoning, call, out = _reasoning_turn(http)
    token = reasoning["encrypted_content"]
    tampered = dict(reasoning, encrypted_content=token[:-6] + ("A" if token[-6] != "A" else "B")
                    + token[-5:])
    r = http.post("/v1/responses", headers=openai_headers(),
                  json=responses([R_USER, tampered, call, out]))
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "invalid_encrypted_content"


def test_responses_omitting_reasoning_items_is_allowed(http):
    _, call, out = _reasoning_turn(http)
    r = http.post("/v1/responses", headers=openai_headers(),
                  json=responses([R_USER, call, out], reasoning={"effort": "low"}))
    assert r.status_code == 200


def test_responses_previous_response_id_not_stored_is_a_clear_400(http):
    first = http.post("/v1/responses", headers=openai_headers(), json=responses([R_USER])).json()
    r = http.post("/v1/responses", headers=openai_headers(),
                  json=responses([R_OUT], previous_response_id=first["id"]))
    assert r.status_code == 400
    assert r.json()["error"] == {"message": f"Previous response with id '{first['id']}' not found.",
                                 "type": "invalid_request_error", "param": "previous_response_id",
                                 "code": "previous_response_not_found"}
