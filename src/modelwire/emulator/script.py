"""Script mode: exact responses replayed in order, for users' own tests.

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
"""

from __future__ import annotations

import json
import pathlib
import threading
from collections.abc import Iterable
from typing import Any

from .model import PlannedCall, Reply
from .wire import ApiError

__all__ = ["Script", "load_script"]

_KEYS = {"text", "reasoning", "tool_calls", "finish_reason", "status", "error", "body", "headers"}


def _step(raw: Any, where: str) -> Reply | ApiError:
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


def load_script(source: str | pathlib.Path | Iterable[Any]) -> Script:
    """A script from a JSONL file path or from a list of dicts."""
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
    return Script([_step(raw, f"script[{i}]") for i, raw in enumerate(source)])


class Script:
    def __init__(self, steps: list[Reply | ApiError]) -> None:
        self._steps = steps
        self._next = 0
        self._lock = threading.Lock()

    def next(self) -> Reply | ApiError:
        with self._lock:
            if self._next >= len(self._steps):
                return ApiError(500, f"emulator script exhausted: all {len(self._steps)} scripted "
                                "responses were used", etype="api_error")
            step = self._steps[self._next]
            self._next += 1
            return step

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._next
