"""The emulator's deterministic model: useful answers without any weights.

Input is a protocol-neutral :class:`Prompt` (the rule modules build it from each
wire format); output a :class:`Reply` the renderers turn into each wire format.

* The request is the last user message with text, without the context blocks coding
  agents wrap around it (``<system-reminder>``, ``<environment_context>``...).
* No tools: restates the question; answers simple arithmetic ("17 times 23" -> 391).
* Tools offered: calls the tools whose name or description fits the request
  (:mod:`.selection`), with arguments valid against each tool's JSON Schema, using the
  values the request names (:mod:`.arguments`).
* After tool results: answers using them ("17 * 23 = 391") and calls nothing more,
  so an agent's loop ends.
* Thinking requested: a short reasoning text that states the plan.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..messages.stops import find_stop
from .arguments import build_arguments
from .selection import choose, focus
from .words import arithmetic, request_text

__all__ = ["PlannedCall", "Prompt", "Reply", "ToolDef", "Turn", "arithmetic", "build_arguments",
           "conversation", "respond"]

Finish: TypeAlias = Literal["stop", "tool_calls", "length"]


@dataclass(frozen=True, slots=True)
class ToolDef:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class PlannedCall:
    name: str
    arguments: str  # JSON text
    id: str = ""  # set when the call comes from the conversation


@dataclass(frozen=True, slots=True)
class Turn:
    role: Literal["user", "assistant", "tool"]
    text: str = ""
    calls: tuple[PlannedCall, ...] = ()
    call_id: str = ""  # tool turns: which call this answers


@dataclass(frozen=True, slots=True)
class Prompt:
    turns: tuple[Turn, ...]
    tools: tuple[ToolDef, ...] = ()
    tool_choice: str = "auto"  # "auto" | "none" | "required" | a tool name
    parallel: bool = True
    thinking: bool = False
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()  # stop sequences: the text ends before the first one
    # structured output: {} for plain JSON mode, a JSON Schema for schema mode, None for text
    json_schema: dict[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True)
class Reply:
    text: str = ""
    calls: tuple[PlannedCall, ...] = ()
    reasoning: str | None = None
    finish: Finish = "stop"
    stop_sequence: str | None = None  # the stop sequence that ended the text


def conversation(turns: tuple[Turn, ...]) -> tuple[str, tuple[Turn, ...]]:
    """The latest request (agents' context blocks removed) and the tool results that
    came back for it, if any (the last run of tool turns after it)."""
    at, question = -1, ""
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "user" and (text := request_text(turns[i].text)):
            at, question = i, text
            break
    results: list[Turn] = []
    for turn in reversed(turns[at + 1:]):
        if turn.role == "tool":
            results.append(turn)
        elif results or turn.role == "assistant":
            break  # only the latest round counts; text-free user turns after it do not
    return question, tuple(reversed(results))


def respond(prompt: Prompt) -> Reply:
    """The deterministic answer to ``prompt``."""
    question, results = conversation(prompt.turns)
    if results:  # the tools answered: finish with their results, never call again
        return _answer_from_results(prompt, question, results)
    calls = _choose_tools(prompt, question)
    if calls:
        names = ", ".join(c.name for c in calls)
        reasoning = f'The user asks: "{_short(question)}". I will call {names} to find out.'
        return _finish(prompt, Reply(calls=tuple(calls), reasoning=reasoning, finish="tool_calls"))
    arith = arithmetic(question)
    if prompt.json_schema is not None:
        return _finish(prompt, _structured(prompt.json_schema, question, arith))
    if arith:
        expr, value = arith
        text = f"{expr} = {value}. The answer is {value}."
        reasoning = f"The user asks for {expr}. Computing it gives {value}."
    elif question:
        text = f'You asked: "{_short(question)}". This is a deterministic answer from the modelwire emulator.'
        reasoning = f'The user asks: "{_short(question)}". I will restate the question and answer.'
    else:
        text = "Hello from the modelwire emulator."
        reasoning = "There is no question; I will greet the user."
    return _finish(prompt, Reply(text=text, reasoning=reasoning))


def _structured(schema: dict[str, Any], question: str, arith: tuple[str, str] | None) -> Reply:
    """Structured output: an object valid for the schema, from values in the question."""
    answer = arith[1] if arith else _short(question)
    if schema.get("properties"):
        value: Any = build_arguments(schema, f"{question} = {answer}" if arith else question)
    else:
        value = {"answer": answer}
    return Reply(text=json.dumps(value), reasoning="The user wants JSON; I will fill the fields.")


def _finish(prompt: Prompt, reply: Reply) -> Reply:
    reasoning = reply.reasoning if prompt.thinking else None
    text = reply.text
    finish = reply.finish
    if prompt.max_tokens is not None and not reply.calls and len(text) > prompt.max_tokens * 4:
        text, finish = text[: max(prompt.max_tokens, 1) * 4], "length"
    at, matched = find_stop(text, prompt.stop)
    if at >= 0 and not reply.calls:  # as a model does: the text ends before the first one
        return Reply(text=text[:at], reasoning=reasoning, finish="stop", stop_sequence=matched)
    return Reply(text=text, calls=reply.calls, reasoning=reasoning, finish=finish)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _answer_from_results(prompt: Prompt, question: str, results: tuple[Turn, ...]) -> Reply:
    names: dict[str, PlannedCall] = {}
    for turn in prompt.turns:
        for call in turn.calls:
            names[call.id] = call
    parts = []
    for res in results:
        call = names.get(res.call_id)
        label = call.name if call else "the tool"
        expr = _call_expression(call) if call else None
        value = _short(res.text, 400)
        parts.append(f"{expr} = {value}" if expr else f"{label} returned {value}")
    text = "Based on the tool results: " + "; ".join(parts) + "."
    reasoning = f'The tools answered. I will use their results to answer "{_short(question)}".'
    return _finish(prompt, Reply(text=text, reasoning=reasoning))


def _call_expression(call: PlannedCall) -> str | None:
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return None
    if isinstance(args, dict):
        for value in args.values():
            if isinstance(value, str) and arithmetic(value):
                return value
    return None


def _choose_tools(prompt: Prompt, question: str) -> list[PlannedCall]:
    if not prompt.tools or prompt.tool_choice == "none":
        return []
    by_name = {t.name: t for t in prompt.tools}
    if prompt.tool_choice in by_name:
        chosen = [(by_name[prompt.tool_choice], set())]
    else:
        chosen = choose(prompt.tools, question, parallel=prompt.parallel)
        if not chosen and prompt.tool_choice == "required":
            chosen = [(prompt.tools[0], set())]
    every = set().union(*(words for _, words in chosen))
    calls = []
    for i, (tool, words) in enumerate(chosen):
        # the words only this tool was chosen for say which clause asks for it
        shared = set().union(*(w for j, (_, w) in enumerate(chosen) if j != i))
        text = focus(question, words - shared or words, every) if words else question
        args = build_arguments(tool.parameters, text, tool.name, context=question)
        calls.append(PlannedCall(tool.name, json.dumps(args)))
    return calls
