"""Anthropic Messages: parse a ``/v1/messages`` body and enforce Anthropic's rules.

Messages are the real API's texts where we know them (from users' bug reports);
each rule says which provider behaviour it copies. Both API versions are served:
``2023-06-01`` and ``2026-10-21`` (which rejects sampling parameters, documents in
assistant turns and citations on user text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ...messages.stops import stop_list
from ...types import JSONValue
from ..model import PlannedCall, Prompt, ToolDef, Turn
from ..profiles import EmuProfile
from ..signing import Signer, thinking_place
from ..wire import dumps
from . import Parsed, bad, cache_prefix_chars, text_of

__all__ = ["VERSIONS", "check_messages", "claude_version"]

VERSIONS = ("2023-06-01", "2026-10-21")
_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_NEW_RE = re.compile(r"claude-(?:[a-z]+-)?([a-z]+)-(\d+)(?:[-.](\d{1,2}))?(?![0-9])")
_OLD_RE = re.compile(r"claude-(\d)(?:[-.](\d))?-([a-z]+)")


def claude_version(model: str) -> tuple[str, int, int] | None:
    """``("opus", 4, 7)`` for ``claude-opus-4-7``; ``("sonnet", 3, 5)`` for ``claude-3-5-sonnet``."""
    model = model.lower().rsplit("/", 1)[-1]
    m = _OLD_RE.search(model)
    if m:
        return m.group(3), int(m.group(1)), int(m.group(2) or 0)
    m = _NEW_RE.search(model)
    if m:
        minor = int(m.group(3)) if m.group(3) and len(m.group(3)) <= 2 else 0
        return m.group(1), int(m.group(2)), minor
    return None


def _adaptive_only(model: str) -> bool:
    # Opus 4.7 and later and every 5.x family accept only adaptive thinking
    v = claude_version(model)
    return bool(v) and (v[1] >= 5 or (v[0] == "opus" and (v[1], v[2]) >= (4, 7)))


def _interleaved(body: dict[str, Any], headers: Mapping[str, str], model: str) -> bool:
    # interleaved thinking: automatic with adaptive thinking on Claude 4.6+, else only with
    # the interleaved-thinking beta header
    if "interleaved-thinking" in headers.get("anthropic-beta", ""):
        return True
    v = claude_version(model)
    return (body.get("thinking") or {}).get("type") == "adaptive" and bool(v) and (v[1], v[2]) >= (4, 6)


def takes_mid_system(model: str) -> bool:
    """Whether ``model`` accepts ``{"role": "system"}`` in ``messages``: Opus 4.8 and the
    5.x families but Sonnet 5 (platform.claude.com/docs/en/build-with-claude/
    mid-conversation-system-messages; the page also says no beta header is needed)."""
    v = claude_version(model)
    if not v:
        return False
    return v[1] >= 5 and v[:2] != ("sonnet", 5) or v[1:] == (5, 5) or v == ("opus", 4, 8)


def _no_prefill(model: str) -> bool:
    # Claude 4.6 and later reject a conversation that ends in an assistant turn
    v = claude_version(model)
    return bool(v) and (v[1], v[2]) >= (4, 6)


def check_messages(body: JSONValue, headers: Mapping[str, str], profile: EmuProfile, signer: Signer,
                   *, count_only: bool = False) -> Parsed:
    if not isinstance(body, dict):
        raise bad("Request body must be a JSON object")
    version = _version(headers, profile)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("model: Field required")
    max_tokens = body.get("max_tokens")
    if not count_only:
        if max_tokens is None:
            raise bad("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise bad("max_tokens: Input should be a valid integer greater than or equal to 1")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise bad("messages: Field required")
    if not messages:
        raise bad("messages: at least one message is required")
    tools = _tools(body.get("tools"))
    _cache_breakpoints(body)
    thinking_on = _thinking(body, model, version, max_tokens, count_only)
    if version == "2026-10-21":
        for name in ("temperature", "top_p", "top_k"):
            if body.get(name) is not None:
                raise bad(f"{name}: this parameter is not supported with anthropic-version "
                          f"2026-10-21; sampling is controlled by the model")
    turns = _messages(messages, version, profile, signer, thinking_on, model)
    choice, parallel = _tool_choice(body.get("tool_choice"))
    system = body.get("system")
    blocks: list[Any] = list(body.get("tools") or [])
    blocks += system if isinstance(system, list) else ([{"text": system}] if system else [])
    for msg in messages:
        content = msg.get("content")
        blocks += content if isinstance(content, list) else [{"text": content}]
    prompt = Prompt(
        tuple(turns), tools, tool_choice=choice, parallel=parallel, thinking=thinking_on,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        json_schema=_output_format(body),
        stop=stop_list(body.get("stop_sequences")),
    )
    return Parsed(
        prompt, model, bool(body.get("stream")),
        prompt_chars=len(dumps([system, body.get("tools"), messages])),
        cache_prefix_chars=cache_prefix_chars(blocks),
        options={"version": version,
                 "interleaved": thinking_on and _interleaved(body, headers, model)},
    )


def _version(headers: Mapping[str, str], profile: EmuProfile) -> str:
    version = headers.get("anthropic-version")
    if not version:
        if profile.require_version_header:
            raise bad("anthropic-version: header is required")
        return "2023-06-01"
    if version not in VERSIONS:
        raise bad(f"anthropic-version: invalid version '{version}'; supported: "
                  + ", ".join(VERSIONS))
    return version


def _tools(raw: JSONValue) -> tuple[ToolDef, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise bad("tools: Input should be a valid list")
    seen: set[str] = set()
    out = []
    for i, tool in enumerate(raw):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not name:
            raise bad(f"tools.{i}.name: Field required")
        if name in seen:
            raise bad("tools: Tool names must be unique.")
        seen.add(name)
        out.append(ToolDef(name, str(tool.get("description") or ""), tool.get("input_schema") or {}))
    return tuple(out)


def _cache_breakpoints(body: dict[str, Any]) -> None:
    found = 0
    system = body.get("system")
    groups: list[Any] = [body.get("tools") or [], system if isinstance(system, list) else []]
    groups += [m.get("content") for m in body.get("messages") or [] if isinstance(m, dict)]
    for group in groups:
        if isinstance(group, list):
            found += sum(1 for b in group if isinstance(b, dict) and b.get("cache_control"))
    if found > 4:
        raise bad(f"A maximum of 4 blocks with cache_control may be provided. Found {found}.")


def _thinking(body: dict[str, Any], model: str, version: str, max_tokens: JSONValue,
              count_only: bool) -> bool:
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") in (None, "disabled"):
        return False
    kind = thinking.get("type")
    if kind == "enabled":
        if _adaptive_only(model):
            raise bad('"thinking.type.enabled" is not supported for this model. Use '
                      '"thinking.type.adaptive" and "output_config.effort" to control thinking '
                      "behavior.")
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if not count_only and isinstance(max_tokens, int) and budget >= max_tokens:
            raise bad("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult "
                      f"our documentation at {_THINKING_DOCS}#max-tokens-and-context-window-size")
        temperature = body.get("temperature")
        if version == "2023-06-01" and temperature is not None and temperature != 1:
            raise bad("`temperature` may only be set to 1 when thinking is enabled. Please consult "
                      f"our documentation at {_THINKING_DOCS}#feature-compatibility")
    elif kind != "adaptive":
        raise bad(f"thinking.type: Input tag '{kind}' found using 'type' does not match any of the "
                  "expected tags: 'enabled', 'disabled', 'adaptive'")
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise bad("Thinking may not be enabled when tool_choice forces tool use.")
    return True


def _tool_choice(raw: JSONValue) -> tuple[str, bool]:
    if not isinstance(raw, dict):
        return "auto", True
    parallel = not raw.get("disable_parallel_tool_use", False)
    kind = raw.get("type")
    if kind == "any":
        return "required", parallel
    if kind == "tool":
        return str(raw.get("name") or ""), parallel
    if kind == "none":
        return "none", parallel
    return "auto", parallel


def _messages(messages: list[Any], version: str, profile: EmuProfile, signer: Signer,
              thinking_on: bool, model: str) -> list[Turn]:
    turns: list[Turn] = []
    previous_uses: set[str] = set()
    loop_start = 0  # index of the last plain user message: the current tool-use loop follows
    for i, msg in enumerate(messages):
        if isinstance(msg, dict) and msg.get("role") == "system" and takes_mid_system(model):
            _check_mid_system(messages, i)
            continue  # an instruction: not a turn the deterministic model answers
        if isinstance(msg, dict) and msg.get("role") == "system":
            raise bad(f"messages.{i}.role: 'system' is not supported on this model; use the "
                      "top-level `system` parameter")
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            raise bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        role, content = msg["role"], msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        last = i == len(messages) - 1
        if not isinstance(blocks, list) or not blocks or content == "":
            if not (last and role == "assistant"):
                raise bad(f"messages.{i}: all messages must have non-empty content except for the "
                          "optional final assistant message")
            blocks = []
        _blocks_wellformed(i, role, blocks, version)
        if role == "user":
            has_results = any(b.get("type") == "tool_result" for b in blocks)
            _check_results(i, blocks, previous_uses)
            if not has_results:
                loop_start = i
            turns += _user_turns(blocks)
            previous_uses = set()
        else:
            if previous_uses:
                raise _missing_results(i - 1, previous_uses)
            if profile.verify_signatures:
                _verify_thinking(i, blocks, signer)
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            previous_uses = {str(b.get("id")) for b in uses}
            if uses and not last and _next_role(messages, i) != "user":
                raise _missing_results(i, previous_uses)
            turns.append(_assistant_turn(blocks))
    last_role = messages[-1].get("role")
    if last_role == "assistant" and _no_prefill(model):
        raise bad("This model does not support assistant message prefill. The conversation must "
                  "end with a user message.")
    if thinking_on:
        _thinking_loop(messages, loop_start)
    return turns


def _check_mid_system(messages: list[Any], i: int) -> None:
    """Anthropic's placement and content rules for a mid-conversation system message."""
    prev = _next_role(messages, i - 2) if i else None
    nxt = _next_role(messages, i)
    if prev != "user":
        raise bad(f"messages.{i}: a `system` message must immediately follow a `user` message "
                  "(use the top-level `system` parameter at the start)")
    if nxt not in (None, "assistant"):
        raise bad(f"messages.{i}: a `system` message must be the last message or be followed by "
                  "an `assistant` message")
    content = messages[i].get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list) or not blocks:
        raise bad(f"messages.{i}: all messages must have non-empty content")
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "text" or not str(block.get("text", "")).strip():
            raise bad(f"messages.{i}.content.{j}: `system` messages accept non-empty text blocks only")


def _next_role(messages: list[Any], i: int) -> str | None:
    nxt = messages[i + 1] if i + 1 < len(messages) else None
    return nxt.get("role") if isinstance(nxt, dict) else None


def _missing_results(i: int, ids: set[str]) -> Exception:
    return bad(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
               f"after: {', '.join(sorted(ids))}. Each `tool_use` block must have a corresponding "
               "`tool_result` block in the next message.")


def _blocks_wellformed(i: int, role: str, blocks: list[Any], version: str) -> None:
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise bad(f"messages.{i}.content.{j}.type: Field required")
        kind = block["type"]
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str) or not text:
                raise bad("messages: text content blocks must be non-empty")
            if not text.strip():
                raise bad("messages: text content blocks must contain non-whitespace text")
            if version == "2026-10-21" and role == "user" and block.get("citations"):
                raise bad(f"messages.{i}.content.{j}.citations: citations are not allowed on user "
                          "text blocks with anthropic-version 2026-10-21")
        elif kind == "document" and role == "assistant" and version == "2026-10-21":
            raise bad(f"messages.{i}.content.{j}: `document` blocks are not allowed in assistant "
                      "messages with anthropic-version 2026-10-21")
        elif kind in ("thinking", "redacted_thinking", "tool_use") and role == "user":
            raise bad(f"messages.{i}.content.{j}: `{kind}` blocks are only allowed in assistant "
                      "messages")
        elif kind == "tool_result" and role == "assistant":
            raise bad(f"messages.{i}.content.{j}: `tool_result` blocks are only allowed in user "
                      "messages")


def _check_results(i: int, blocks: list[Any], previous_uses: set[str]) -> None:
    answered: set[str] = set()
    seen_other = False
    for j, block in enumerate(blocks):
        if block.get("type") != "tool_result":
            seen_other = True
            continue
        use_id = str(block.get("tool_use_id"))
        if use_id not in previous_uses:
            raise bad(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                      f"blocks: {use_id}. Each `tool_result` block must have a corresponding "
                      "`tool_use` block in the previous message.")
        if seen_other:
            # Anthropic: tool_result blocks must come first in their user turn; text before
            # them makes the API report the tool_use as unanswered
            raise _missing_results(i - 1, previous_uses - answered)
        answered.add(use_id)
    if previous_uses - answered:
        raise _missing_results(i - 1, previous_uses - answered)


def _verify_thinking(i: int, blocks: list[Any], signer: Signer) -> None:
    ordinal = tools = 0
    for j, block in enumerate(blocks):
        kind = block.get("type")
        place = thinking_place(ordinal, tools)
        if kind == "thinking":
            signature = block.get("signature")
            if not isinstance(signature, str):
                raise bad(f"messages.{i}.content.{j}.thinking.signature: Field required")
            if not signer.verify_thinking(str(block.get("thinking", "")), signature, place):
                raise bad(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
            ordinal += 1
        elif kind == "redacted_thinking":
            if not signer.verify_redacted(str(block.get("data", "")), place):
                raise bad(f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block")
            ordinal += 1
        elif kind == "tool_use":
            tools += 1


def _thinking_loop(messages: list[Any], loop_start: int) -> None:
    """With thinking on, each assistant turn of the current tool-use loop starts with thinking."""
    if messages[-1].get("role") != "user":
        return
    for i in range(loop_start + 1, len(messages)):
        msg = messages[i]
        content = msg.get("content")
        if msg.get("role") != "assistant" or not isinstance(content, list) or not content:
            continue
        if not any(b.get("type") == "tool_use" for b in content):
            continue
        first = content[0].get("type")
        if first not in ("thinking", "redacted_thinking"):
            raise bad(f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                      f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
                      "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                      "`tool_result` blocks). We recommend you include thinking blocks from previous "
                      "turns. To avoid this requirement, disable `thinking`. Please consult our "
                      f"documentation at {_THINKING_DOCS}")


def _user_turns(blocks: list[Any]) -> list[Turn]:
    out: list[Turn] = []
    texts = []
    for block in blocks:
        if block.get("type") == "tool_result":
            out.append(Turn("tool", text_of(block.get("content")), call_id=str(block.get("tool_use_id"))))
        elif block.get("type") == "text":
            texts.append(block.get("text", ""))
    if texts:
        out.append(Turn("user", "\n".join(texts)))
    return out


def _assistant_turn(blocks: list[Any]) -> Turn:
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = tuple(
        PlannedCall(str(b.get("name")), json.dumps(b.get("input") or {}), str(b.get("id")))
        for b in blocks if b.get("type") == "tool_use"
    )
    return Turn("assistant", text, calls)


def _output_format(body: dict[str, Any]) -> dict[str, Any] | None:
    # structured outputs: `output_config.format` (current) or `output_format` (beta)
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else body.get("output_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return fmt.get("schema") if isinstance(fmt.get("schema"), dict) else {}
    return None
