"""The Responses API's ``local_shell`` tool in the internal model: a function of its action.

A model trained on it (``codex-mini-latest``) answers ``local_shell_call`` items whose
``action`` is ``{"type": "exec", "command": [...], "env": {...}, "timeout_ms": ...,
"working_directory": ..., "user": ...}``; the client runs the command and sends a
``local_shell_call_output``. Toward any model the door offers a function ``local_shell``
taking those fields, folds echoed calls and outputs into tool calls and results, and turns
the model's calls of it back into ``local_shell_call`` items for the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["LOCAL_SHELL", "is_shell_call", "shell_arguments", "shell_call_item", "shell_tool_spec"]

LOCAL_SHELL = "local_shell"


def shell_tool_spec() -> dict[str, Any]:
    """The function the ``local_shell`` tool is for a model without it (a new dict each time)."""
    return {"type": "function", "function": {
        "name": LOCAL_SHELL,
        "description": "Run a command on the user's machine and get its output.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"},
                            "description": "The program and its arguments."},
                "working_directory": {"type": "string"},
                "timeout_ms": {"type": "integer"},
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["command"],
        },
    }}


def is_shell_call(name: str, request: Mapping[str, Any] | None) -> bool:
    """Whether a call of ``name`` is one of the request's ``local_shell`` tool."""
    meta = (request or {}).get("metadata")
    return name == LOCAL_SHELL and isinstance(meta, Mapping) and bool(meta.get("local_shell"))


def shell_arguments(item: Mapping[str, Any]) -> str:
    """An echoed ``local_shell_call``'s action as the function's JSON arguments."""
    action = item.get("action")
    fields = {k: v for k, v in action.items() if k != "type"} if isinstance(action, Mapping) else {}
    return orjson.dumps(fields).decode()


def shell_call_item(item_id: str, call_id: str, arguments: str, status: str) -> dict[str, Any]:
    """The model's call of the function as the ``local_shell_call`` item the client runs."""
    try:
        fields = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        fields = {}
    fields = fields if isinstance(fields, dict) else {}
    command = fields.get("command")
    if isinstance(command, str):  # a model that wrote one string: the shell runs it
        command = ["bash", "-lc", command]
    action: dict[str, Any] = {"type": "exec", "command": command if isinstance(command, list) else [],
                              "env": fields.get("env") if isinstance(fields.get("env"), dict) else {}}
    for key in ("timeout_ms", "working_directory", "user"):
        if fields.get(key) is not None:
            action[key] = fields[key]
    return {"id": item_id, "type": "local_shell_call", "status": status, "action": action, "call_id": call_id}
