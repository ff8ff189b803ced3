"""Claude Code's requests as fixtures: structure kept exactly, its own prose and anything
personal left out (see tests/fixtures/claude_code/README.md).

Kept: every field, key order, block order, betas, tool names, schema shapes (types, enums,
required lists), the test's own prompt, thinking and file contents, signatures.
Replaced by a placeholder of the same length: Claude Code's prose, i.e. system prompt
blocks, tool and schema ``description`` strings, the mid-conversation system message and
the text inside ``<system-reminder>`` blocks. Removed: ``metadata.user_id``; the temporary
folder's path becomes ``/work``.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"
_REMINDER = re.compile(r"^(<system-reminder>\n?)(.*?)(\n?</system-reminder>\s*)$", re.DOTALL)


def placeholder(text: str) -> str:
    """``text`` replaced by a marker of exactly its length."""
    mark = f"<prose {len(text)}>"
    return mark + "." * (len(text) - len(mark)) if len(text) >= len(mark) else "." * len(text)


def _descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: placeholder(v) if k == "description" and isinstance(v, str) else _descriptions(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_descriptions(v) for v in value]
    return value


def _text_blocks(content: Any, replace: Any) -> Any:
    if isinstance(content, str):
        return replace(content)
    return [dict(b, text=replace(b["text"])) if b.get("type") == "text" else b for b in content]


def _reminders(text: str) -> str:
    m = _REMINDER.match(text)
    return m.group(1) + placeholder(m.group(2)) + m.group(3) if m else text


def _paths(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(root, "/work")
    if isinstance(value, dict):
        return {k: _paths(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_paths(v, root) for v in value]
    return value


def sanitize(body: dict[str, Any], root: str) -> dict[str, Any]:
    """One request body as a fixture (``root``: the temporary folder the run used)."""
    out = dict(body)
    if "system" in out:
        out["system"] = _text_blocks(out["system"], placeholder)
    if "tools" in out:
        out["tools"] = _descriptions(out["tools"])
    messages = []
    for m in out.get("messages") or []:
        if m["role"] == "system":
            m = dict(m, content=_text_blocks(m["content"], placeholder))
        elif m["role"] == "user":
            m = dict(m, content=_text_blocks(m["content"], _reminders))
        messages.append(m)
    out["messages"] = messages
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k != "user_id"}
    return _paths(out, root)


def write(name: str, entry: dict[str, Any], root: str) -> pathlib.Path:
    """A recorded request (an emulator log entry) as ``<name>.json``."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    headers = entry["headers"]
    fixture = {
        "method": entry["method"], "path": entry["path"],
        "headers": {k: headers[k] for k in ("anthropic-version", "anthropic-beta") if k in headers},
        "body": sanitize(entry["body"], root),
    }
    path = FIXTURES / f"{name}.json"
    path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    return path


def load_all() -> list[tuple[str, dict[str, Any]]]:
    return [(p.stem, json.loads(p.read_text())) for p in sorted(FIXTURES.glob("*.json"))]
