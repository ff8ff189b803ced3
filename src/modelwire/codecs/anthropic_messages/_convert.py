"""Internal (Chat Completions shaped) messages -> Anthropic ``system`` + ``messages``.

The rules, each with the reason Anthropic (or a peer's bug) gives for it:

* leading system and developer messages move to the ``system`` parameter (blocks when any
  carries ``cache_control``, else one string);
* a later system or developer message stays at its place: as ``{"role": "system"}`` when
  the model takes mid-conversation system messages (``ConvertContext.mid_system``) and the
  place is one Anthropic allows (right after a user turn, last or before an assistant
  turn; neighbours merged into one), else as a ``<system-reminder>`` text in the user turn
  at that place, merged with the user content around it;
* tool messages become ``tool_result`` blocks in a user turn, first in that turn;
  consecutive results merge into one user turn (Anthropic: "tool_use ids were found
  without tool_result blocks immediately after");
* same-role neighbours merge (Anthropic requires alternation); when two assistant turns
  merge, the second one's thinking is dropped: its signature covered a different turn;
* thinking blocks go back byte-exact, only to an endpoint that accepts their issuer;
  on earlier turns (before the current tool loop) only unless the profile drops them;
* empty text is never sent ("text content blocks must be non-empty"): a placeholder
  stands in for an empty turn.
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass
from typing import Any

import orjson

from ...blockorder import ordered_items
from ...errors import MessageError, UnsupportedContentError
from ._tools import sanitize_tool_id

__all__ = ["ConvertContext", "append_turn", "encode_conversation", "encode_message", "encode_system", "finish_turn",
           "is_leading_system", "is_strict_version", "parse_data_url"]

log = logging.getLogger("modelwire.codecs.anthropic")

EMPTY_USER = "(empty message)"
EMPTY_ASSISTANT = "(empty)"
EMPTY_TOOL_RESULT = "(no output)"
THINKING_TYPES = ("thinking", "redacted_thinking")
# block keys a caller may set on a part that Anthropic understands on the same block
_DOC_KEYS = ("title", "context", "citations")
_OUTPUT_ONLY = frozenset({"caller", "parsed_output"})


def is_strict_version(version: str) -> bool:
    """API 2026-10-21 and later (dated versions only; Bedrock's ``bedrock-2023-05-31`` is
    the 2023 API): rejects sampling parameters, documents in assistant turns and
    citations on user text."""
    return version[:4].isdigit() and version >= "2026-10-21"


@dataclass(frozen=True, slots=True)
class ConvertContext:
    profile: Any  # ProviderProfile
    api_version: str
    current_loop_start: int  # index of the last user message; later assistant turns are the loop
    mid_system: bool = False  # the endpoint and model take {"role": "system"} in messages

    @property
    def strict_version(self) -> bool:
        """API 2026-10-21 rejects document blocks in assistant turns and user-text citations."""
        return is_strict_version(self.api_version)


def parse_data_url(url: str) -> tuple[str, str] | None:
    """``data:<media>;base64,<data>`` -> (media, data); None for anything else."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url[5:].partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return head[: -len(";base64")] or "application/octet-stream", data


# ------------------------------------------------------------------- content
def _text_block(part: dict[str, Any], ctx: ConvertContext, where: str) -> dict[str, Any] | None:
    text = part.get("text")
    if not isinstance(text, str):
        raise MessageError(f"{where}: text part has no text")
    if not text.strip():
        return None  # Anthropic: text content blocks must contain non-whitespace text
    block: dict[str, Any] = {"type": "text", "text": text}
    if "cache_control" in part:
        block["cache_control"] = part["cache_control"]
    if "citations" in part:
        if ctx.strict_version:
            log.warning("%s: citations on input text dropped (API 2026-10-21 rejects them)", where)
        else:
            block["citations"] = part["citations"]
    return block


def _image_block(source: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "image", "source": source}
    if "cache_control" in part:
        block["cache_control"] = part["cache_control"]
    return block


def _image_part(part: dict[str, Any], ctx: ConvertContext, where: str) -> dict[str, Any]:
    if not ctx.profile.vision:
        raise UnsupportedContentError(f"{where}: {ctx.profile.name} does not accept images")
    url = (part.get("image_url") or {}).get("url")
    if not isinstance(url, str) or not url:
        raise MessageError(f"{where}: image_url has no url")
    parsed = parse_data_url(url)
    if parsed:
        return _image_block({"type": "base64", "media_type": parsed[0], "data": parsed[1]}, part)
    if url.startswith(("http://", "https://")):
        return _image_block({"type": "url", "url": url}, part)
    raise UnsupportedContentError(f"{where}: image url must be a data: URL or http(s) URL")


def _file_part(part: dict[str, Any], ctx: ConvertContext, where: str) -> dict[str, Any]:
    f = part.get("file") or {}
    # decode_request marks images referenced by a Files API id (no Chat Completions form)
    is_image = part.get("anthropic_type") == "image"
    if f.get("file_id"):
        source: dict[str, Any] = {"type": "file", "file_id": f["file_id"]}
        if is_image:
            return _image_block(source, part)
    elif isinstance(f.get("file_data"), str):
        data = f["file_data"]
        parsed = parse_data_url(data)
        if parsed is None and data.startswith(("http://", "https://")):
            source = {"type": "url", "url": data}
        elif parsed is None:
            raise UnsupportedContentError(f"{where}: file_data must be a data: URL")
        elif parsed[0].startswith("image/"):
            return _image_part({"image_url": {"url": data}, **part}, ctx, where)
        elif parsed[0].startswith("text/"):
            try:
                text = base64.b64decode(parsed[1], validate=True).decode()
            except (binascii.Error, UnicodeDecodeError) as exc:
                raise MessageError(f"{where}: text file is not base64 UTF-8") from exc
            source = {"type": "text", "media_type": "text/plain", "data": text}
        else:
            source = {"type": "base64", "media_type": parsed[0], "data": parsed[1]}
    else:
        raise MessageError(f"{where}: file part has neither file_id nor file_data")
    block: dict[str, Any] = {"type": "document", "source": source}
    for k in _DOC_KEYS:
        if k in part:
            block[k] = part[k]
    if "cache_control" in part:
        block["cache_control"] = part["cache_control"]
    return block


def encode_parts(content: Any, ctx: ConvertContext, where: str) -> list[dict[str, Any]]:
    """User or tool-result content -> Anthropic blocks (empty text dropped)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        raise MessageError(f"{where}: content must be a string or a list of parts")
    out: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        pw = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            block = _text_block(part, ctx, pw)
            if block:
                out.append(block)
        elif kind == "image_url":
            out.append(_image_part(part, ctx, pw))
        elif kind == "file":
            out.append(_file_part(part, ctx, pw))
        else:
            raise UnsupportedContentError(f"{pw}: {kind!r} parts cannot be sent to Anthropic Messages")
    return out


# ----------------------------------------------------------------- messages
def _user(msg: dict[str, Any], ctx: ConvertContext, where: str) -> dict[str, Any]:
    content = msg.get("content")
    if isinstance(content, str):  # a string stays a string (same bytes the caller sent)
        body: Any = content if content.strip() else EMPTY_USER
    else:
        body = encode_parts(content, ctx, where) or [{"type": "text", "text": EMPTY_USER}]
    return {"role": "user", "content": body}


def _tool_result(msg: dict[str, Any], ctx: ConvertContext, where: str) -> dict[str, Any]:
    call_id = msg.get("tool_call_id")
    if not isinstance(call_id, str):
        raise MessageError(f"{where}: tool message has no tool_call_id")
    content = msg.get("content")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": sanitize_tool_id(call_id)}
    if isinstance(content, str) or content is None:
        block["content"] = content if content and content.strip() else EMPTY_TOOL_RESULT
    else:
        # images in tool results become image blocks inside the result (litellm#6953)
        parts = encode_parts(content, ctx, where)
        block["content"] = parts or EMPTY_TOOL_RESULT
    if "is_error" in msg:
        block["is_error"] = msg["is_error"]
    if "cache_control" in msg:
        block["cache_control"] = msg["cache_control"]
    return {"role": "user", "content": [block]}


def _thinking_block(detail: Any, ctx: ConvertContext) -> dict[str, Any] | None:
    """One reasoning_details entry as the thinking block sent back, or None when it may
    not go to this endpoint."""
    block = detail.get("block") if isinstance(detail, dict) else None
    if not isinstance(block, dict) or block.get("type") not in THINKING_TYPES:
        return None
    if not ctx.profile.accepts_issuer(detail.get("issuer", "")):
        return None  # a foreign signature is a 400; foreign text pasted as text causes refusals
    if block["type"] == "thinking" and not block.get("signature") and not ctx.profile.unsigned_thinking_echo:
        return None
    if "cache_control" in block:  # Anthropic: cache_control is not allowed on thinking
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _unsigned_echo(msg: dict[str, Any], ctx: ConvertContext) -> list[dict[str, Any]]:
    if ctx.profile.unsigned_thinking_echo and msg.get("reasoning_content") \
            and _unattributed_or_own(msg, ctx.profile):
        # DeepSeek's and Kimi's Anthropic endpoints want the reasoning back (unsigned)
        # on tool-call turns, rebuilt from the text: text with no block saying who wrote
        # it (a plain history) or their own, never another issuer's (hermes #15748)
        return [{"type": "thinking", "thinking": msg["reasoning_content"]}]
    return []


def _unattributed_or_own(msg: dict[str, Any], profile: Any) -> bool:
    details = msg.get("reasoning_details")
    if not isinstance(details, list) or not details:
        return True
    return any(isinstance(d, dict) and profile.accepts_issuer(d.get("issuer") or "") for d in details)


def _tool_use(call: dict[str, Any], where: str) -> dict[str, Any]:
    fn = call.get("function") or {}
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise MessageError(f"{where}: tool call has no function name")
    args = fn.get("arguments")
    parsed: Any = {}
    if isinstance(args, dict):  # tolerated: some callers store parsed arguments
        parsed = args
    elif isinstance(args, str) and args.strip():
        try:
            parsed = orjson.loads(args)
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            log.warning("%s: arguments of %s are not a JSON object; sending {}", where, name)
            parsed = {}
    block = {"type": "tool_use", "id": sanitize_tool_id(call.get("id") or ""), "name": name, "input": parsed}
    if "cache_control" in call:
        block["cache_control"] = call["cache_control"]
    return block


def _passthrough_block(entry: Any, ctx: ConvertContext) -> dict[str, Any] | None:
    block = entry.get("block") if isinstance(entry, dict) else None
    # server tool calls and their results (web search...) go back to their issuer;
    # citation markers are output-only metadata and are not sent
    if (
        isinstance(block, dict)
        and block.get("type") not in ("citations", None)
        and ctx.profile.accepts_issuer(entry.get("issuer", ""))
    ):
        # output-only fields are a 400 "Extra inputs are not permitted" when sent
        # back (hermes-behaviours 2.8: caller, parsed_output, citations: null)
        return {k: v for k, v in block.items() if k not in _OUTPUT_ONLY and not (k == "citations" and v is None)}
    return None


def _assistant_text(part: Any, ctx: ConvertContext, pw: str) -> dict[str, Any] | None:
    if isinstance(part, str):
        return {"type": "text", "text": part} if part.strip() else None
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return _text_block(part, ctx, pw)
    if kind == "file" and not ctx.strict_version:
        return _file_part(part, ctx, pw)
    if kind == "file":
        log.warning("%s: document dropped (API 2026-10-21 rejects documents in assistant turns)", pw)
        return None
    raise UnsupportedContentError(f"{pw}: {kind!r} parts cannot appear in an Anthropic assistant turn")


def _assistant(msg: dict[str, Any], ctx: ConvertContext, where: str, in_loop: bool) -> dict[str, Any]:
    """The turn's blocks in its own order (``block_order``, modelwire.blockorder): a
    thinking block's signature holds only at its place among the tool calls."""
    content = msg.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise MessageError(f"{where}: content must be a string, a list or null")
    keep_thinking = in_loop or not ctx.profile.drop_earlier_thinking
    blocks: list[dict[str, Any]] = []
    counts = {"text": 0, "tool_call": 0}
    thought = False
    for kind, item in ordered_items(msg):
        block: dict[str, Any] | None
        if kind == "reasoning":
            block = _thinking_block(item, ctx) if keep_thinking else None
            thought = thought or block is not None
        elif kind == "passthrough":
            block = _passthrough_block(item, ctx)
        elif kind == "text":
            block = _assistant_text(item, ctx, f"{where}.content[{counts['text']}]")
            counts["text"] += 1
        else:
            block = _tool_use(item, f"{where}.tool_calls[{counts['tool_call']}]")
            counts["tool_call"] += 1
        if block is not None:
            blocks.append(block)
    if not thought and keep_thinking:
        blocks = _unsigned_echo(msg, ctx) + blocks
    return {"role": "assistant", "content": blocks}


def _attach_cache_control(out_msg: dict[str, Any], cache_control: Any) -> None:
    """A message-level ``cache_control`` (set by the layout helper on a turn with no parts)
    goes on the turn's last block that may carry one."""
    content = out_msg["content"]
    if isinstance(content, str):
        out_msg["content"] = content = [{"type": "text", "text": content}]
    for block in reversed(content):
        if block.get("type") not in THINKING_TYPES:
            block.setdefault("cache_control", cache_control)
            return


def _later_system(msg: dict[str, Any], ctx: ConvertContext, where: str) -> dict[str, Any]:
    """A system message after the conversation started: native when the model takes it
    (placement checked later by :func:`_place_systems`), else a reminder in a user turn."""
    blocks = encode_parts(msg.get("content"), ctx, where)
    if ctx.mid_system:
        return {"role": "system", "content": blocks or [{"type": "text", "text": EMPTY_USER}]}
    return {"role": "user", "content": [_reminder(blocks)]}


def _reminder(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    # the form Claude Code itself uses for instructions that arrive inside a user turn
    text = "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    block: dict[str, Any] = {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}
    marks = [b["cache_control"] for b in blocks if "cache_control" in b]
    if marks:
        block["cache_control"] = marks[-1]
    return block


def _place_systems(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Native system entries where Anthropic rejects them (not right after a user turn, or
    followed by something other than an assistant turn) become reminders instead."""
    if not any(m["role"] == "system" for m in out):
        return out
    placed: list[dict[str, Any]] = []
    for k, m in enumerate(out):
        if m["role"] == "system":
            after_user = bool(placed) and placed[-1]["role"] == "user"
            before_ok = k == len(out) - 1 or out[k + 1]["role"] == "assistant"
            if not (after_user and before_ok):
                m = {"role": "user", "content": [_reminder(m["content"])]}
        if placed and placed[-1]["role"] == m["role"]:
            _merge(placed[-1], m)
        else:
            placed.append(m)
    return placed


# ------------------------------------------------------------------- merging
def _as_blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _merge(prev: dict[str, Any], nxt: dict[str, Any]) -> None:
    if prev["role"] == "assistant":
        extra = [b for b in nxt["content"] if b.get("type") not in THINKING_TYPES]
        prev["content"] = _as_blocks(prev["content"]) + extra
        return
    if isinstance(prev["content"], str) and isinstance(nxt["content"], str):
        prev["content"] = prev["content"] + "\n" + nxt["content"]
        return
    blocks = _as_blocks(prev["content"]) + _as_blocks(nxt["content"])
    # tool_result blocks must come first in their user turn
    blocks.sort(key=lambda b: b.get("type") != "tool_result")
    prev["content"] = [b for b in blocks if not (b.get("type") == "text" and b["text"] == EMPTY_USER)] or blocks


def is_leading_system(msg: Any) -> bool:
    """Whether ``msg`` goes to the ``system`` parameter when no turn came before it."""
    return isinstance(msg, dict) and msg.get("role") in ("system", "developer")


def encode_system(messages: list[dict[str, Any]], ctx: ConvertContext) -> str | list[dict[str, Any]] | None:
    """The ``system`` parameter from the leading system and developer messages."""
    system_parts: list[dict[str, Any]] = []
    system_blocks = False
    for i, msg in enumerate(messages):
        content = msg.get("content")
        if isinstance(content, list) or "cache_control" in msg:
            system_blocks = True
        try:
            system_parts.extend(encode_parts(content, ctx, f"messages[{i}]"))
        except MessageError as exc:
            if exc.index is None:
                exc.index = i
            raise
        if "cache_control" in msg and system_parts:
            system_parts[-1].setdefault("cache_control", msg["cache_control"])
    if not system_parts:
        return None
    return system_parts if system_blocks else "\n\n".join(b["text"] for b in system_parts)


def encode_message(msg: Any, i: int, ctx: ConvertContext) -> dict[str, Any]:
    """Message ``i`` of a conversation that has started (not a leading system message)."""
    if not isinstance(msg, dict):
        raise MessageError(f"messages[{i}] is not an object", index=i)
    role = msg.get("role")
    where = f"messages[{i}]"
    try:
        if role in ("system", "developer"):
            converted = _later_system(msg, ctx, where)
        elif role == "user":
            converted = _user(msg, ctx, where)
        elif role == "tool":
            converted = _tool_result(msg, ctx, where)
        elif role == "assistant":
            converted = _assistant(msg, ctx, where, in_loop=i > ctx.current_loop_start)
        else:
            raise MessageError(f"{where}: unknown role {role!r}")
    except MessageError as exc:
        if exc.index is None:
            exc.index = i
        raise
    if "cache_control" in msg and role != "tool" and converted["content"]:
        _attach_cache_control(converted, msg["cache_control"])
    return converted


def append_turn(out: list[dict[str, Any]], converted: dict[str, Any]) -> None:
    """``converted`` after ``out``: merged into the last turn when the roles are the same."""
    if out and out[-1]["role"] == converted["role"]:
        _merge(out[-1], converted)
    else:
        out.append(converted)


def finish_turn(m: dict[str, Any]) -> dict[str, Any]:
    if m["role"] == "assistant" and not m["content"]:
        m["content"] = [{"type": "text", "text": EMPTY_ASSISTANT}]
    return m


def encode_conversation(
    messages: list[dict[str, Any]], ctx: ConvertContext
) -> tuple[str | list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """Return ``(system, messages)`` for the Anthropic body."""
    start = 0
    while start < len(messages) and is_leading_system(messages[start]):
        start += 1
    system = encode_system(messages[:start], ctx)
    out: list[dict[str, Any]] = []
    for i in range(start, len(messages)):
        converted = encode_message(messages[i], i, ctx)
        if out and out[-1]["role"] == converted["role"]:
            _merge(out[-1], converted)
        else:
            out.append(converted)
    out = _place_systems(out)
    for m in out:
        if m["role"] == "assistant" and not m["content"]:
            m["content"] = [{"type": "text", "text": EMPTY_ASSISTANT}]
    return system, out
