"""Chat Completions request messages: internal model -> the wire a profile accepts.

Everything here is driven by :class:`~modelwire.providers.profile.ProviderProfile`
fields (``developer_role``, ``vision``, ``vision_in_tool_results``,
``reasoning_echo``, ``tool_id_format``, ``accepts_issuer``), never by provider
names.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from ...errors import MessageError, UnsupportedContentError
from ...types import JSONValue
from ...wire import ProviderProfile

# Keys of our internal assistant message that no Chat Completions server takes
# as they are: reasoning goes out per the profile's echo policy; passthrough
# blocks have no Chat Completions meaning; ``reasoning`` and ``finish_reason``
# make Mistral answer 422 (extra fields forbidden, hermes #45655); ``refusal``
# goes out as content (below); ``annotations`` are response-only.
_ASSISTANT_INTERNAL = frozenset(
    {"reasoning_content", "reasoning_details", "passthrough", "reasoning", "refusal",
     "annotations", "finish_reason", "block_order"}  # block_order: modelwire's own (blockorder)
)
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_MEDIA_TYPES = frozenset({"image_url", "input_audio", "file"})
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")
_ANTHROPIC_BAD = re.compile(r"[^A-Za-z0-9_-]")
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
SYNTHETIC_REASONING = "reasoning_content"  # the block type we mint for plain reasoning text
# Gemini's thought signatures (``extra_content.google.thought_signature``, on a
# tool call or on the message) kept as a reasoning block so they survive streams,
# storage and the gateway (litellm #16893: lost in streaming). ``tool_call_id``
# names the call it rode on; none means the message itself.
GEMINI_SIGNATURE = "gemini_extra_content"


def gemini_block(extra: JSONValue, call_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": GEMINI_SIGNATURE, "extra_content": extra}
    if call_id is not None:
        block["tool_call_id"] = call_id
    return block


class ToolIds:
    """Maps tool-call ids to the profile's format, the same way for a call and
    its result, and the same way on every request (prompt-cache prefixes stay
    stable): a deterministic hash, not a counter."""

    __slots__ = ("_cache", "_format")

    def __init__(self, fmt: str) -> None:
        self._format = fmt
        self._cache: dict[str, str] = {}

    def __call__(self, call_id: str) -> str:
        if self._format == "any":
            return call_id
        mapped = self._cache.get(call_id)
        if mapped is None:
            mapped = self._cache[call_id] = self._map(call_id)
        return mapped

    def _map(self, call_id: str) -> str:
        if self._format == "mistral9":
            # Mistral rejects any id that is not exactly 9 [a-zA-Z0-9] characters
            # (opencode #1680, magentic #276): replayed ids from other providers
            # are hashed into that alphabet.
            if _MISTRAL_ID.fullmatch(call_id):
                return call_id
            n = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
            chars = []
            for _ in range(9):
                n, r = divmod(n, 62)
                chars.append(_B62[r])
            return "".join(chars)
        # "anthropic": [A-Za-z0-9_-]+ only
        clean = _ANTHROPIC_BAD.sub("_", call_id)
        return clean or "call_" + hashlib.sha256(call_id.encode()).hexdigest()[:24]


def encode_messages(messages: JSONValue, profile: ProviderProfile) -> list[dict[str, Any]]:
    if not isinstance(messages, list):
        raise MessageError("messages must be a list")
    # None: ids go out as they are (most profiles), without a call per id
    ids = ToolIds(profile.tool_id_format) if profile.tool_id_format != "any" else None
    out: list[dict[str, Any]] = []
    media: list[dict[str, Any]] = []  # attachments of the current run of tool results
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise MessageError(f"messages[{i}] must be an object", index=i)
        role = msg.get("role")
        if role not in _ROLES:
            raise MessageError(f"messages[{i}].role {role!r} is not one of {sorted(_ROLES)}", index=i)
        if role != "tool" and media:
            out.append(_media_turn(media))
            media = []
        if role == "assistant":
            out.append(_assistant(msg, i, profile, ids))
        elif role == "tool":
            out.append(_tool(msg, i, profile, ids, media))
        else:
            wire = _clean(msg)
            if role == "developer" and not profile.developer_role:
                wire["role"] = "system"  # endpoints without a developer role read it as system
            if role == "user" and not profile.vision:
                _check_vision(wire.get("content"), i, profile, "")
            out.append(wire)
    if media:
        out.append(_media_turn(media))
    return out


def _clean(msg: dict[str, Any]) -> dict[str, Any]:
    # ``_``-prefixed keys are caller scaffolding, never wire fields (seldom there: a
    # plain copy then, which costs about half a comprehension)
    for k in msg:
        if k[:1] == "_":
            return {k: v for k, v in msg.items() if k[:1] != "_"}
    return dict(msg)


def _check_vision(content: JSONValue, i: int, profile: ProviderProfile, where: str) -> None:
    if profile.vision or not isinstance(content, list):
        return
    for j, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") == "image_url":
            raise UnsupportedContentError(
                f"messages[{i}].content[{j}] is an image{where}, and {profile.name or 'this provider'} "
                "has no vision", index=i,
            )


def _assistant(msg: dict[str, Any], i: int, profile: ProviderProfile, ids: ToolIds | None) -> dict[str, Any]:
    wire = dict(msg)
    for k in msg:  # (a copy and deletes: cheaper than a comprehension for a few keys)
        if k in _ASSISTANT_INTERNAL or k[:1] == "_":
            del wire[k]
    calls = msg.get("tool_calls")
    if calls is None:
        wire.pop("tool_calls", None)  # null is no calls
    else:
        if not isinstance(calls, list):
            raise MessageError(f"messages[{i}].tool_calls must be a list", index=i)
        if calls:
            wire["tool_calls"] = [_call(c, i, j, profile, ids) for j, c in enumerate(calls)]
        else:
            del wire["tool_calls"]  # OpenAI rejects an empty tool_calls list
    refusal = msg.get("refusal")
    if isinstance(refusal, str) and refusal and not msg.get("content") and not wire.get("tool_calls"):
        # A refusal is the model's own words; sent as content so the turn is not
        # empty (OpenAI requires content or tool_calls) on any server.
        wire["content"] = refusal
    if isinstance(msg.get("reasoning_details"), list):
        _gemini_signatures(msg, wire, profile)
    text, details = _reasoning_echo(msg, profile)
    if text is not None:
        wire["reasoning_content"] = text
    if details:
        wire["reasoning_details"] = details
    return wire


def _call(call: JSONValue, i: int, j: int, profile: ProviderProfile, ids: ToolIds | None) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise MessageError(f"messages[{i}].tool_calls[{j}] must be an object with a function", index=i)
    fn = call["function"]
    name = fn.get("name")
    if not isinstance(name, str):
        raise MessageError(f"messages[{i}].tool_calls[{j}].function.name must be a string", index=i)
    args = fn.get("arguments", "")
    if type(args) is str:
        function = fn if "arguments" in fn else {**fn, "arguments": args}
    elif isinstance(args, (dict, list)):
        # a caller's parsed arguments: the wire wants a string
        function = {**fn, "arguments": orjson.dumps(args).decode()}
    elif args is None:
        function = {**fn, "arguments": ""}
    elif isinstance(args, str):
        function = {**fn, "arguments": str(args)}
    else:
        raise MessageError(f"messages[{i}].tool_calls[{j}].function.arguments must be a JSON string", index=i)
    call_id = call.get("id")
    if not isinstance(call_id, str):
        raise MessageError(f"messages[{i}].tool_calls[{j}].id must be a string", index=i)
    # other keys on the call (cache_control for OpenRouter's Anthropic caching) pass
    # through, like Mistral's ``index``
    out: dict[str, Any] = dict(call)
    out.pop("extra_content", None)
    out["id"] = call_id if ids is None else ids(call_id)
    out["type"] = "function"
    out["function"] = function
    extra = call.get("extra_content")
    if extra and profile.accepts_issuer("gemini"):
        # Gemini's thought_signature rides on the call (extra_content.google);
        # Gemini rejects the next turn without it, strict servers reject the key.
        out["extra_content"] = extra
    return out


def _gemini_signatures(msg: dict[str, Any], wire: dict[str, Any], profile: ProviderProfile) -> None:
    """Gemini rejects a replayed function call without its thought_signature
    ("Function call is missing a thought_signature"): put each signature block
    from an issuer this endpoint accepts back where it came from."""
    details = msg.get("reasoning_details")
    if not isinstance(details, list):
        return
    calls = {c["id"]: c for c in wire.get("tool_calls") or []}
    originals = [c.get("id") for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
    by_original = dict(zip(originals, wire.get("tool_calls") or [], strict=False))
    for d in details:
        block = d.get("block") if isinstance(d, dict) else None
        if not isinstance(block, dict) or block.get("type") != GEMINI_SIGNATURE:
            continue
        if not profile.accepts_issuer(d.get("issuer") or ""):
            continue
        call_id = block.get("tool_call_id")
        if call_id is None:
            wire["extra_content"] = block.get("extra_content")
            continue
        target = by_original.get(call_id) or calls.get(call_id)
        if target is not None and "extra_content" not in target:
            target["extra_content"] = block.get("extra_content")


def _reasoning_echo(msg: dict[str, Any], profile: ProviderProfile) -> tuple[str | None, list[dict[str, Any]]]:
    """(reasoning_content text, reasoning_details items) to send for one assistant turn."""
    policy = profile.reasoning_echo
    if policy == "none":
        return None, []
    details = msg.get("reasoning_details")
    if not details:
        return _unattributed_echo(msg, policy)
    details = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    own = [d for d in details if isinstance(d.get("block"), dict)
           and profile.accepts_issuer(d.get("issuer") or "")]
    if policy == "reasoning_details":
        # OpenRouter-style items go back verbatim, only to an equivalent issuer;
        # our synthetic reasoning_content blocks are not OpenRouter items.
        return None, [d["block"] for d in own
                      if d["block"].get("type") not in (SYNTHETIC_REASONING, GEMINI_SIGNATURE)]
    text = reasoning_text(msg)
    # Reasoning goes back only with a block from an issuer this endpoint accepts:
    # text from another provider is never leaked to this one (hermes #15748), and
    # text beside a seal the gateway could not open is the client's, not ours.
    if not own:
        text = None
    if policy == "reasoning_content":
        return (text if text else None), []
    # "required": DeepSeek thinking mode, Kimi, MiMo reject a tool-call turn
    # without reasoning_content; DeepSeek V4 rejects "" (hermes #17341), so a
    # single space stands in for reasoning that is missing or foreign.
    if msg.get("tool_calls"):
        return (text if text and text.strip() else " "), []
    return (text if text else None), []


def _unattributed_echo(msg: dict[str, Any], policy: str) -> tuple[str | None, list[dict[str, Any]]]:
    """Reasoning text with no block saying who wrote it: a history stored in the seed's
    shape (a database, another framework, an earlier version). DeepSeek, Kimi and MiMo
    need reasoning back on tool-call turns to keep their train of thought (a lone space
    loses it), so there it goes back as it is. Where echoing is optional it is not sent:
    it may be another provider's thoughts (hermes #15748), and nothing needs it.
    Attributed reasoning keeps the issuer rule in :func:`_reasoning_echo`."""
    if policy != "required":
        return None, []
    text = reasoning_text(msg)
    if text and text.strip():
        return text, []
    if msg.get("tool_calls"):
        return " ", []  # DeepSeek V4 rejects "" (hermes #17341)
    return None, []


def reasoning_text(msg: dict[str, Any]) -> str | None:
    text = msg.get("reasoning_content")
    if not isinstance(text, str):
        text = msg.get("reasoning") if isinstance(msg.get("reasoning"), str) else None
    return text


def _tool(msg: dict[str, Any], i: int, profile: ProviderProfile, ids: ToolIds | None,
          media: list[dict[str, Any]]) -> dict[str, Any]:
    call_id = msg.get("tool_call_id")
    if not isinstance(call_id, str):
        raise MessageError(f"messages[{i}].tool_call_id must be a string", index=i)
    wire = _clean(msg)
    # Anthropic's is_error (Claude Code marks failed tools) has no Chat Completions field,
    # and strict servers reject unknown keys: the result's text says it failed
    wire.pop("is_error", None)
    if ids is not None:
        wire["tool_call_id"] = ids(call_id)
    content = msg.get("content")
    if not isinstance(content, list):
        return wire
    attachments = [p for p in content if isinstance(p, dict) and p.get("type") in _MEDIA_TYPES]
    if not attachments:
        return wire
    _check_vision(content, i, profile, " in a tool result")
    if profile.vision_in_tool_results:
        return wire
    # Tool messages carry text only on Chat Completions: the attachments move to
    # one user turn after this run of tool results (litellm #6953: images lost).
    texts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    note = "(attachments follow in the next user message)"
    wire["content"] = "\n".join([t for t in texts if t] + [note])
    media.append({"type": "text", "text": f"Attachments from tool call {wire['tool_call_id']}:"})
    media.extend(attachments)
    return wire


def _media_turn(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": list(parts)}


def wrap_details(items: JSONValue, issuer: str) -> list[dict[str, Any]]:
    """Wire reasoning_details items -> internal entries. Items already in the
    internal ``{"issuer", "block"}`` form (a modelwire client replaying its
    history through the gateway) are kept as they are."""
    out: list[dict[str, Any]] = []
    if not isinstance(items, list):
        return out
    for item in items:
        if not isinstance(item, dict):
            continue
        if set(item) == {"issuer", "block"} and isinstance(item["block"], dict):
            out.append(item)
        else:
            out.append({"issuer": issuer, "block": item})
    return out
