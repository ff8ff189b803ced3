"""The agent loop over the real Client and an emulator in script mode: each model turn is
scripted exactly (tool calls with given arguments, malformed ones included), and what the
agent sent is read back from the emulator's request log."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from modelwire import AsyncClient, Client
from modelwire.agent import ELIDED, Agent, ToolFinished
from modelwire.demo_tools import calculator
from modelwire.emulator import Emulator
from modelwire.tools import tool


@pytest.fixture(scope="module")
def emu():
    with Emulator() as running:
        yield running


@pytest.fixture
def script(emu):
    """Set the model's turns for one test; the log since then is `sent()`."""
    start = len(emu.requests()["requests"])

    class Script:
        def __call__(self, *turns):
            emu.set_script(list(turns))

        def sent(self) -> list[list[dict]]:
            return [r["body"]["messages"] for r in emu.requests()["requests"][start:]]

    yield Script()
    emu.set_script(None)


def calls(*specs):
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in specs]}


def text(t):
    return {"text": t}


def client(emu, cls=Client):
    return cls("emulator/emulator-1", base_url=emu.openai_base_url())


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


def test_single_tool_call_then_answer(emu, script):
    script(calls(("calculator", {"expression": "17 * 23"})), text("17 times 23 is 391."))
    with client(emu) as c:
        agent = Agent(c, tools=[calculator])
        result = agent.run("What is 17 times 23?")
    assert result.stop_reason == "done" and result.text == "17 times 23 is 391."
    tool_msgs = [m for m in result.messages if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0]["content"] == "391"
    second = script.sent()[1]
    assert second[-1]["role"] == "tool" and second[-1]["content"] == "391"
    assert_valid_history(agent.messages)


def test_parallel_calls_run_concurrently_under_arun_and_results_keep_call_order(emu, script):
    started = []

    @tool
    async def slow(tag: str) -> str:
        """Slow tool."""
        started.append(tag)
        await asyncio.sleep(0.05 if tag == "a" else 0)
        return tag.upper()

    script(calls(("slow", {"tag": "a"}), ("slow", {"tag": "b"})), text("done"))
    events = []

    async def go():
        async with client(emu, AsyncClient) as c:
            agent = Agent(c, tools=[slow])
            async for ev in agent.astream("go"):
                events.append(ev)
            return agent

    agent = asyncio.run(go())
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.content for f in finished] == ["A", "B"]
    assert started == ["a", "b"]
    assert_valid_history(agent.messages)


def test_chained_calls_and_history_persists_across_runs(emu, script):
    script(calls(("calculator", {"expression": "2+2"})), calls(("calculator", {"expression": "4*10"})),
           text("40"), text("bye"))
    with client(emu) as c:
        agent = Agent(c, tools=[calculator], system="be brief")
        first = agent.run("compute")
        assert first.iterations == 3 and first.text == "40"
        assert [m["content"] for m in first.messages if m["role"] == "tool"] == ["4", "40"]
        second = agent.run("thanks")
    assert second.text == "bye"
    assert agent.messages[0] == {"role": "system", "content": "be brief"}
    assert [m["role"] for m in agent.messages].count("user") == 2
    assert script.sent()[-1][0] == {"role": "system", "content": "be brief"}
    agent.reset()
    assert agent.messages == [{"role": "system", "content": "be brief"}]


@pytest.mark.parametrize(
    "args, expected",
    [
        ('{"expression": ', "not valid JSON"),
        ({"expr": "1"}, "invalid arguments"),
        ({"expression": "1/0"}, "CalculatorError: division by zero"),
    ],
    ids=["malformed-json", "schema-violation", "tool-raises"],
)
def test_tool_failures_become_readable_results(emu, script, args, expected):
    script(calls(("calculator", args)), text("sorry"))
    with client(emu) as c:
        result = Agent(c, tools=[calculator]).run("x")
    tool_msg = next(m for m in result.messages if m["role"] == "tool")
    assert expected in tool_msg["content"] and tool_msg["content"].startswith("error:")
    assert result.stop_reason == "done"


def test_unknown_tool_and_timeout(emu, script):
    @tool(timeout=0.05)
    def sleepy() -> str:
        """Sleeps."""
        time.sleep(0.5)
        return "late"

    script(calls(("nope", {}), ("sleepy", {})), text("ok"))
    with client(emu) as c:
        result = Agent(c, tools=[sleepy]).run("x")
    contents = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert contents == ["error: unknown tool 'nope'", "error: sleepy timed out after 0.05 s"]


def test_max_iterations_stops_with_a_valid_history(emu, script):
    script(*[calls(("calculator", {"expression": "1"})) for _ in range(3)])
    with client(emu) as c:
        agent = Agent(c, tools=[calculator], max_iterations=3)
        result = agent.run("loop")
    assert result.stop_reason == "max_iterations" and result.iterations == 3
    assert_valid_history(agent.messages)


def test_interrupt_between_tools_answers_every_call(emu, script):
    stop = threading.Event()

    @tool
    def first() -> str:
        """First."""
        stop.set()
        return "one"

    script(calls(("first", {}), ("first", {})), text("resumed"))
    with client(emu) as c:
        agent = Agent(c, tools=[first], tool_threads=1)  # one at a time: the second waits
        result = agent.run("x", interrupt=stop)
        assert result.stop_reason == "interrupted"
        contents = [m["content"] for m in result.messages if m["role"] == "tool"]
        assert contents[0] == "one" and contents[1].startswith("[interrupted")
        assert_valid_history(agent.messages)
        stop.clear()
        assert agent.run("go on").text == "resumed"  # the conversation continues


def test_context_budget_elides_oldest_tool_results_only_in_what_is_sent(emu, script):
    big = "x" * 4000

    @tool
    def echo(s: str) -> str:
        """Echo a big text."""
        return s + big

    script(calls(("echo", {"s": "a"})), calls(("echo", {"s": "b"})), calls(("echo", {"s": "c"})),
           text("done"))
    with client(emu) as c:
        agent = Agent(c, tools=[echo], context_budget=2500)
        agent.run("go")
    last_sent = script.sent()[-1]
    sent_tools = [m["content"] for m in last_sent if m["role"] == "tool"]
    assert sent_tools[0] == ELIDED and sent_tools[-1].startswith("c")
    kept = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert all(c.endswith(big) for c in kept)  # the history keeps everything


def test_stream_yields_model_and_tool_events_in_order(emu, script):
    script(calls(("calculator", {"expression": "1+1"})), text("2"))
    with client(emu) as c:
        kinds = [type(e).__name__ for e in Agent(c, tools=[calculator]).stream("1+1?")]
    assert kinds.index("ToolStarted") < kinds.index("ToolFinished") < kinds.index("RunFinished")
    assert kinds[0] == "ModelEvent" and kinds[-1] == "RunFinished"


def test_cancelling_arun_answers_every_started_call(emu, script):
    gate = asyncio.Event()

    @tool
    async def forever() -> str:
        """Never returns on its own."""
        gate.set()
        await asyncio.sleep(60)
        return "never"

    script(calls(("forever", {})))

    async def go():
        async with client(emu, AsyncClient) as c:
            agent = Agent(c, tools=[forever])
            task = asyncio.create_task(agent.arun("x"))
            await asyncio.wait_for(gate.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return agent

    agent = asyncio.run(go())
    assert_valid_history(agent.messages)
    assert agent.messages[-1]["content"].startswith("[interrupted")
