from __future__ import annotations

import asyncio
import threading
import time

import pytest
from agent.fakes import ScriptedClient, calls_turn, text_turn

from modelwire.agent import ELIDED, Agent, ToolFinished
from modelwire.demo_tools import calculator
from modelwire.tools import tool


def assert_valid_history(messages):
    """Every tool call answered exactly once, right after its assistant turn, in order."""
    pending: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert pending and m["tool_call_id"] == pending.pop(0), messages
            continue
        assert not pending, f"calls {pending} unanswered before {m['role']}"
        if m["role"] == "assistant":
            pending = [c["id"] for c in m.get("tool_calls") or []]
    assert not pending


def test_single_tool_call_then_answer():
    client = ScriptedClient([
        calls_turn(("c1", "calculator", '{"expression": "17 * 23"}')),
        text_turn("17 times 23 is 391."),
    ])
    agent = Agent(client, tools=[calculator])
    result = agent.run("What is 17 times 23?")
    assert result.stop_reason == "done"
    assert result.text == "17 times 23 is 391."
    tool_msgs = [m for m in result.messages if m["role"] == "tool"]
    assert tool_msgs == [{"role": "tool", "tool_call_id": "c1", "content": "391"}]
    assert client.sent[1][-1] == {"role": "tool", "tool_call_id": "c1", "content": "391"}
    assert client.options[0]["tools"][0]["function"]["name"] == "calculator"
    assert_valid_history(agent.messages)


def test_parallel_calls_results_go_back_in_call_order_and_run_concurrently_under_arun():
    started = []

    @tool
    async def slow(tag: str) -> str:
        """Slow tool."""
        started.append(tag)
        await asyncio.sleep(0.05 if tag == "a" else 0)
        return tag.upper()

    client = ScriptedClient([
        calls_turn(("c1", "slow", '{"tag": "a"}'), ("c2", "slow", '{"tag": "b"}')),
        text_turn("done"),
    ])
    agent = Agent(client, tools=[slow])
    events = []

    async def go():
        async for ev in agent.astream("go"):
            events.append(ev)

    asyncio.run(go())
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(f.call_id, f.content) for f in finished] == [("c1", "A"), ("c2", "B")]
    assert started == ["a", "b"]
    assert_valid_history(agent.messages)


def test_chained_calls_and_history_persists_across_runs():
    client = ScriptedClient([
        calls_turn(("c1", "calculator", '{"expression": "2+2"}')),
        calls_turn(("c2", "calculator", '{"expression": "4*10"}')),
        text_turn("40"),
        text_turn("bye"),
    ])
    agent = Agent(client, tools=[calculator], system="be brief")
    first = agent.run("compute")
    assert first.iterations == 3 and first.text == "40"
    second = agent.run("thanks")
    assert second.text == "bye"
    assert agent.messages[0] == {"role": "system", "content": "be brief"}
    assert [m["role"] for m in agent.messages].count("user") == 2
    assert client.sent[-1][0] == {"role": "system", "content": "be brief"}
    agent.reset()
    assert agent.messages == [{"role": "system", "content": "be brief"}]


@pytest.mark.parametrize(
    "args, expected",
    [
        ('{"expression": ', "not valid JSON"),
        ('{"expr": "1"}', "invalid arguments"),
        ('{"expression": "1/0"}', "CalculatorError: division by zero"),
    ],
    ids=["malformed-json", "schema-violation", "tool-raises"],
)
def test_tool_failures_become_readable_results(args, expected):
    client = ScriptedClient([calls_turn(("c1", "calculator", args)), text_turn("sorry")])
    agent = Agent(client, tools=[calculator])
    result = agent.run("x")
    tool_msg = next(m for m in result.messages if m["role"] == "tool")
    assert expected in tool_msg["content"] and tool_msg["content"].startswith("error:")
    assert result.stop_reason == "done"


def test_unknown_tool_and_timeout():
    @tool(timeout=0.05)
    def sleepy() -> str:
        """Sleeps."""
        time.sleep(0.5)
        return "late"

    client = ScriptedClient([
        calls_turn(("c1", "nope", "{}"), ("c2", "sleepy", "{}")), text_turn("ok"),
    ])
    result = Agent(client, tools=[sleepy]).run("x")
    contents = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert contents == ["error: unknown tool 'nope'", "error: sleepy timed out after 0.05 s"]


def test_max_iterations_stops_with_a_valid_history():
    client = ScriptedClient([calls_turn((f"c{i}", "calculator", '{"expression": "1"}')) for i in range(3)])
    agent = Agent(client, tools=[calculator], max_iterations=3)
    result = agent.run("loop")
    assert result.stop_reason == "max_iterations" and result.iterations == 3
    assert_valid_history(agent.messages)


def test_interrupt_between_tools_answers_every_call():
    stop = threading.Event()

    @tool
    def first() -> str:
        """First."""
        stop.set()
        return "one"

    client = ScriptedClient([calls_turn(("c1", "first", "{}"), ("c2", "first", "{}"))])
    agent = Agent(client, tools=[first])
    result = agent.run("x", interrupt=stop)
    assert result.stop_reason == "interrupted"
    contents = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert contents[0] == "one" and contents[1].startswith("[interrupted")
    assert_valid_history(agent.messages)
    # the conversation continues with a new user turn
    stop.clear()
    client.turns.append(text_turn("resumed"))
    assert agent.run("go on").text == "resumed"


def test_context_budget_elides_oldest_tool_results_only_in_what_is_sent():
    big = "x" * 4000
    client = ScriptedClient([
        calls_turn(("c1", "echo", '{"s": "a"}')),
        calls_turn(("c2", "echo", '{"s": "b"}')),
        calls_turn(("c3", "echo", '{"s": "c"}')),
        text_turn("done"),
    ])

    @tool
    def echo(s: str) -> str:
        """Echo a big text."""
        return s + big

    agent = Agent(client, tools=[echo], context_budget=2500)
    agent.run("go")
    last_sent = client.sent[-1]
    sent_tools = [m["content"] for m in last_sent if m["role"] == "tool"]
    assert sent_tools[0] == ELIDED and sent_tools[-1].startswith("c")
    kept = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert all(c.endswith(big) for c in kept)  # the history keeps everything


def test_stream_yields_model_and_tool_events_in_order():
    client = ScriptedClient([calls_turn(("c1", "calculator", '{"expression": "1+1"}')), text_turn("2")])
    kinds = [type(e).__name__ for e in Agent(client, tools=[calculator]).stream("1+1?")]
    assert kinds.index("ToolStarted") < kinds.index("ToolFinished") < kinds.index("RunFinished")
    assert kinds[0] == "ModelEvent" and kinds[-1] == "RunFinished"
