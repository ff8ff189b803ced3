"""Script mode: exact responses replayed in order, or built by a Python function per
turn, for users' own tests.

A script is JSONL, one response per line (blank lines and lines starting with ``#``
are skipped). Each line is one of::

    {"text": "Hello!"}
    {"reasoning": "Let me think.", "text": "42"}
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
    {"text": "partial", "finish_reason": "length"}
    {"status": 429, "error": {"type": "rate_limit_error", "message": "slow down"},
     "headers": {"retry-after": "2"}}
    {"status": 500, "body": {"any": "verbatim body"}}

Responses are rendered in the protocol of the endpoint that asked (Chat Completions,
Anthropic Messages or Responses, streamed or not). Requests still pass the profile's
rules first. Once the script is used up, further requests get a 500 saying so.

In code, a step may also be a function ``fn(request) -> answer``; a single function
answers every turn (``emu.script(fn)``). It gets a :class:`ScriptRequest` (the
conversation, the tool results, the deterministic model's own answer through
``request.default()``) and returns :func:`answer` (text, reasoning, :func:`tool_call`
list), :func:`api_error`, a plain string, a dict in the JSONL form above, or None for
the deterministic model's answer. It runs on the emulator's server thread: it must not
call the emulator itself. An exception in it answers 500 naming it.
"""

from __future__ import annotations

import json
import pathlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..types import JSONValue
from .model import PlannedCall, Prompt, Reply, ToolDef, conversation, respond
from .wire import ApiError
from .words import request_text

__all__ = ["Script", "ScriptRequest", "ToolResult", "answer", "api_error", "load_script",
           "tool_call"]

_KEYS = {"text", "reasoning", "tool_calls", "finish_reason", "status", "error", "body", "headers"}


def _step(raw: JSONValue, where: str) -> Reply | ApiError:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: each line must be a JSON object")  # noqa: TRY004 (bad user input)
    unknown = set(raw) - _KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(sorted(_KEYS))}")
    if "status" in raw:
        status = raw["status"]
        if not isinstance(status, int) or status < 400:
            raise ValueError(f"{where}: status must be an integer >= 400")
        error = raw.get("error") or {}
        return ApiError(status, str(error.get("message", f"scripted error {status}")),
                        etype=str(error.get("type", "api_error")), code=error.get("code"),
                        param=error.get("param"), headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
                        body=raw.get("body"))
    calls = []
    for j, call in enumerate(raw.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError(f"{where}: tool_calls[{j}] needs a name")  # noqa: TRY004
        args = call.get("arguments", {})
        calls.append(PlannedCall(call["name"], args if isinstance(args, str) else json.dumps(args)))
    finish = raw.get("finish_reason") or ("tool_calls" if calls else "stop")
    if finish not in ("stop", "tool_calls", "length"):
        raise ValueError(f"{where}: finish_reason must be stop, tool_calls or length")
    return Reply(text=str(raw.get("text") or ""), calls=tuple(calls),
                 reasoning=raw.get("reasoning"), finish=finish)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's result as the conversation carries it, with the call it answers."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    content: str


@dataclass(frozen=True, slots=True)
class ScriptRequest:
    """One model request, as a script function sees it (protocol-neutral)."""

    endpoint: str  # chat_completions | messages | responses
    model: str
    stream: bool
    prompt: Prompt
    body: Any = field(repr=False)  # the request's JSON as it arrived
    n: int  # this request's number among those the script answered, from 1

    @property
    def question(self) -> str:
        """The latest user request, without agents' context blocks."""
        return conversation(self.prompt.turns)[0]

    @property
    def tools(self) -> tuple[ToolDef, ...]:
        return self.prompt.tools

    @property
    def thinking(self) -> bool:
        return self.prompt.thinking

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The results that came back for the last round of calls (empty otherwise)."""
        calls = {c.id: c for t in self.prompt.turns for c in t.calls}
        out = []
        for turn in conversation(self.prompt.turns)[1]:
            call = calls.get(turn.call_id)
            try:
                args = json.loads(call.arguments) if call else {}
            except ValueError:
                args = {}
            out.append(ToolResult(turn.call_id, call.name if call else "", args, turn.text))
        return tuple(out)

    @property
    def tool_rounds(self) -> int:
        """How many assistant turns called tools since the latest user request."""
        turns = self.prompt.turns
        start = max((i for i, t in enumerate(turns)
                     if t.role == "user" and request_text(t.text)), default=-1)
        return sum(1 for t in turns[start + 1:] if t.role == "assistant" and t.calls)

    def default(self) -> Reply:
        """What the deterministic model would answer."""
        return respond(self.prompt)


def answer(text: str = "", *, reasoning: str | None = None,
           calls: Iterable[PlannedCall] = (), finish: str | None = None) -> Reply:
    """An answer: text, reasoning (rendered as each protocol's thinking), tool calls.
    ``finish`` defaults to ``tool_calls`` with calls, else ``stop``; ``length`` cuts."""
    calls = tuple(calls)
    finish = finish or ("tool_calls" if calls else "stop")
    if finish not in ("stop", "tool_calls", "length"):
        raise ValueError("finish must be stop, tool_calls or length")
    return Reply(text=text, calls=calls, reasoning=reasoning, finish=finish)  # type: ignore[arg-type]


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, /,
              **kwargs: Any) -> PlannedCall:
    """A call of tool ``name``: ``tool_call("get_weather", city="Paris")``, or with the
    arguments as a dict or as JSON text."""
    if isinstance(arguments, str):
        return PlannedCall(name, arguments)
    return PlannedCall(name, json.dumps({**(arguments or {}), **kwargs}))


def api_error(status: int, message: str | None = None, *, type: str = "api_error",
              code: str | None = None, headers: dict[str, str] | None = None,
              body: JSONValue = None) -> ApiError:
    """A provider error answer (rendered in the protocol's own error shape; ``body``
    replaces it verbatim)."""
    if status < 400:
        raise ValueError("status must be >= 400")
    return ApiError(status, message or f"scripted error {status}", etype=type, code=code,
                    headers=dict(headers or {}), body=body)


Step: TypeAlias = "Reply | ApiError | Callable[[ScriptRequest], Any]"


def _from_function(fn: Callable[[ScriptRequest], Any], request: ScriptRequest) -> Reply | ApiError:
    name = getattr(fn, "__name__", "function")
    try:
        value = fn(request)
    except Exception as exc:  # noqa: BLE001 (the test's own bug: shown to it, not the server)
        return ApiError(500, f"emulator script function {name} raised {type(exc).__name__}: {exc}",
                        headers={"x-should-retry": "false"})
    if value is None:
        return request.default()
    if isinstance(value, (Reply, ApiError)):
        return value
    if isinstance(value, str):
        return answer(value)
    if isinstance(value, PlannedCall):
        return answer(calls=[value])
    if isinstance(value, dict):
        try:
            return _step(value, f"script function {name}")
        except ValueError as exc:
            return ApiError(500, str(exc), headers={"x-should-retry": "false"})
    return ApiError(500, f"emulator script function {name} returned {type(value).__name__}; "
                    "expected answer(...), api_error(...), a string, a dict or None",
                    headers={"x-should-retry": "false"})


def load_script(source: str | pathlib.Path | Iterable[Any] | Callable[[ScriptRequest], Any]) -> Script:
    """A script from a JSONL file path, a list of dicts, answers or functions, or one
    function that answers every turn."""
    if callable(source):
        return Script([], every=source)
    if isinstance(source, (str, pathlib.Path)):
        path = pathlib.Path(source)
        steps = []
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip() and not line.lstrip().startswith("#"):
                try:
                    raw = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{path}:{n}: not JSON ({exc})") from exc
                steps.append(_step(raw, f"{path}:{n}"))
        return Script(steps)
    return Script([_listed(raw, f"script[{i}]") for i, raw in enumerate(source)])


def _listed(raw: JSONValue, where: str) -> Step:
    """A list's step: a function, an answer, a plain string (its text), or a dict."""
    if callable(raw) or isinstance(raw, (Reply, ApiError)):
        return raw
    return answer(raw) if isinstance(raw, str) else _step(raw, where)


class Script:
    """Steps used in order (``every``: one function for every turn, never used up)."""

    def __init__(self, steps: list[Step], every: Callable[[ScriptRequest], Any] | None = None
                 ) -> None:
        self._steps = steps
        self._every = every
        self._next = 0
        self._lock = threading.Lock()

    def next(self, request: ScriptRequest | None = None) -> Reply | ApiError:
        """The next answer; functions are called with ``request``."""
        with self._lock:
            self._next += 1
            n = self._next
            step: Step | None = self._every
            if step is None and n <= len(self._steps):
                step = self._steps[n - 1]
        if step is None:
            return ApiError(500, f"emulator script exhausted: all {len(self._steps)} scripted "
                            "responses were used", etype="api_error")
        if callable(step) and not isinstance(step, (Reply, ApiError)):
            if request is None:
                raise TypeError("a script function needs the request")
            return _from_function(step, _numbered(request, n))
        return step

    @property
    def remaining(self) -> int:
        with self._lock:
            return -1 if self._every else max(len(self._steps) - self._next, 0)


def _numbered(request: ScriptRequest, n: int) -> ScriptRequest:
    return ScriptRequest(request.endpoint, request.model, request.stream, request.prompt,
                         request.body, n)
