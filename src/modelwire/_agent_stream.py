"""What :meth:`Agent.stream` and :meth:`Agent.astream` return: the run's events, plus
``text()`` for the common case of only printing the answer, and ``result`` once done.

The events are the agent's own (``ModelEvent``, ``ToolStarted``, ``ToolFinished``,
``RunFinished``); ``text()`` unwraps the model's ``TextDelta`` pieces so a caller needs
no nested ``isinstance`` to print them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Self

from .events import TextDelta

if TYPE_CHECKING:
    from .agent import AgentEvent, AgentResult

__all__ = ["AgentStream", "AsyncAgentStream"]


def _text_of(event: AgentEvent) -> str | None:
    inner = getattr(event, "event", None)  # a ModelEvent wraps the model's stream event
    return inner.text if type(inner) is TextDelta else None


class AgentStream:
    """Iterate for the run's events; ``result`` holds the :class:`AgentResult` once the
    run finished. ``close()`` ends the run early (every started tool call gets a result)."""

    def __init__(self, events: Iterator[AgentEvent]) -> None:
        self.result: AgentResult | None = None
        self._events = events

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> AgentEvent:
        event = next(self._events)
        result = getattr(event, "result", None)
        if result is not None:
            self.result = result
        return event

    def text(self) -> Iterator[str]:
        """The model's text across every turn of the run, piece by piece:
        ``for text in agent.stream("hi").text():``; tools still run in between."""
        try:
            for event in self:
                text = _text_of(event)
                if text is not None:
                    yield text
        finally:
            self.close()

    def close(self) -> None:
        close = getattr(self._events, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncAgentStream:
    """As :class:`AgentStream`, for ``async for`` (:meth:`Agent.astream`)."""

    def __init__(self, events: AsyncIterator[AgentEvent]) -> None:
        self.result: AgentResult | None = None
        self._events = events

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> AgentEvent:
        event = await self._events.__anext__()
        result = getattr(event, "result", None)
        if result is not None:
            self.result = result
        return event

    async def text(self) -> AsyncIterator[str]:
        """``async for text in agent.astream("hi").text():`` (see :meth:`AgentStream.text`)."""
        try:
            async for event in self:
                text = _text_of(event)
                if text is not None:
                    yield text
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        aclose = getattr(self._events, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
