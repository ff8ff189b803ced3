"""Sticky fallback: once a call fell back, later calls of the same Client start at the
model that served, for ``fallback_stick_s`` seconds; then one call probes the primary.

Driven through real HTTP against the emulator; backoff waits are recorded by an
injected sleeper and the window's clock is injected (nothing waits for real).
"""

from __future__ import annotations

import pytest

from modelwire import Client
from modelwire.config import config_from_dict
from modelwire.resilience import RetryPolicy

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
STEADY = RetryPolicy(jitter=0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _config(wire, **top):
    entry = {"provider": "custom", "model": wire.model, "api_mode": "chat_completions",
             "base_url": wire.base_url("chat_completions"), "api_key_env": "FAKE_KEY"}
    return config_from_dict({"models": {
        "primary": entry,
        "backup": {**entry, "model": wire.model + "-2"},
    }, "fallback": ["backup"], **top})


def _models(wire):
    return [r["body"]["model"] for r in wire.requests()]


@pytest.fixture
def chain(wire, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.fault("server_error")  # the primary answers 500 every time
    return _config(wire)


def test_second_call_skips_the_failing_primary_without_any_backoff(wire, sleeps, chain):
    with Client("primary", config=chain, sleep=sleeps, retry=STEADY) as client:
        first = client.complete(HI)
        waits = list(sleeps)
        second = client.complete(HI)
    m = wire.model
    assert _models(wire) == [m] * 5 + [m + "-2", m + "-2"]
    assert waits == [2.0, 4.0, 8.0, 16.0] and sleeps == waits  # no sleep in the 2nd call
    assert first.model == second.model == m + "-2"
    assert [(a.model, a.outcome, a.error) for a in second.attempts] == [
        (m, "skipped", "primary cooling after fallback"), (m + "-2", "ok", None)]


def test_when_the_window_ends_one_probe_restores_a_primary_that_answers(wire, sleeps, chain):
    clock = Clock()
    with Client("primary", config=chain, sleep=sleeps, retry=STEADY, clock=clock,
                fallback_stick_s=60) as client:
        client.complete(HI)
        clock.now += 59
        client.complete(HI)  # still in the window
        wire.emu.clear_faults()  # the primary recovers
        clock.now += 2
        probe = client.complete(HI)
        after = client.complete(HI)
    m = wire.model
    assert _models(wire)[-4:] == [m + "-2", m + "-2", m, m]
    assert [a.outcome for a in probe.attempts] == ["ok"] and probe.model == m
    assert after.model == m


def test_a_failed_probe_falls_back_at_once_and_starts_a_new_window(wire, sleeps, chain):
    clock = Clock()
    with Client("primary", config=chain, sleep=sleeps, retry=STEADY, clock=clock,
                fallback_stick_s=60) as client:
        client.complete(HI)
        sleeps.clear()
        clock.now += 61
        probe = client.complete(HI)
        clock.now += 30
        later = client.complete(HI)
    m = wire.model
    assert [(a.model, a.outcome) for a in probe.attempts] == [(m, "fell_back"), (m + "-2", "ok")]
    assert sleeps == []  # the probe tries the primary once, no backoff ladder
    assert [a.outcome for a in later.attempts] == ["skipped", "ok"]  # a new window
    assert _models(wire)[-3:] == [m, m + "-2", m + "-2"]


def test_zero_turns_stickiness_off_from_the_config_too(wire, sleeps, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", KEY)
    wire.fault("server_error")
    with Client("primary", config=_config(wire, fallback_stick_s=0), sleep=sleeps,
                retry=RetryPolicy(attempts=2, jitter=0)) as client:
        client.complete(HI)
        second = client.complete(HI)
    m = wire.model
    assert [(a.model, a.outcome) for a in second.attempts] == [
        (m, "retried"), (m, "fell_back"), (m + "-2", "ok")]


def test_a_held_fallback_outlives_the_window(wire, sleeps, chain):
    # the Agent holds it for a run: the rest of the run stays on the fallback
    clock = Clock()
    with Client("primary", config=chain, sleep=sleeps, retry=STEADY, clock=clock,
                fallback_stick_s=60) as client:
        with client.hold_fallback():
            client.complete(HI)
            clock.now += 3600
            held = client.complete(HI)
        probe = client.complete(HI)
    assert [a.outcome for a in held.attempts] == ["skipped", "ok"]
    assert [a.outcome for a in probe.attempts] == ["fell_back", "ok"]


async def test_async_client_keeps_the_fallback_across_calls(wire, sleeps, chain):
    from modelwire import AsyncClient

    async with AsyncClient("primary", config=chain, sleep=sleeps, retry=STEADY) as client:
        await client.complete(HI)
        n = len(sleeps)
        events = [e async for e in client.stream(HI)]
    assert events and len(sleeps) == n
    assert _models(wire)[-1] == wire.model + "-2" and _models(wire).count(wire.model) == 5


def test_an_agent_run_stays_on_the_fallback_after_the_window(wire, sleeps, chain):
    from modelwire import Agent
    from modelwire.demo_tools import calculate
    from modelwire.tools import tool

    clock = Clock()

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression such as "17 * 23".

        Args:
            expression: The arithmetic expression to evaluate.
        """
        clock.now += 3600  # the tool outlasts the window: the run still keeps the fallback
        return str(calculate(expression))

    with Client("primary", config=chain, sleep=sleeps, retry=STEADY, clock=clock,
                fallback_stick_s=60) as client:
        result = Agent(client, tools=[calculator]).run("What is 17 times 23?")
    m = wire.model
    assert "391" in result.text
    assert _models(wire) == [m] * 5 + [m + "-2"] * 2  # no probe inside the run
