"""The Agent against the real Client and the emulator over loopback, in each protocol."""

from __future__ import annotations

import asyncio
import threading

import pytest

from modelwire import Agent, AsyncClient, Client
from modelwire.agent import ModelEvent, ToolStarted
from modelwire.demo_tools import calculator, clock
from modelwire.events import TextDelta

MODES = {
    "chat": ("emulator/emulator-1", "openai"),
    "anthropic": ("emulator-anthropic/claude-sonnet-4-5", "anthropic"),
    "responses": ("emulator-responses/gpt-5-mini", "openai"),
}


def _client(emu, mode: str, cls=Client):
    model, kind = MODES[mode]
    base = emu.anthropic_base_url() if kind == "anthropic" else emu.openai_base_url()
    return cls(model, base_url=base)


def _valid(messages):
    pending: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] == pending.pop(0)
        else:
            assert not pending
            if m["role"] == "assistant":
                pending = [c["id"] for c in m.get("tool_calls") or []]
    assert not pending


@pytest.mark.parametrize("mode", list(MODES))
def test_tool_turn_with_thinking_in_every_protocol(emulator, mode):
    with _client(emulator, mode) as client:
        agent = Agent(client, tools=[calculator], thinking="low")
        result = agent.run("What is 17 times 23?")
    assert result.stop_reason == "done" and "391" in result.text
    tool = [m for m in result.messages if m["role"] == "tool"]
    assert tool and tool[0]["content"] == "391"
    assert any(m.get("reasoning_content") for m in result.messages if m["role"] == "assistant")
    _valid(agent.messages)


@pytest.mark.parametrize("mode", list(MODES))
def test_parallel_calls_run_concurrently_under_arun(emulator, mode):
    async def go():
        async with _client(emulator, mode, AsyncClient) as client:
            agent = Agent(client, tools=[calculator, clock])
            return agent, await agent.arun("What is 17 times 23, and what time is it now on the clock?")

    agent, result = asyncio.run(go())
    names = [c["function"]["name"] for m in result.messages if m["role"] == "assistant"
             for c in m.get("tool_calls") or []]
    assert {"calculator", "clock"} <= set(names)
    _valid(agent.messages)


def test_interrupt_mid_stream_keeps_a_valid_history(emulator):
    stop = threading.Event()
    with _client(emulator, "chat") as client:
        agent = Agent(client, tools=[calculator])
        seen = []
        for ev in agent.stream("Tell me a long story about a fox in a forest", interrupt=stop):
            seen.append(ev)
            if isinstance(ev, ModelEvent) and isinstance(ev.event, TextDelta):
                stop.set()
        result = seen[-1].result
        assert result.stop_reason == "interrupted" and result.completion.interrupted
        _valid(agent.messages)
        assert agent.run("What is 2 plus 2?").stop_reason == "done"


def test_stream_shows_tool_started_before_the_answer(emulator):
    with _client(emulator, "anthropic") as client:
        events = list(Agent(client, tools=[calculator]).stream("What is 6 times 7?"))
    kinds = [type(e).__name__ for e in events]
    assert "ToolStarted" in kinds and kinds[-1] == "RunFinished"
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert started.name == "calculator"


def test_images_from_tools_become_a_note_where_the_provider_has_no_vision(emulator):
    import dataclasses

    from modelwire.tools import tool

    @tool
    def screenshot() -> list:
        """Take a screenshot."""
        return [{"type": "text", "text": "the screen"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]

    with _client(emulator, "chat") as client:
        blind = dataclasses.replace(client.profile, vision=False)
        agent = Agent(client, tools=[screenshot])
        from modelwire.agent import _fit_content

        content = _fit_content(screenshot.function(), type("C", (), {"profile": blind})())
        assert content[0] == {"type": "text", "text": "the screen"}
        assert content[1]["type"] == "text" and "does not accept images" in content[1]["text"]
        assert _fit_content(screenshot.function(), client) == screenshot.function()  # vision: kept
        assert agent.run("take a screenshot please").stop_reason == "done"
