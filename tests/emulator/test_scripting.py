"""Turns scripted in Python, through the session emulator that ``Client("emulator/...")``
shares with the pytest fixture."""

from __future__ import annotations

import httpx
import pytest

from modelwire import Agent, Client
from modelwire.emulator import answer, api_error, shared_emulator, tool_call
from modelwire.errors import ModelwireError
from modelwire.tools import tool

MODELS = ["emulator/emulator-1", "emulator-anthropic/claude-sonnet-4-6",
          "emulator-responses/gpt-5-mini"]


@tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city.
    """
    return f"18 C and sunny in {city}"


def test_the_fixture_is_the_emulator_clients_use_without_a_base_url(emu):
    assert emu is shared_emulator()
    emu.set_faults([{"fault": "unauthorized", "model": "emulator-1", "times": 1}])
    with Client("emulator/emulator-1") as client, pytest.raises(ModelwireError):
        client.complete([{"role": "user", "content": "hi"}])
    assert emu.requests()["faults"][0]["fired"] == 1


@pytest.mark.parametrize("model", MODELS)
def test_a_function_scripts_each_turn_of_an_agent(emu, model):
    seen = []

    def turn(request):
        seen.append((request.n, request.tool_rounds, request.question,
                     [(r.name, r.arguments, r.content) for r in request.tool_results]))
        if request.tool_rounds == 0:
            return answer(reasoning="I need the weather first.",
                          calls=[tool_call("get_weather", city="Oslo")])
        return answer(f"Scripted: {request.tool_results[0].content}.")

    emu.script(turn)
    with Client(model) as client:
        result = Agent(client, tools=[get_weather], thinking="low").run("How is it outside?")
    assert result.text == "Scripted: 18 C and sunny in Oslo."
    assert seen == [(1, 0, "How is it outside?", []),
                    (2, 1, "How is it outside?",
                     [("get_weather", {"city": "Oslo"}, "18 C and sunny in Oslo")])]
    first = next(m for m in result.messages if m["role"] == "assistant")
    assert first["reasoning_content"] == "I need the weather first."


def test_strings_dicts_none_and_lists_of_steps(emu):
    ask = [{"role": "user", "content": "What is 17 times 23?"}]
    steps = ["plain text", {"text": "from a dict"}, lambda request: None,
             lambda request: request.default().text.upper()]
    with emu.scripted(steps), Client("emulator/emulator-1") as client:
        texts = [client.complete(ask).text for _ in steps]
    assert texts == ["plain text", "from a dict", "17 * 23 = 391. The answer is 391.",
                     "17 * 23 = 391. THE ANSWER IS 391."]
    assert emu.backend.script is None  # scripted() put the previous (none) back


def test_scripted_errors_and_a_raising_function_answer_in_the_protocols_shape(emu):
    body = {"model": "emulator-1", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": "Bearer sk-fake-key-0001"}
    url = emu.openai_base_url() + "/chat/completions"
    emu.script(lambda request: api_error(429, "slow down", type="rate_limit_error",
                                         headers={"retry-after": "7"}))
    limited = httpx.post(url, json=body, headers=headers)
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "7")
    assert limited.json()["error"]["type"] == "rate_limit_error"

    def broken(request):
        return 1 / 0

    emu.script(broken)
    failed = httpx.post(url, json=body, headers=headers)
    assert failed.status_code == 500 and failed.headers["x-should-retry"] == "false"
    assert failed.json()["error"]["message"] == (
        "emulator script function broken raised ZeroDivisionError: division by zero")


def test_an_answer_of_the_wrong_type_is_named(emu):
    emu.script(lambda request: 42)
    r = httpx.post(emu.openai_base_url() + "/chat/completions",
                   json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                   headers={"authorization": "Bearer sk-fake-key-0001"})
    assert r.status_code == 500 and "returned int" in r.json()["error"]["message"]


def test_tool_call_takes_a_dict_keywords_or_json_text():
    assert tool_call("f", {"a": 1}, b=2).arguments == '{"a": 1, "b": 2}'
    assert tool_call("f", '{"raw": true}').arguments == '{"raw": true}'
    assert answer(calls=[tool_call("f")]).finish == "tool_calls"
    assert answer("cut", finish="length").finish == "length"
    with pytest.raises(ValueError, match="finish"):
        answer(finish="done")
