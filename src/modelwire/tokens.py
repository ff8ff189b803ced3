"""A fast token *estimate* for context budgets (no tokenizer, no I/O).

:func:`estimate_tokens` answers "about how many input tokens is this?" in
microseconds, for budgeting decisions (when to elide old tool results, when a
conversation is near a model's context window) and as a local stand-in for
Anthropic's ``count_tokens``. It is an estimate, not a count: real tokenizers
differ by model family, and providers add their own hidden overhead. It leans
towards overestimating, which is the safe side for budgets.

The rules:

* text: one token per 4 characters of ASCII, plus one per 3 bytes of the
  UTF-8 encoding beyond the first byte of each character (so a CJK character
  counts about 0.9 tokens and a Cyrillic one about 0.6, close to or above what
  cl100k/o200k and Claude's tokenizer give);
* each message: :data:`MESSAGE_OVERHEAD` tokens for the role and framing;
* each tool call: :data:`TOOL_CALL_OVERHEAD` plus its name and arguments as text;
* an image: :data:`IMAGE_TOKENS` (:data:`IMAGE_TOKENS_LOW` with ``detail: low``):
  OpenAI bills a 1024x1024 high-detail image 765 tokens and 85 at low detail;
  Anthropic about (width x height) / 750, some 1,600 for a full-size image;
* audio and files: :data:`AUDIO_TOKENS` and :data:`FILE_TOKENS` each (their
  base64 length says little: no provider tokenizes binary data as text, and a
  PDF page costs about the same whatever its bytes);
* a :class:`~modelwire.types.Request`: its messages, plus its tool specs as JSON text;
* reasoning text on assistant messages counts (providers that keep it in
  context bill it); opaque ``reasoning_details`` blocks do not.
"""

from __future__ import annotations

import json

from .types import JSONValue

__all__ = [
    "AUDIO_TOKENS",
    "FILE_TOKENS",
    "IMAGE_TOKENS",
    "IMAGE_TOKENS_LOW",
    "MESSAGE_OVERHEAD",
    "TOOL_CALL_OVERHEAD",
    "estimate_text_tokens",
    "estimate_tokens",
]

MESSAGE_OVERHEAD = 4
TOOL_CALL_OVERHEAD = 8
IMAGE_TOKENS = 1_200
IMAGE_TOKENS_LOW = 85
AUDIO_TOKENS = 1_000
FILE_TOKENS = 1_500


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens of a piece of text (0 for the empty string)."""
    if not text:
        return 0
    chars = len(text)
    if text.isascii():
        return (chars + 3) // 4
    extra_bytes = len(text.encode("utf-8", "surrogatepass")) - chars
    return (chars + 3) // 4 + (extra_bytes + 2) // 3


def _part_tokens(part: JSONValue) -> int:
    if isinstance(part, str):
        return estimate_text_tokens(part)
    if not isinstance(part, dict):
        return 0
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text"):
        return estimate_text_tokens(part.get("text") or "")
    if kind in ("image_url", "image", "input_image"):
        image = part.get("image_url")
        low = isinstance(image, dict) and image.get("detail") == "low"
        return IMAGE_TOKENS_LOW if low else IMAGE_TOKENS
    if kind in ("input_audio", "audio"):
        return AUDIO_TOKENS
    if kind in ("file", "document", "input_file"):
        return FILE_TOKENS
    # unknown part types: count what they say as text
    return estimate_text_tokens(json.dumps(part, default=str))


def _content_tokens(content: JSONValue) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_text_tokens(content)
    if isinstance(content, list):
        return sum(_part_tokens(part) for part in content)
    return estimate_text_tokens(str(content))


def _message_tokens(message: JSONValue) -> int:
    if not isinstance(message, dict):
        return MESSAGE_OVERHEAD
    total = MESSAGE_OVERHEAD + _content_tokens(message.get("content"))
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str):
        total += estimate_text_tokens(reasoning)
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            total += TOOL_CALL_OVERHEAD
            total += estimate_text_tokens(str(function.get("name") or ""))
            total += estimate_text_tokens(str(function.get("arguments") or ""))
    return total


def estimate_tokens(obj: JSONValue) -> int:
    """Estimated input tokens of a string, a message, a message list or a Request.

    An estimate (see the module docstring for the rules), never an exact
    count. Anything else raises :class:`TypeError`.
    """
    if isinstance(obj, str):
        return estimate_text_tokens(obj)
    if isinstance(obj, dict):
        if "messages" in obj:  # a Request
            total = estimate_tokens(obj.get("messages") or [])
            tools = obj.get("tools")
            if tools:
                total += estimate_text_tokens(json.dumps(tools, separators=(",", ":")))
            return total
        return _message_tokens(obj)
    if isinstance(obj, (list, tuple)):
        return sum(_message_tokens(message) for message in obj)
    raise TypeError(f"estimate_tokens takes a string, a message, a list or a Request, "
                    f"not {type(obj).__name__}")
