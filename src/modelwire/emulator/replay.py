"""Replay mode: serve the upstream answers a gateway captured, to the same requests.

``modelwire emulate --replay DIR`` (or ``Emulator(replay=DIR)``) reads the capture files
the gateway wrote (``gateway.capture``, see :mod:`modelwire.gateway.capture`) and answers
each request with the captured answer to the request that *meant* the same: the same
protocol, model, stream flag, messages (roles, text, tool calls by name and parsed
arguments, tool results) and tool names. Ids, signatures, encrypted reasoning,
``cache_control`` and key order do not count, so a conversation replayed through a
gateway matches although its tool-call ids and timestamps differ from the recorded run.

Several captured exchanges with the same meaning are served in the order they were
recorded, then the last one again. A request that matches nothing is answered 404 with
a message saying so (the emulator never invents an answer in replay mode).
"""

from __future__ import annotations

import hashlib
import pathlib
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import ModelwireError
from ..types import JSONValue
from .wire import ApiError

__all__ = ["Captured", "Replay", "meaning", "read_captures"]

# the emulator's endpoint names -> the api mode whose codec reads the request
_API_MODE = {"chat_completions": "chat_completions", "messages": "anthropic_messages",
             "responses": "responses"}
ENDPOINTS = frozenset(_API_MODE)


@dataclass(frozen=True, slots=True)
class Captured:
    """One captured upstream exchange: the answer's status, headers and body."""

    api_mode: str
    request: Mapping[str, Any]
    status: int
    headers: Mapping[str, str]
    body: str
    source: str  # file:line, for messages


def read_captures(folder: str | pathlib.Path) -> Iterator[Captured]:
    """Every exchange in ``folder``'s capture files (oldest file first)."""
    root = pathlib.Path(folder)
    if not root.is_dir():
        raise ValueError(f"replay: {root} is not a folder of capture files")
    files = sorted(root.glob("capture*.jsonl"), key=_age, reverse=True)
    if not files:
        raise ValueError(f"replay: {root} holds no capture*.jsonl files")
    for path in files:
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                record = orjson.loads(line)
                request, answer = record["request"], record["answer"]
                yield Captured(str(record["api_mode"]), request["body"], int(answer["status"]),
                               dict(answer.get("headers") or {}), str(answer.get("body", "")), where)
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"replay: {where} is not a capture record ({exc})") from None


def _age(path: pathlib.Path) -> int:
    """capture.jsonl is the newest; capture.N.jsonl older as N grows."""
    parts = path.name.split(".")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0


def meaning(api_mode: str, body: Mapping[str, Any]) -> str:
    """A digest of what a request asks, blind to ids, signatures and key order."""
    from ..codecs import codec_for

    request = codec_for(api_mode).decode_request(dict(body))
    canonical = {
        "api_mode": api_mode,
        "model": request.get("model"),
        "stream": bool(request.get("stream")),
        "messages": [_message(m) for m in request.get("messages", [])],
        "tools": sorted(_tool_name(t) for t in request.get("tools") or []),
    }
    return hashlib.sha256(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.get("role"), "text": _text(message.get("content"))}
    calls = message.get("tool_calls") or []
    if calls:
        out["calls"] = [(c.get("function", {}).get("name"), _arguments(c.get("function", {})))
                        for c in calls]
    return out


def _text(content: JSONValue) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, dict) and p.get("type") in ("text", "input_text", "output_text"))
    return ""


def _arguments(function: Mapping[str, Any]) -> Any:
    raw = function.get("arguments") or "{}"
    try:
        return orjson.loads(raw) if isinstance(raw, str) else raw
    except orjson.JSONDecodeError:
        return raw


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return str(name or tool.get("type", ""))


class Replay:
    """The captured answers of a folder, by meaning; thread-safe."""

    def __init__(self, folder: str | pathlib.Path) -> None:
        self.folder = str(folder)
        self._answers: dict[str, list[Captured]] = {}
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        for captured in read_captures(folder):
            try:
                key = meaning(captured.api_mode, captured.request)
            except ModelwireError as exc:  # a request no codec reads cannot be matched
                raise ValueError(f"replay: {captured.source}: the request cannot be read "
                                 f"({type(exc).__name__}: {exc})") from None
            self._answers.setdefault(key, []).append(captured)

    def __len__(self) -> int:
        return sum(len(v) for v in self._answers.values())

    def answer(self, endpoint: str, body: JSONValue) -> tuple[int, dict[str, str], list[bytes], None]:
        """The captured answer for this request, or an :class:`ApiError` 404."""
        if not isinstance(body, dict):
            raise ApiError(400, "replay: the request body must be a JSON object")
        try:
            key = meaning(_API_MODE[endpoint], body)
        except ModelwireError as exc:
            raise ApiError(400, f"replay: the request cannot be read ({exc})") from None
        with self._lock:
            answers = self._answers.get(key)
            if not answers:
                raise ApiError(404, f"replay: no captured answer in {self.folder} matches this "
                               f"{endpoint} request (model {body.get('model')!r}); replay serves "
                               "only what was captured", etype="not_found_error")
            served = self._served.get(key, 0)
            self._served[key] = served + 1
        captured = answers[min(served, len(answers) - 1)]
        headers = {k: v for k, v in captured.headers.items()
                   if k.lower() in ("content-type", "retry-after") or k.lower().startswith(
                       ("anthropic-ratelimit", "x-ratelimit"))}
        headers.setdefault("content-type", "application/json")
        return captured.status, headers, _chunks(captured.body, headers["content-type"]), None


def _chunks(body: str, content_type: str) -> list[bytes]:
    """A stream as one chunk per event (clients see it arrive in pieces), else one."""
    data = body.encode("utf-8")
    if "event-stream" not in content_type:
        return [data]
    events = data.split(b"\n\n")
    chunks = [event + b"\n\n" for event in events[:-1]]
    if events[-1]:
        chunks.append(events[-1])
    return chunks or [data]
