"""A scripted stand-in for the Client, for agent tests that must not depend on HTTP."""

from __future__ import annotations

import copy
from typing import Any

from modelwire.accumulate import Accumulator
from modelwire.events import Finish, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart


def text_turn(text: str) -> list:
    return [TextDelta(text), Finish("stop")]


def calls_turn(*calls: tuple[str, str, str]) -> list:
    events: list = []
    for i, (cid, name, args) in enumerate(calls):
        events += [ToolCallStart(i, cid, name), ToolCallDelta(i, args), ToolCallEnd(i)]
    return events + [Finish("tool_calls")]


class _Stream:
    def __init__(self, events: list, interrupt: Any) -> None:
        self._events = events
        self._interrupt = interrupt
        self.completion = None

    def __iter__(self):
        acc = Accumulator(model="fake", provider="fake")
        interrupted = False
        for ev in self._events:
            if self._interrupt is not None and self._interrupt.is_set():
                interrupted = True
                break
            acc.feed(ev)
            yield ev
        self.completion = acc.result(interrupted=interrupted)

    def __aiter__(self):
        async def gen():
            for ev in self:
                yield ev
        return gen()


class ScriptedClient:
    """Answers each stream() call with the next scripted turn; records what was sent."""

    def __init__(self, turns: list[list]) -> None:
        self.turns = list(turns)
        self.sent: list[list[dict]] = []
        self.options: list[dict] = []

    def stream(self, messages, **options):
        self.sent.append(copy.deepcopy(messages))
        self.options.append(options)
        if not self.turns:
            raise AssertionError("the agent asked for more turns than scripted")
        return _Stream(self.turns.pop(0), options.get("interrupt"))
