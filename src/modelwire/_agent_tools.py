"""Running one tool call for the Agent: validation, timeouts, errors as text.

A tool that raises, times out or gets invalid arguments produces an error
text the model can read and recover from; it never crashes the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from dataclasses import dataclass
from typing import Any, cast

from .tools import Tool, parse_arguments, validate_arguments
from .types import ContentPart, ToolCall

__all__ = ["ToolOutcome", "call_tool_async", "call_tool_sync", "interrupted_outcome"]

INTERRUPTED_TEXT = "[interrupted: the tool call was cancelled before it returned a result]"


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    content: str | list[ContentPart]
    is_error: bool = False


def interrupted_outcome() -> ToolOutcome:
    return ToolOutcome(INTERRUPTED_TEXT, is_error=True)


def _prepare(tool: Tool | None, call: ToolCall) -> tuple[dict[str, Any] | None, ToolOutcome | None]:
    name = call["function"]["name"]
    if tool is None:
        return None, ToolOutcome(f"error: unknown tool {name!r}", is_error=True)
    args, reason = parse_arguments(call["function"].get("arguments"))
    if reason is not None:
        return None, ToolOutcome(f"error: {reason}; call {name} again with valid JSON arguments", True)
    assert args is not None
    invalid = validate_arguments(args, tool.parameters)
    if invalid is not None:
        return None, ToolOutcome(f"error: {invalid}", is_error=True)
    return args, None


def _format(value: object) -> str | list[ContentPart]:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(
        isinstance(p, dict) and isinstance(p.get("type"), str) for p in value
    ):
        return cast("list[ContentPart]", value)  # content parts (text, images)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _error(tool: Tool, exc: BaseException) -> ToolOutcome:
    return ToolOutcome(f"error: {tool.name} raised {type(exc).__name__}: {exc}", is_error=True)


def _timeout(tool: Tool) -> ToolOutcome:
    return ToolOutcome(f"error: {tool.name} timed out after {tool.timeout:g} s", is_error=True)


_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="modelwire-tool")
    return _POOL


def call_tool_sync(tool: Tool | None, call: ToolCall) -> ToolOutcome:
    args, early = _prepare(tool, call)
    if early is not None:
        return early
    assert tool is not None and args is not None
    try:
        if tool.is_async:
            return ToolOutcome(_format(asyncio.run(_with_timeout(tool, args))))
        if tool.timeout is None:
            return ToolOutcome(_format(tool.function(**args)))
        future = _pool().submit(tool.function, **args)
        return ToolOutcome(_format(future.result(timeout=tool.timeout)))
    except (TimeoutError, concurrent.futures.TimeoutError):
        return _timeout(tool)
    except Exception as exc:  # noqa: BLE001 - a tool's failure is the model's to read, not a crash
        return _error(tool, exc)


async def _with_timeout(tool: Tool, args: dict[str, Any]) -> Any:
    if tool.is_async:
        coro = tool.function(**args)
    else:
        coro = asyncio.to_thread(tool.function, **args)
    if tool.timeout is None:
        return await coro
    return await asyncio.wait_for(coro, tool.timeout)


async def call_tool_async(tool: Tool | None, call: ToolCall) -> ToolOutcome:
    args, early = _prepare(tool, call)
    if early is not None:
        return early
    assert tool is not None and args is not None
    try:
        return ToolOutcome(_format(await _with_timeout(tool, args)))
    except TimeoutError:
        return _timeout(tool)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - the model reads the error and recovers
        return _error(tool, exc)
