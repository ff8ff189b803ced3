"""The tool-calling loop: ``Agent``.

One turn: send the history, stream the answer, run the tools it called, append
their results, repeat until the model answers without tools (``done``), the
iteration limit is reached (``max_iterations``) or the caller interrupts
(``interrupted``).

Invariants, whatever happens: the caller's messages are never rewritten (what
is *sent* may be trimmed by the context budget, the history keeps
everything); every tool call gets exactly one result, in the calls' order; an
interrupted run leaves a history that can continue with a new user turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from ._agent_stream import AgentStream, AsyncAgentStream
from ._agent_tools import ToolOutcome, call_tool_async, call_tool_sync, interrupted_outcome
from .completion import Completion
from .events import StreamEvent
from .tools import Tool
from .tools import tool as make_tool
from .types import ContentPart, Message, ToolCall, Usage, empty_usage

if TYPE_CHECKING:
    from .client import AsyncClient, Client
    from .config import Config
    from .routing import Route, StickyState

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "AgentStream",
    "AsyncAgentStream",
    "ModelEvent",
    "RunFinished",
    "StopReason",
    "ToolFinished",
    "ToolStarted",
]

StopReason: TypeAlias = Literal["done", "max_iterations", "interrupted"]

ELIDED = "[tool result elided to fit the context budget; ask again if it is needed]"


# ----------------------------------------------------------------- events
@dataclass(frozen=True, slots=True)
class ModelEvent:
    """A normalized stream event from the model (text, reasoning, tool-call deltas...)."""

    event: StreamEvent
    iteration: int


@dataclass(frozen=True, slots=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    name: str
    content: str | list[ContentPart]
    is_error: bool
    seconds: float


@dataclass(frozen=True, slots=True)
class RunFinished:
    result: AgentResult


AgentEvent: TypeAlias = ModelEvent | ToolStarted | ToolFinished | RunFinished
# a user message's text, or messages to append as they are
Prompt: TypeAlias = "str | Sequence[Message]"
# what stops an asynchronous run early: either kind of event
Interrupt: TypeAlias = "asyncio.Event | threading.Event | None"


@dataclass(frozen=True, slots=True)
class AgentResult:
    """``completion``: the last model turn; ``messages``: what this run added to the history;
    ``completions``: every model turn of the run; ``usage`` and ``cost``: their totals."""

    completion: Completion | None
    messages: list[Message]
    stop_reason: StopReason
    iterations: int = 0
    completions: tuple[Completion, ...] = field(default=(), repr=False)
    route: Route | None = None  # the smart-routing decision for this run, when routing is on

    @property
    def text(self) -> str:
        return self.completion.text if self.completion is not None else ""

    @property
    def usage(self) -> Usage:
        """Token counts summed over every model turn of the run (the keys of
        :attr:`Completion.usage`; ``raw`` is empty: providers' own objects do not add up)."""
        total = empty_usage()
        for completion in self.completions:
            for key, value in completion.usage.items():
                if key != "raw" and isinstance(value, int):
                    total[key] = total.get(key, 0) + value  # type: ignore[literal-required]
        return total

    @property
    def cost(self) -> float | None:
        """USD for the whole run; None when any turn's price is unknown (a partial sum
        would pass for the total)."""
        costs = [c.cost for c in self.completions]
        if not costs or any(c is None for c in costs):
            return None
        return sum(costs)  # type: ignore[arg-type]


def _hold_fallback(client: Client | AsyncClient) -> contextlib.ExitStack:
    """Hold the client's sticky fallback for a run (seed 4.8: once the primary keeps
    failing, the rest of the loop uses the fallback); a client without one is fine."""
    stack = contextlib.ExitStack()
    hold = getattr(client, "hold_fallback", None)
    if callable(hold):
        stack.enter_context(cast("contextlib.AbstractContextManager[None]", hold()))
    return stack


# ------------------------------------------------------------------ agent
class Agent:
    """A conversation with tools. History persists across :meth:`run` calls.

    Args:
        client: A :class:`~modelwire.Client` (for :meth:`run` / :meth:`stream`) or an
            :class:`~modelwire.AsyncClient` (for :meth:`arun` / :meth:`astream`).
        tools: :class:`~modelwire.tools.Tool` values or plain functions (made tools with
            :func:`~modelwire.tool`); the first of two with one name wins.
        system: The system prompt, sent first on every turn.
        max_iterations: Model turns per run before it stops with ``max_iterations``.
        routing: Smart routing: a config, or True to load the user's (simple turns go to
            the cheap model; docs/guides/smart-routing.md).
        context_budget: Estimated tokens: the oldest tool results are replaced by a
            marker in what is sent (the history keeps them).
        thinking: Reasoning effort for every turn (``low`` ... ``max``).
        streaming: False sends non-streaming requests.
        tool_threads: The most tool calls of one turn run at once by the sync loop
            (default 8; 1: one after another). Results keep the calls' order.
        **request_options: Passed to every request (``max_tokens``, ``temperature``...).
    """

    def __init__(
        self,
        client: Client | AsyncClient,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        system: str | None = None,
        max_iterations: int = 20,
        routing: Config | bool | None = None,
        context_budget: int | None = None,
        thinking: str | None = None,
        streaming: bool = True,
        tool_threads: int = 8,
        **request_options: Any,
    ) -> None:
        if max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        if tool_threads < 1:
            raise ValueError("tool_threads must be at least 1")
        self.tool_threads = tool_threads
        self.client = client
        self.tools: dict[str, Tool] = {}
        for t in tools:
            made = t if isinstance(t, Tool) else make_tool(t)
            self.tools.setdefault(made.name, made)  # first definition wins
        self.system = system
        self.max_iterations = max_iterations
        self.routing = routing
        self.context_budget = context_budget
        self.thinking = thinking
        self.streaming = streaming  # False: non-streaming requests (client.complete)
        self.request_options = request_options
        self._history: list[Message] = []
        self._elide_upto = 0  # tool results before this history index are elided when sent
        self._sticky: StickyState | None = None  # routing memory of this conversation
        self._cheap_client: Client | AsyncClient | None = None
        self._active = client  # the client serving the current run
        self.last_route: Route | None = None

    # ---------------------------------------------------------- history
    @property
    def messages(self) -> list[Message]:
        """The full history (a copy; the system prompt first when set)."""
        head: list[Message] = [{"role": "system", "content": self.system}] if self.system else []
        return copy.deepcopy(head + self._history)

    def reset(self) -> None:
        """Start a new conversation."""
        self._history = []
        self._elide_upto = 0
        self._sticky = None
        self.last_route = None

    # ---------------------------------------------------------- routing
    def _route(self, prompt: Prompt) -> None:
        """Pick the client for this run: smart routing sends simple turns to the cheap
        model; once a turn needed the primary, the conversation stays there."""
        self._active = self.client
        if not self.routing:
            return
        from .routing import StickyState, choose_route, turn_facts

        config = self.routing
        if config is True:
            from .config import load_config

            config = self.routing = load_config()
        if not config.smart_routing.enabled or not config.smart_routing.cheap_model:
            return
        if self._sticky is None:
            self._sticky = StickyState()
        messages: Sequence[Message] = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        text, has_results, has_images = turn_facts(messages)
        route = choose_route(text, config, has_tool_results=has_results, has_images=has_images,
                             sticky_state=self._sticky, primary=getattr(self.client, "model", None))
        self.last_route = route
        if route.kind == "cheap":
            if self._cheap_client is None:
                self._cheap_client = type(self.client)(route.model_name, config=config)
            self._active = self._cheap_client

    # ------------------------------------------------------------- sync
    def run(self, prompt: Prompt, *, interrupt: threading.Event | None = None) -> AgentResult:
        """Run until the model answers without tools, ``max_iterations`` or ``interrupt``
        (a ``threading.Event``); ``prompt`` is a user message or a list of messages."""
        result = None
        for ev in self.stream(prompt, interrupt=interrupt):
            if isinstance(ev, RunFinished):
                result = ev.result
        assert result is not None
        return result

    def stream(
        self, prompt: Prompt, *, interrupt: threading.Event | None = None
    ) -> AgentStream:
        """Run, yielding the run's events (:class:`ModelEvent`, :class:`ToolStarted`,
        :class:`ToolFinished`, then :class:`RunFinished`); ``.text()`` yields only the
        model's text, and ``.result`` holds the :class:`AgentResult` once done."""
        return AgentStream(self._run_events(prompt, interrupt))

    def _run_events(
        self, prompt: Prompt, interrupt: threading.Event | None
    ) -> Iterator[AgentEvent]:
        self._route(prompt)
        run = _Run(self, prompt, self._history)
        held = _hold_fallback(self._active)
        try:
            for iteration in range(1, self.max_iterations + 1):
                run.iterations = iteration
                if interrupt is not None and interrupt.is_set():
                    yield from run.finish("interrupted")
                    return
                client = cast("Client", self._active)  # run/stream are the sync side
                if self.streaming:
                    handle = client.stream(self._outgoing(), **self._options(interrupt))
                    for event in handle:
                        yield ModelEvent(event, iteration)
                    completion = handle.completion
                    assert completion is not None  # set once the stream has been read to its end
                else:
                    completion = client.complete(self._outgoing(), **self._options(None))
                calls, ending = run.settle(completion)
                if ending is not None:
                    yield from ending
                    return
                if interrupt is not None and interrupt.is_set():
                    yield from run.close_calls(calls, interrupted=True)
                    yield from run.finish("interrupted")
                    return
                for call in calls:
                    yield run.started(call)
                for call, outcome in zip(calls, self._call_tools(calls, interrupt)):
                    yield run.finished(call, outcome)  # results in the calls' order
                if interrupt is not None and interrupt.is_set():
                    yield from run.finish("interrupted")
                    return
            yield from run.finish("max_iterations")
        except GeneratorExit:
            run.close_open_calls()
            raise
        finally:
            held.close()

    # ------------------------------------------------------------ async
    async def arun(self, prompt: Prompt, *, interrupt: Interrupt = None) -> AgentResult:
        """As :meth:`run`, with an :class:`~modelwire.AsyncClient` (``interrupt``: an
        ``asyncio.Event`` or ``threading.Event``; cancelling the task works too)."""
        result = None
        async for ev in self.astream(prompt, interrupt=interrupt):
            if isinstance(ev, RunFinished):
                result = ev.result
        assert result is not None
        return result

    def astream(
        self, prompt: Prompt, *, interrupt: Interrupt = None
    ) -> AsyncAgentStream:
        """As :meth:`stream`, for ``async for`` (``.text()`` too)."""
        return AsyncAgentStream(self._arun_events(prompt, interrupt))

    def _call_tools(self, calls: list[ToolCall],
                    interrupt: threading.Event | None) -> list[ToolOutcome]:
        """Run one turn's tool calls at once, at most ``tool_threads`` at a time (as
        ``arun`` does with tasks); a call not started before an interrupt is not run."""

        def one(call: ToolCall) -> ToolOutcome:
            if interrupt is not None and interrupt.is_set():
                return interrupted_outcome()
            return call_tool_sync(self.tools.get(call["function"]["name"]), call)

        if len(calls) == 1 or self.tool_threads == 1:  # no thread to pay for
            return [one(call) for call in calls]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(len(calls), self.tool_threads),
                                thread_name_prefix="modelwire-tool") as pool:
            return list(pool.map(one, calls))

    async def _arun_events(
        self, prompt: Prompt, interrupt: Interrupt
    ) -> AsyncIterator[AgentEvent]:
        self._route(prompt)
        run = _Run(self, prompt, self._history)
        held = _hold_fallback(self._active)
        try:
            for iteration in range(1, self.max_iterations + 1):
                run.iterations = iteration
                if interrupt is not None and interrupt.is_set():
                    for ev in run.finish("interrupted"):
                        yield ev
                    return
                client = cast("AsyncClient", self._active)  # arun/astream are the async side
                if self.streaming:
                    handle = client.stream(self._outgoing(), **self._options(interrupt))
                    if inspect.isawaitable(handle):
                        handle = await handle
                    async for event in handle:
                        yield ModelEvent(event, iteration)
                    completion = handle.completion
                    assert completion is not None  # set once the stream has been read to its end
                else:
                    completion = await client.complete(self._outgoing(), **self._options(None))
                calls, ending = run.settle(completion)
                if ending is not None:
                    for ev in ending:
                        yield ev
                    return
                for call in calls:
                    yield run.started(call)
                outcomes = await asyncio.gather(
                    *(call_tool_async(self.tools.get(c["function"]["name"]), c) for c in calls)
                )
                for call, outcome in zip(calls, outcomes):  # results in the calls' order
                    yield run.finished(call, outcome)
            for ev in run.finish("max_iterations"):
                yield ev
        except (asyncio.CancelledError, GeneratorExit):
            run.close_open_calls()
            raise
        finally:
            held.close()

    # ---------------------------------------------------------- request
    def _options(self, interrupt: Interrupt) -> dict[str, Any]:
        opts = dict(self.request_options)
        if self.tools:  # names are unique already: the first definition won in __init__
            opts["tools"] = [t.spec for t in self.tools.values()]
        if self.thinking is not None:
            opts["thinking"] = self.thinking
        if interrupt is not None:
            opts["interrupt"] = interrupt
        return opts

    def _outgoing(self) -> list[Message]:
        """What is sent: a copy of the history, trimmed to the context budget."""
        sent = [copy.copy(m) for m in self._history]
        if self.context_budget:
            self._apply_budget(sent)
        if self.system:
            sent.insert(0, {"role": "system", "content": self.system})
        return sent

    def _apply_budget(self, sent: list[Message]) -> None:
        """Replace the oldest tool results by a marker until the estimate fits.

        The cut point only moves forward, and in large steps (down to 60% of
        the budget), so the sent prefix stays the same for many turns and
        prompt caches stay warm.
        """
        from .tokens import estimate_tokens as estimate

        budget = self.context_budget or 0
        for i in range(min(self._elide_upto, len(sent))):
            if sent[i].get("role") == "tool":
                sent[i] = _elided(sent[i])
        if estimate(sent) <= budget:
            return
        target = budget * 0.6
        for i in range(self._elide_upto, len(sent)):
            if sent[i].get("role") == "tool":
                sent[i] = _elided(sent[i])
                self._elide_upto = i + 1
                if estimate(sent) <= target:
                    break


def _elided(message: Message) -> Message:
    return cast("Message", {**message, "content": ELIDED})


class _Run:
    """The bookkeeping of one run: messages added, open calls, completions."""

    def __init__(self, agent: Agent, prompt: Prompt, history: list[Message]) -> None:
        self.agent = agent
        self.history = history  # the agent's own list: what this run adds goes there
        self.added: list[Message] = []
        self.completions: list[Completion] = []
        self.open_calls: dict[str, ToolCall] = {}
        self.iterations = 0
        self.started_at: dict[str, float] = {}
        if isinstance(prompt, str):
            self._append({"role": "user", "content": prompt})
        else:
            for message in prompt:
                self._append(copy.deepcopy(message))

    def _append(self, message: Message) -> None:
        self.history.append(message)
        self.added.append(message)

    def record(self, completion: Completion) -> list[ToolCall]:
        """Append the assistant turn; return its tool calls (complete ones only)."""
        self.completions.append(completion)
        message = copy.deepcopy(completion.message)
        if completion.interrupted:
            # partial reasoning text has no signature and cannot be sent back
            message.pop("reasoning_content", None)
        calls = list(message.get("tool_calls") or ())
        has_content = bool(message.get("content")) or calls or message.get("reasoning_details")
        if has_content:
            self._append(message)
        for call in calls:
            self.open_calls[call["id"]] = call
        return calls

    def settle(self, completion: Completion) -> tuple[list[ToolCall], list[AgentEvent] | None]:
        """Record a model turn: its tool calls, and the events that end the run here
        (interrupted, or answered without tools) or ``None`` when tools run next."""
        calls = self.record(completion)
        if completion.interrupted:
            return calls, [*self.close_calls(calls, interrupted=True), *self.finish("interrupted")]
        if not calls:
            return calls, list(self.finish("done"))
        return calls, None

    def started(self, call: ToolCall) -> ToolStarted:
        self.started_at[call["id"]] = time.monotonic()
        fn = call["function"]
        return ToolStarted(call["id"], fn["name"], fn.get("arguments", ""))

    def finished(self, call: ToolCall, outcome: ToolOutcome) -> ToolFinished:
        content = _fit_content(outcome.content, self.agent.client)
        self._append({"role": "tool", "tool_call_id": call["id"], "content": content})
        self.open_calls.pop(call["id"], None)
        seconds = time.monotonic() - self.started_at.get(call["id"], time.monotonic())
        return ToolFinished(call["id"], call["function"]["name"], content, outcome.is_error, seconds)

    def close_calls(self, calls: list[ToolCall], *, interrupted: bool) -> Iterator[ToolFinished]:
        for call in calls:
            if call["id"] in self.open_calls:
                yield self.finished(call, interrupted_outcome())

    def close_open_calls(self) -> None:
        """On cancellation: every started call still gets a result (the history stays valid)."""
        for call in list(self.open_calls.values()):
            self.finished(call, interrupted_outcome())

    def finish(self, reason: StopReason) -> Iterator[AgentEvent]:
        if reason == "interrupted":
            yield from self.close_calls(list(self.open_calls.values()), interrupted=True)
        result = AgentResult(
            completion=self.completions[-1] if self.completions else None,
            messages=copy.deepcopy(self.added),
            stop_reason=reason,
            iterations=self.iterations,
            completions=tuple(self.completions),
            route=self.agent.last_route,
        )
        yield RunFinished(result)


def _fit_content(content: str | list[ContentPart], client: Client | AsyncClient) -> str | list[ContentPart]:
    """Images in a tool result go only where the provider sees images; else a note says why."""
    if isinstance(content, str):
        return content
    profile = getattr(client, "profile", None)
    if profile is None or getattr(profile, "vision", True):
        return content
    parts: list[ContentPart] = []
    for part in content:
        if part.get("type") in ("image_url", "file", "input_audio"):
            parts.append({
                "type": "text",
                "text": f"[{part['type']} omitted: provider {profile.name!r} does not accept images]",
            })
        else:
            parts.append(part)
    return parts
