"""What an agent author touches first: text streaming in one line, a run's total usage
and cost, and a turn's tool calls run at once by the sync loop (results in order)."""

from __future__ import annotations

import asyncio
import threading

import pytest

import modelwire
from modelwire import Agent, AsyncClient, Client, tool
from modelwire.emulator import Emulator

PRICE = {"input": 1.0, "output": 2.0}  # USD per million tokens: easy sums


@pytest.fixture(scope="module")
def emu():
    with Emulator() as running:
        yield running


@pytest.fixture
def script(emu):
    def set_turns(*turns):
        emu.set_script(list(turns))

    yield set_turns
    emu.set_script(None)


def _client(emu, cls=Client, **kw):
    return cls("emulator/emulator-1", base_url=emu.openai_base_url(), **kw)


def _calls(*names):
    return {"tool_calls": [{"name": n, "arguments": {}} for n in names]}


def test_the_stream_events_are_exported_from_modelwire_itself():
    for name in ("TextDelta", "ReasoningDelta", "ToolCallStart", "ToolCallDelta", "ToolCallEnd",
                 "UsageEvent", "Finish", "StreamError", "ModelEvent", "ToolStarted",
                 "ToolFinished", "RunFinished", "Model", "Price", "RetryPolicy", "Timeouts"):
        assert name in modelwire.__all__ and getattr(modelwire, name) is not None


def test_client_stream_text_yields_only_the_answer_text(emu, script):
    script({"text": "Hello there", "reasoning": "thinking it over"})
    with _client(emu) as client:
        stream = client.stream([{"role": "user", "content": "hi"}])
        pieces = list(stream.text())
    assert "".join(pieces) == "Hello there" == stream.completion.text
    assert all(isinstance(p, str) for p in pieces)


def test_leaving_the_text_loop_early_closes_the_stream(emu, script):
    script({"text": "one two three four five six seven eight nine ten " * 20})
    with _client(emu) as client:
        stream = client.stream([{"role": "user", "content": "hi"}])
        for _ in stream.text():
            break
        assert stream.completion is not None and stream.completion.interrupted


def test_async_client_stream_text(emu, script):
    script({"text": "Hello async"})

    async def go():
        async with _client(emu, AsyncClient) as client:
            return "".join([t async for t in client.stream([{"role": "user", "content": "hi"}]).text()])

    assert asyncio.run(go()) == "Hello async"


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def test_agent_stream_text_spans_the_turns_and_keeps_the_result(emu, script):
    script(_calls("ping"), {"text": "got pong"})
    with _client(emu) as client:
        stream = Agent(client, tools=[ping]).stream("go")
        text = "".join(stream.text())
    assert text == "got pong"
    assert stream.result is not None and stream.result.stop_reason == "done"
    assert [m["content"] for m in stream.result.messages if m["role"] == "tool"] == ["pong"]


def test_async_agent_stream_text(emu, script):
    script(_calls("ping"), {"text": "async pong"})

    async def go():
        async with _client(emu, AsyncClient) as client:
            stream = Agent(client, tools=[ping]).astream("go")
            return "".join([t async for t in stream.text()]), stream.result

    text, result = asyncio.run(go())
    assert text == "async pong" and result.stop_reason == "done"


def test_sync_run_runs_one_turns_tool_calls_at_once_and_keeps_their_order(emu, script):
    # each call waits for the other: run one after another, the barrier breaks
    both = threading.Barrier(2, timeout=5)

    @tool
    def left() -> str:
        """Left."""
        both.wait()
        return "L"

    @tool
    def right() -> str:
        """Right."""
        both.wait()
        return "R"

    script(_calls("right", "left"), {"text": "done"})
    with _client(emu) as client:
        result = Agent(client, tools=[left, right]).run("go")
    assert [m["content"] for m in result.messages if m["role"] == "tool"] == ["R", "L"]


def test_tool_threads_bounds_the_pool():
    with pytest.raises(ValueError, match="tool_threads"):
        Agent(object(), tool_threads=0)


def test_run_usage_sums_every_turn_and_cost_follows_the_price(emu, script):
    script(_calls("ping"), {"text": "total"})
    with _client(emu, prices={"emulator/emulator-1": PRICE}) as client:
        result = Agent(client, tools=[ping]).run("go")
    first, second = result.completions
    assert set(result.usage) == set(first.usage)
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        assert result.usage[key] == first.usage[key] + second.usage[key] > 0
    expected = (result.usage["prompt_tokens"] * 1.0 + result.usage["completion_tokens"] * 2.0) / 1e6
    assert first.cost is not None and result.cost == pytest.approx(expected)


def test_cost_is_none_when_the_price_is_unknown(emu, script):
    script({"text": "free?"})
    with _client(emu) as client:
        result = Agent(client).run("go")
    assert result.completion.cost is None and result.cost is None
    assert result.usage["total_tokens"] > 0
