"""Reasoning normalization: every way providers hand back reasoning, in one shape.

Providers and clients put an assistant turn's reasoning in five places:

1. ``reasoning_content``: a plain string (DeepSeek, Z.AI GLM, Kimi, xAI,
   llama.cpp);
2. ``reasoning``: a plain string (OpenRouter, Groq, Cerebras, Ollama, vLLM), read
   only when ``reasoning_content`` is absent or empty (the first present wins);
3. ``reasoning_details``: OpenRouter/Vercel items ``reasoning.text`` (text,
   maybe a ``signature``), ``reasoning.summary`` (summary), ``reasoning.encrypted``
   (opaque ``data``) — or entries already in our ``{"issuer", "block"}`` form;
4. thinking blocks inside a list ``content`` (Anthropic-shaped ``thinking`` /
   ``redacted_thinking`` parts; DeepSeek V4 Pro sends ``thinking`` parts too,
   hermes #21944);
5. inline tags in string content (``<think>…</think>``, see ``_thinktags``).

:func:`normalize_reasoning` folds them, in that order, into
``reasoning_content`` (readable text, each distinct piece once, joined by a
blank line) and ``reasoning_details`` (a list of ``{"issuer", "block"}``, each
block exactly as received). Codecs then decide per target what goes back.

Reasoning is never pasted into the answer text: foreign reasoning shown to
Anthropic as assistant text triggers ``reasoning_extraction`` refusals
(oh-my-pi #7241), and the model would read its old thoughts as things it said.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .thinktags import split_think_tags

__all__ = ["is_reasoning_only", "normalize_reasoning"]

# Keys of an OpenRouter reasoning_details item that carry readable text, in
# the order hermes reads them (summary first: it is what people are shown).
_DETAIL_TEXT_KEYS = ("summary", "thinking", "content", "text")
_THINKING_PART_TYPES = frozenset({"thinking", "redacted_thinking"})
# Parsing inline tags twice could find a tag made by removing the first one
# ("<<think>a</think>think>b"): repeat until stable, a few rounds at most.
_MAX_TAG_ROUNDS = 4


class _Texts:
    """Distinct reasoning texts in first-seen order; a text already contained in
    what was collected is not added twice (OpenRouter sends the same thoughts
    as ``reasoning`` and as ``reasoning.text`` items). A single text is kept
    exactly as it came; several are trimmed and joined by a blank line."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[tuple[str, str]] = []  # (trimmed, as received)

    def add(self, text: Any) -> None:
        if not isinstance(text, str):
            return
        key = text.strip()
        if not key or any(key in part for part, _ in self.parts):
            return
        # a longer text that contains earlier pieces replaces them
        self.parts = [(part, raw) for part, raw in self.parts if part not in key]
        self.parts.append((key, text))

    def joined(self) -> str:
        if len(self.parts) == 1:
            return self.parts[0][1]
        return "\n\n".join(part for part, _ in self.parts)


def _is_entry(item: Any) -> bool:
    """Already ``{"issuer": str, "block": dict}``: pass unchanged."""
    return (
        isinstance(item, dict)
        and len(item) == 2
        and isinstance(item.get("issuer"), str)
        and isinstance(item.get("block"), dict)
    )


def _detail_text(item: dict[str, Any]) -> str | None:
    for key in _DETAIL_TEXT_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list):  # Responses-style summary: [{"text": ...}]
            joined = "\n\n".join(
                p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
            if joined.strip():
                return joined
    return None


def _split_content_parts(
    parts: list[Any], texts: _Texts, details: list[dict[str, Any]], issuer: str
) -> list[Any]:
    """Move thinking parts out of a content list; the rest stays in order."""
    kept: list[Any] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _THINKING_PART_TYPES:
            kept.append(part)
            continue
        if kind == "thinking":
            texts.add(part.get("thinking"))
            # An unsigned thinking block verifies nowhere (Anthropic answers
            # 400 "thinking.signature: Field required"); its text is kept above.
            if part.get("signature"):
                details.append({"issuer": issuer, "block": part})
        else:
            details.append({"issuer": issuer, "block": part})
    return kept


def _split_inline_tags(content: str, texts: _Texts) -> str:
    for _ in range(_MAX_TAG_ROUNDS):
        if "<" not in content:
            break
        reasoning, visible = split_think_tags(content)
        if not reasoning and visible == content:
            break
        texts.add(reasoning)
        content = visible
    return content


def _already_normal(msg: dict[str, Any]) -> bool:
    """Fast path: nothing to fold (most turns of a long conversation)."""
    if "reasoning" in msg:
        return False
    text = msg.get("reasoning_content")
    if text is not None and not (isinstance(text, str) and text.strip()):
        return False
    details = msg.get("reasoning_details")
    if details is not None and not (
        isinstance(details, list) and details and all(_is_entry(d) for d in details)
    ):
        return False
    content = msg.get("content")
    if isinstance(content, str):
        return "<" not in content
    if isinstance(content, list):
        return not any(
            isinstance(p, dict) and p.get("type") in _THINKING_PART_TYPES for p in content
        )
    return True


def normalize_reasoning(message: Mapping[str, Any], *, issuer: str | None = None) -> dict[str, Any]:
    """A new assistant message with its reasoning in ``reasoning_content`` and
    ``reasoning_details`` only (see the module docstring for the order).

    ``issuer`` names who issued raw blocks found on the message; by default
    raw ``reasoning_details`` items are ``"openrouter"``'s and thinking parts in
    content are ``"anthropic"``'s. Entries already ``{"issuer", "block"}`` pass
    unchanged. Messages of other roles come back as a plain copy. Idempotent.
    """
    out = dict(message)
    if out.get("role") != "assistant" or _already_normal(out):
        return out
    texts = _Texts()
    details: list[dict[str, Any]] = []
    # the first present of reasoning_content and reasoning, as the seed reads them
    # (4.5: msg.get("reasoning_content") or msg.get("reasoning")): no recorded exchange
    # has a provider sending different text in both, so joining them only ever doubled
    # one text in two spellings, or mixed in a stale copy
    alias = out.pop("reasoning", None)
    first = out.get("reasoning_content")
    texts.add(first if isinstance(first, str) and first.strip() else alias)
    raw_details = out.get("reasoning_details")
    if isinstance(raw_details, list):
        for item in raw_details:
            if _is_entry(item):
                details.append(item)
            elif isinstance(item, dict):
                texts.add(_detail_text(item))
                details.append({"issuer": issuer or "openrouter", "block": item})
    content = out.get("content")
    if isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in _THINKING_PART_TYPES for p in content
    ):
        kept = _split_content_parts(content, texts, details, issuer or "anthropic")
        out["content"] = kept if kept else (None if out.get("tool_calls") else "")
    elif isinstance(content, str):
        visible = _split_inline_tags(content, texts)
        if visible != content:
            # the accumulator's convention: no text beside tool calls is None
            out["content"] = visible if visible or not out.get("tool_calls") else None
    joined = texts.joined()
    if joined:
        out["reasoning_content"] = joined
    else:
        out.pop("reasoning_content", None)
    if details:
        out["reasoning_details"] = details
    else:
        out.pop("reasoning_details", None)
    return out


def _has_visible_content(content: Any) -> bool:
    if content is None:
        return False
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                return True  # an image, a file, or anything we do not know: visible
            text = part.get("text")
            if not isinstance(text, str) or text.strip():
                return True
        return False
    return True


def is_reasoning_only(message: dict[str, Any]) -> bool:
    """An assistant message (already normalized) with reasoning and nothing else:
    no visible content, no tool calls, no refusal, no passthrough blocks.

    Such a turn is dropped from what is sent: Anthropic rejects an assistant
    message whose final block is thinking, and other providers get an empty turn.
    """
    if message.get("role") != "assistant":
        return False
    if message.get("tool_calls") or message.get("refusal") or message.get("passthrough"):
        return False
    if _has_visible_content(message.get("content")):
        return False
    return bool(message.get("reasoning_content") or message.get("reasoning_details"))
