"""``decode_request``: an Anthropic Messages request (what a front door receives) -> Request.

Fields with an internal meaning are mapped; every other field goes to
``request["extra"]`` so re-encoding for an Anthropic upstream sends it again. Thinking
maps to an effort level and the native ``thinking`` (and ``output_config``) stay in
``extra``, where they win over what the encoder would derive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...blockorder import order_field
from ...errors import MessageError, UnsupportedContentError
from ...types import BlockKind, Effort, Request
from .response import DEFAULT_ISSUER, load_json

__all__ = ["SUPPORTED_VERSIONS", "auth_token", "decode_request"]

SUPPORTED_VERSIONS = frozenset({"2023-06-01", "2026-10-21"})
_MAPPED = frozenset({
    "model", "messages", "system", "max_tokens", "temperature", "top_p", "stop_sequences",
    "stream", "tools", "tool_choice",
})


def auth_token(headers: Mapping[str, str] | None) -> str | None:
    """The caller's key from ``x-api-key`` or ``Authorization: Bearer`` (the 2.x SDK
    sends Bearer). For the gateway's key check; decode_request never stores it."""
    h = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    if h.get("x-api-key"):
        return h["x-api-key"]
    auth = h.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return None


def _effort_from_budget(budget: object) -> Effort:
    b = budget if isinstance(budget, int) else 0
    return "xhigh" if b >= 32000 else "high" if b >= 16000 else "medium" if b >= 8000 else "low"


def _data_url(source: dict[str, Any]) -> str:
    return f"data:{source.get('media_type') or 'application/octet-stream'};base64,{source.get('data', '')}"


def _part(block: dict[str, Any], where: str, j: int | None = None) -> dict[str, Any]:
    """One user/tool-result content block -> an internal content part (``where``, and
    ``j`` when given, name the block in errors: formatted only for one)."""
    kind = block.get("type")
    if kind == "text" and len(block) == 2 and type(block.get("text")) is str:
        return {"type": "text", "text": block["text"]}  # the usual block: nothing else to keep
    if j is not None:
        where = f"{where}.content[{j}]"
    keep = {k: v for k, v in block.items() if k in ("cache_control", "citations", "title", "context")}
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise MessageError(f"{where}: text block has no text")
        return {"type": "text", "text": block["text"], **keep}
    source = block.get("source") if isinstance(block.get("source"), dict) else None
    if source is None:
        raise UnsupportedContentError(f"{where}: {kind!r} blocks cannot be expressed in the internal model")
    stype = source.get("type")
    if kind == "image":
        if stype == "base64":
            return {"type": "image_url", "image_url": {"url": _data_url(source)}, **keep}
        if stype == "url":
            return {"type": "image_url", "image_url": {"url": source.get("url", "")}, **keep}
        if stype == "file":  # Files API image: no Chat Completions form; marked for the encoder
            return {"type": "file", "file": {"file_id": source.get("file_id", "")}, "anthropic_type": "image", **keep}
    if kind == "document":
        if stype == "base64":
            return {"type": "file", "file": {"file_data": _data_url(source)}, **keep}
        if stype == "text":
            import base64

            data = base64.b64encode(str(source.get("data", "")).encode()).decode()
            return {"type": "file", "file": {"file_data": f"data:text/plain;base64,{data}"}, **keep}
        if stype == "url":
            return {"type": "file", "file": {"file_data": source.get("url", "")}, **keep}
        if stype == "file":
            return {"type": "file", "file": {"file_id": source.get("file_id", "")}, **keep}
    raise UnsupportedContentError(f"{where}: {kind} with a {stype!r} source cannot be expressed")


def _user(msg: dict[str, Any], where: str, out: list[dict[str, Any]]) -> None:
    content = msg.get("content")
    if isinstance(content, str):
        out.append({"role": "user", "content": content})
        return
    if not isinstance(content, list):
        raise MessageError(f"{where}.content must be a string or a list of blocks")
    parts: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        if not isinstance(block, dict):
            raise MessageError(f"{where}.content[{j}] is not an object")
        if block.get("type") == "tool_result":
            if parts:  # text before a result: keep the order the caller used
                out.append({"role": "user", "content": parts})
                parts = []
            out.append(_tool_message(block, f"{where}.content[{j}]"))
        else:
            parts.append(_part(block, where, j))
    if parts:
        out.append({"role": "user", "content": parts})


def _tool_message(block: dict[str, Any], where: str) -> dict[str, Any]:
    tid = block.get("tool_use_id")
    if not isinstance(tid, str):
        raise MessageError(f"{where}: tool_result has no tool_use_id")
    content = block.get("content", "")
    msg: dict[str, Any] = {"role": "tool", "tool_call_id": tid}
    if isinstance(content, list):
        msg["content"] = [_part(b, f"{where}.content[{k}]") for k, b in enumerate(content) if isinstance(b, dict)]
    else:
        msg["content"] = content if isinstance(content, str) else ""
    for k in ("is_error", "cache_control"):
        if k in block:
            msg[k] = block[k]
    return msg


def _assistant(msg: dict[str, Any], where: str) -> dict[str, Any]:
    content = msg.get("content")
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    if not isinstance(content, list):
        raise MessageError(f"{where}.content must be a string or a list of blocks")
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    passthrough: list[dict[str, Any]] = []
    reasoning: list[str] = []
    kinds: list[BlockKind] = []  # the turn's order (thinking, tool_use, thinking, tool_use...)
    plain = True  # every text block just type and text: the content is one string
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            part = _part(block, where, j)
            plain = plain and len(part) == 2
            texts.append(part)
            kinds.append("text")
        elif kind in ("thinking", "redacted_thinking"):
            details.append({"issuer": DEFAULT_ISSUER, "block": block})
            kinds.append("reasoning")
            if kind == "thinking" and block.get("thinking"):
                reasoning.append(block["thinking"])
        elif kind == "tool_use":
            call: dict[str, Any] = {
                "id": str(block.get("id") or ""),
                "type": "function",
                "function": {"name": str(block.get("name") or ""),
                             "arguments": orjson.dumps(block.get("input") or {}).decode()},
            }
            if "cache_control" in block:
                call["cache_control"] = block["cache_control"]
            calls.append(call)
            kinds.append("tool_call")
        elif kind:
            passthrough.append({"issuer": DEFAULT_ISSUER, "block": block})
            kinds.append("passthrough")
        else:
            raise MessageError(f"{where}.content[{j}] has no type")
    out: dict[str, Any] = {"role": "assistant"}
    order = order_field(kinds)
    if order is not None and kinds.count("text") > 1:
        plain = False  # text blocks at several places: one part each
    if plain and texts:
        out["content"] = "".join(t["text"] for t in texts)
    else:
        out["content"] = texts or (None if calls else "")
    if calls:
        out["tool_calls"] = calls
    if reasoning:
        out["reasoning_content"] = "\n\n".join(reasoning)
    if details:
        out["reasoning_details"] = details
    if passthrough:
        out["passthrough"] = passthrough
    if order is not None:
        out["block_order"] = order
    return out


def _system(system: Any) -> dict[str, Any] | None:
    if system is None:
        return None
    if isinstance(system, str):
        return {"role": "system", "content": system}
    if isinstance(system, list):
        return {"role": "system", "content": [_part(b, f"system[{k}]") for k, b in enumerate(system)]}
    raise MessageError("system must be a string or a list of text blocks")


def _mid_system(msg: dict[str, Any], where: str) -> dict[str, Any]:
    """A mid-conversation system message (Claude Code sends one after the first user turn)
    stays a system message at its place; text blocks only, as Anthropic documents."""
    content = msg.get("content")
    if isinstance(content, list):
        for j, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "text":
                raise MessageError(f"{where}.content[{j}]: a system message holds text blocks only")
        content = [_part(b, where, j) for j, b in enumerate(content)]
    elif not isinstance(content, str):
        raise MessageError(f"{where}.content must be a string or a list of text blocks")
    out: dict[str, Any] = {"role": "system", "content": content}
    if "cache_control" in msg:
        out["cache_control"] = msg["cache_control"]
    return out


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise MessageError("tools must be a list")
    out = []
    for i, t in enumerate(tools):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise MessageError(f"tools[{i}] has no name")
        if "input_schema" not in t and t.get("type") not in (None, "custom"):
            out.append(dict(t))  # server tool (web_search_20250305...): goes back verbatim
            continue
        fn: dict[str, Any] = {"name": t["name"]}
        if "description" in t:
            fn["description"] = t["description"]
        fn["parameters"] = t.get("input_schema") or {"type": "object", "properties": {}}
        if "strict" in t:
            fn["strict"] = t["strict"]
        spec: dict[str, Any] = {"type": "function", "function": fn}
        spec.update({k: v for k, v in t.items() if k not in ("name", "description", "input_schema", "strict", "type")})
        out.append(spec)
    return out


def _tool_choice(tc: Any, req: Request) -> None:
    if not isinstance(tc, dict):
        raise MessageError("tool_choice must be an object")
    kind = tc.get("type")
    mapping = {"auto": "auto", "any": "required", "none": "none"}
    if kind in mapping:
        req["tool_choice"] = mapping[kind]
    elif kind == "tool":
        req["tool_choice"] = {"type": "function", "function": {"name": str(tc.get("name") or "")}}
    else:
        raise MessageError(f"tool_choice type {kind!r} is not auto, any, tool or none")
    if "disable_parallel_tool_use" in tc:
        req["parallel_tool_calls"] = not tc["disable_parallel_tool_use"]


_EFFORTS: dict[str, Effort] = {"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}


def _thinking(body: dict[str, Any], req: Request) -> None:
    th = body.get("thinking")
    if not isinstance(th, dict):
        return
    effort = (body.get("output_config") or {}).get("effort") if isinstance(body.get("output_config"), dict) else None
    if th.get("type") == "enabled":
        req["thinking"] = _effort_from_budget(th.get("budget_tokens"))
    elif th.get("type") == "adaptive":
        req["thinking"] = _EFFORTS.get(effort, "high") if isinstance(effort, str) else "high"
    elif th.get("type") == "disabled":
        req["thinking"] = None


def decode_request(body: bytes | dict[str, Any], headers: Mapping[str, str] | None = None, *,
                   issuer: str | None = None) -> Request:
    """A front door's Anthropic request -> Request. Wrong JSON types anywhere become a
    MessageError naming what was wrong, never a bare TypeError. ``issuer`` is accepted as
    every codec's is, and ignored: the thinking blocks a client sends back are signed by
    Anthropic (or sealed by the gateway, which opens them itself)."""
    data = load_json(body, "Anthropic request")
    try:
        return _decode(data, headers)
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise MessageError(f"malformed Anthropic request: {type(exc).__name__}: {exc}") from exc


def _decode(data: dict[str, Any], headers: Mapping[str, str] | None) -> Request:
    h = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    version = h.get("anthropic-version")
    if version is not None and version not in SUPPORTED_VERSIONS:
        raise MessageError(f"anthropic-version {version!r} is not supported (use one of {sorted(SUPPORTED_VERSIONS)})")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise MessageError("messages must be a list")
    req: Request = {}
    if "model" in data:
        req["model"] = str(data["model"])
    internal: list[dict[str, Any]] = []
    sys_msg = _system(data.get("system"))
    if sys_msg:
        internal.append(sys_msg)
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise MessageError(f"{where} is not an object", index=i)
        role = msg.get("role")
        if role == "user":
            _user(msg, where, internal)
        elif role == "assistant":
            internal.append(_assistant(msg, where))
        elif role == "system" and i > 0:
            internal.append(_mid_system(msg, where))
        else:
            raise MessageError(f"{where}: role must be user or assistant, not {role!r}", index=i)
    req["messages"] = internal  # type: ignore[typeddict-item]
    if isinstance(data.get("max_tokens"), int):
        req["max_tokens"] = data["max_tokens"]
    for k in ("temperature", "top_p"):
        if isinstance(data.get(k), (int, float)) and not isinstance(data.get(k), bool):
            req[k] = data[k]  # type: ignore[literal-required]
    if data.get("stop_sequences"):
        req["stop"] = list(data["stop_sequences"])
    if "stream" in data:
        req["stream"] = bool(data["stream"])
    if "tools" in data:
        req["tools"] = _tools(data["tools"])  # type: ignore[typeddict-item]
    if "tool_choice" in data:
        _tool_choice(data["tool_choice"], req)
    _thinking(data, req)
    fmt = data.get("output_format") or ((data.get("output_config") or {}).get("format") if isinstance(data.get("output_config"), dict) else None)
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        req["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": fmt.get("schema") or {}}}
    extra = {k: v for k, v in data.items() if k not in _MAPPED}
    if extra:
        req["extra"] = extra
    meta: dict[str, Any] = {"source_api": "anthropic_messages"}
    if version:
        meta["anthropic_version"] = version
    if h.get("anthropic-beta"):
        meta["anthropic_beta"] = [b.strip() for b in h["anthropic-beta"].split(",") if b.strip()]
    req["metadata"] = meta
    return req
