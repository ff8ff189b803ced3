"""What Anthropic's Messages API rejects, as a checker over a request body (test helper).

``violations(body, version=..., prefill=...)`` returns a list of human-readable
violations (empty: the request obeys every rule we know). Each rule names the API's
own complaint where there is one.
"""

from __future__ import annotations

import re
from typing import Any

_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_THINKING = ("thinking", "redacted_thinking")
_USER_BLOCKS = {"text", "image", "document", "tool_result", "search_result"}
_ASSISTANT_BLOCKS = {
    "text", "thinking", "redacted_thinking", "tool_use", "server_tool_use",
    "web_search_tool_result", "tool_search_tool_result", "document",
}


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _text_ok(block: dict[str, Any]) -> bool:
    return isinstance(block.get("text"), str) and block["text"].strip() != ""


def violations(
    body: dict[str, Any], *, version: str = "2023-06-01", prefill: bool = True, unsigned_thinking: bool = False
) -> list[str]:
    out: list[str] = []
    strict = version[:4].isdigit() and version >= "2026-10-21"
    mt = body.get("max_tokens")
    if not isinstance(mt, int) or isinstance(mt, bool) or mt < 1:
        out.append("max_tokens: Field required (a positive integer)")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return out + ["messages: at least one message is required"]
    out += _check_system(body.get("system"))
    out += _check_tools(body)
    out += _check_messages(msgs, strict, unsigned_thinking)
    out += _check_thinking(body)
    uses = [b.get("id") for m in msgs if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"]
    if len(uses) != len(set(uses)):
        out.append("tool_use ids must be unique")
    has_tool_blocks = bool(uses) or any(
        isinstance(m.get("content"), list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
        for m in msgs)
    if has_tool_blocks and not body.get("tools"):
        out.append("Requests which include `tool_use` or `tool_result` blocks must define tools.")
    out += _check_cache(body)
    if strict:
        out += [f"{k}: not accepted by API {version}" for k in ("temperature", "top_p", "top_k") if k in body]
    if msgs[-1]["role"] == "assistant" and not prefill:
        out.append("This model does not support assistant message prefill")
    return out


def _check_system(system: Any) -> list[str]:
    if system is None:
        return []
    if isinstance(system, str):
        return []  # an empty string system is accepted
    if not isinstance(system, list):
        return ["system: must be a string or a list of text blocks"]
    return [f"system[{i}]: text content blocks must be non-empty"
            for i, b in enumerate(system) if b.get("type") != "text" or not _text_ok(b)]


def _check_tools(body: dict[str, Any]) -> list[str]:
    out = []
    tools = body.get("tools")
    if "tool_choice" in body and not tools:
        out.append("tool_choice may only be specified while providing tools")
    names = [t.get("name") for t in tools or []]
    if len(names) != len(set(names)):
        out.append("tools: Tool names must be unique")
    for i, t in enumerate(tools or []):
        if "input_schema" in t:
            schema = t["input_schema"]
            if schema.get("type") != "object":
                out.append(f"tools.{i}.input_schema.type: Input should be 'object'")
            if any(k in schema for k in ("anyOf", "oneOf", "allOf")):
                out.append(f"tools.{i}.input_schema: top-level unions are not supported")
            if "properties" not in schema:
                out.append(f"tools.{i}.input_schema: object without properties")
    return out


def _check_messages(msgs: list[dict[str, Any]], strict: bool, unsigned: bool) -> list[str]:
    out = []
    prev_role = None
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("user", "assistant"):
            out.append(f"messages.{i}.role: must be user or assistant")
            continue
        if role == prev_role:
            out.append(f"messages.{i}: roles must alternate between user and assistant")
        prev_role = role
        content = m.get("content")
        if isinstance(content, str):
            if not content.strip():
                out.append(f"messages.{i}: text content must be non-empty")
            continue
        if not isinstance(content, list) or not content:
            out.append(f"messages.{i}: content must be a non-empty list")
            continue
        allowed = _USER_BLOCKS if role == "user" else _ASSISTANT_BLOCKS
        for j, b in enumerate(content):
            kind = b.get("type")
            where = f"messages.{i}.content.{j}"
            if kind not in allowed:
                out.append(f"{where}: {kind!r} not allowed in a {role} turn")
            if kind == "text" and not _text_ok(b):
                out.append(f"{where}: text content blocks must contain non-whitespace text")
            if kind == "text" and role == "user" and strict and "citations" in b:
                out.append(f"{where}: citations on input text are rejected")
            if kind == "document" and role == "assistant" and strict:
                out.append(f"{where}: document blocks in assistant turns are rejected")
            if kind == "thinking" and not unsigned and not isinstance(b.get("signature"), str):
                out.append(f"{where}.signature: Field required")
            if kind == "redacted_thinking" and not b.get("data"):
                out.append(f"{where}.data: Field required")
            if kind in _THINKING and "cache_control" in b:
                out.append(f"{where}: cache_control cannot be set on thinking blocks")
            if kind == "tool_use":
                if not _ID.match(str(b.get("id", ""))):
                    out.append(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
                if not isinstance(b.get("input"), dict):
                    out.append(f"{where}.input: Input should be a valid dictionary")
            if kind == "tool_result":
                out += _check_result(b, where)
        out += _check_pairing(msgs, i)
    return out


def _check_result(b: dict[str, Any], where: str) -> list[str]:
    out = []
    if not _ID.match(str(b.get("tool_use_id", ""))):
        out.append(f"{where}.tool_use_id: String should match pattern")
    c = b.get("content")
    if isinstance(c, list):
        for k, part in enumerate(c):
            if part.get("type") not in ("text", "image", "document", "search_result"):
                out.append(f"{where}.content.{k}: {part.get('type')!r} not allowed in tool_result")
            if part.get("type") == "text" and not _text_ok(part):
                out.append(f"{where}.content.{k}: text content blocks must be non-empty")
    elif isinstance(c, str) and not c.strip():
        out.append(f"{where}.content: empty tool result text")
    return out


def _check_pairing(msgs: list[dict[str, Any]], i: int) -> list[str]:
    """tool_use ids of assistant turn i answered by tool_result blocks at the start of
    turn i+1, and every tool_result answers the turn right before it."""
    m = msgs[i]
    out = []
    blocks = _blocks(m["content"]) if isinstance(m["content"], (str, list)) else []
    if m["role"] == "assistant":
        ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if ids:
            nxt = _blocks(msgs[i + 1]["content"]) if i + 1 < len(msgs) else []
            lead = []
            for b in nxt:
                if b.get("type") != "tool_result":
                    break
                lead.append(b.get("tool_use_id"))
            missing = [x for x in ids if x not in lead]
            if missing and i + 1 < len(msgs):
                out.append(f"messages.{i + 1}: tool_use ids were found without tool_result blocks immediately after: {missing}")
    else:
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if results:
            first_non_result = next((k for k, b in enumerate(blocks) if b.get("type") != "tool_result"), len(blocks))
            if any(b.get("type") == "tool_result" for b in blocks[first_non_result:]):
                out.append(f"messages.{i}: tool_result blocks must come first in the user turn")
            prev = _blocks(msgs[i - 1]["content"]) if i > 0 else []
            calls = {b.get("id") for b in prev if b.get("type") == "tool_use"}
            stray = [r for r in results if r not in calls]
            if stray:
                out.append(f"messages.{i}: unexpected tool_use_id found in tool_result blocks: {stray}")
    return out


def _check_thinking(body: dict[str, Any]) -> list[str]:
    th = body.get("thinking")
    if not isinstance(th, dict) or th.get("type") == "disabled":
        return []
    out = []
    if th.get("type") == "enabled":
        b = th.get("budget_tokens")
        if not isinstance(b, int) or b < 1024:
            out.append("thinking.budget_tokens: must be >= 1024")
        elif b >= body.get("max_tokens", 0):
            out.append("max_tokens must be greater than thinking.budget_tokens")
    tc = body.get("tool_choice") or {}
    if tc.get("type") in ("any", "tool"):
        out.append("Thinking may not be enabled when tool_choice forces tool use")
    if "temperature" in body and body["temperature"] != 1:
        out.append("temperature may only be set to 1 when thinking is enabled")
    if "top_k" in body:
        out.append("top_k is not compatible with thinking")
    msgs = body["messages"]
    last = _blocks(msgs[-1]["content"]) if msgs else []
    if len(msgs) >= 2 and last and last[0].get("type") == "tool_result":
        prev = _blocks(msgs[-2]["content"])
        if not prev or prev[0].get("type") not in _THINKING:
            out.append("Expected `thinking` or `redacted_thinking`, but found "
                       f"`{prev[0].get('type') if prev else 'nothing'}`")
    return out


def _check_cache(body: dict[str, Any]) -> list[str]:
    n = sum("cache_control" in t for t in body.get("tools") or [])
    if isinstance(body.get("system"), list):
        n += sum("cache_control" in b for b in body["system"])
    for m in body["messages"]:
        for b in _blocks(m["content"]) if isinstance(m["content"], (str, list)) else []:
            n += "cache_control" in b
            if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                n += sum("cache_control" in c for c in b["content"])
    return [f"A maximum of 4 blocks with cache_control may be provided. Found {n}."] if n > 4 else []
