"""Chat Completions non-stream responses: an upstream's body -> :class:`~modelwire.Completion`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...accumulate import deterministic_tool_call_id
from ...completion import Completion
from ...errors import ProtocolError
from ...messages import split_think_tags
from ...types import AssistantMessage, JSONValue, empty_usage
from ._common import (
    DEFAULT_ISSUER,
    MAPPING,
    finish_reason,
    loads,
    usage_from_wire,
)
from ._messages import SYNTHETIC_REASONING, gemini_block, wrap_details
from .errors import decode_error


def decode_response(body: bytes | str | Mapping[str, Any], *, issuer: str | None = None) -> Completion:
    parsed = isinstance(body, (bytes, bytearray, str))
    data = loads(body, "response body") if parsed else body
    if not isinstance(data, MAPPING):
        raise ProtocolError("response body must be a JSON object")
    if data.get("error") and not data.get("choices"):
        # some servers answer 200 with an error body
        raise decode_error(200, {}, dict(data))
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], MAPPING):
        raise ProtocolError("response has no choices")
    choice = choices[0]
    wire = choice.get("message")
    if not isinstance(wire, MAPPING):
        raise ProtocolError("choices[0].message must be an object")
    message = decode_message(wire, issuer or DEFAULT_ISSUER)
    reason, native = finish_reason(choice.get("finish_reason"), bool(message.get("tool_calls")))
    matched = choice.get("stop_reason")  # vLLM / SGLang: the stop sequence that ended the text
    usage = data.get("usage")
    model = data.get("model")
    rid = data.get("id")
    return Completion(
        message=message,
        finish_reason=reason,
        usage=usage_from_wire(usage) if usage and isinstance(usage, MAPPING) else empty_usage(),
        model=model if isinstance(model, str) else "",
        id=rid if isinstance(rid, str) else "",
        native_finish_reason=native,
        raw=data if parsed and isinstance(data, dict) else dict(data),  # parsed here: nobody else holds it
        stop_sequence=matched if type(matched) is str and reason == "stop" else None,
    )


def decode_message(wire: Mapping[str, Any], issuer: str) -> AssistantMessage:
    """A wire assistant message -> ours: reasoning from every field it hides in,
    inline think tags split out, tool calls with ids (deterministic when missing)."""
    text, reasoning = _content(wire.get("content"))
    for key in ("reasoning_content", "reasoning"):
        value = wire.get(key)
        if isinstance(value, str) and value:
            reasoning.insert(0, value)
            break
    items = wire.get("reasoning_details")
    details = wrap_details(items, issuer) if items else []
    if not reasoning and details:
        # Snowflake (Claude behind Cortex) sends the text only inside reasoning_details,
        # as reasoning.text items (reasoning.summary items carry it as summary)
        reasoning = [t for t in map(_item_text, details) if t]
    wire_calls = wire.get("tool_calls")
    calls, signatures = _calls(wire_calls) if wire_calls else ([], [])
    msg: AssistantMessage = {"role": "assistant", "content": text if text or not calls else None}
    joined = "".join(reasoning)
    if joined:
        msg["reasoning_content"] = joined
        if not details:
            details = [{"issuer": issuer, "block": {"type": SYNTHETIC_REASONING, "text": joined}}]
    if wire.get("extra_content"):
        signatures.append(gemini_block(wire["extra_content"]))
    details += [{"issuer": issuer, "block": b} for b in signatures]
    if details:
        msg["reasoning_details"] = details  # type: ignore[typeddict-item]
    refusal = wire.get("refusal")
    if isinstance(refusal, str) and refusal:
        msg["refusal"] = refusal
    if calls:
        msg["tool_calls"] = calls  # type: ignore[typeddict-item]
    notes = wire.get("annotations")  # a search model's url_citation list
    if notes and isinstance(notes, list):
        msg["annotations"] = [a for a in notes if isinstance(a, dict)]
    return msg


def _item_text(detail: Mapping[str, Any]) -> str | None:
    block = detail["block"]
    text = block.get("summary") if block.get("type") == "reasoning.summary" else block.get("text")
    return text if isinstance(text, str) else None


def _content(content: JSONValue) -> tuple[str, list[str]]:
    """(visible text, reasoning pieces) from a string or a list of parts."""
    if isinstance(content, str):
        reasoning, text = split_think_tags(content)
        return text, [reasoning] if reasoning else []
    if not isinstance(content, list):
        return "", []
    texts: list[str] = []
    thoughts: list[str] = []
    for part in content:
        if not isinstance(part, MAPPING):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "thinking":
            # Mistral Magistral: {"type": "thinking", "thinking": [{"type": "text", "text": ...}]}
            thoughts.extend(_thinking_texts(part.get("thinking")))
    reasoning, text = split_think_tags("".join(texts))
    return text, thoughts + ([reasoning] if reasoning else [])


def _thinking_texts(value: JSONValue) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [p["text"] for p in value if isinstance(p, MAPPING) and isinstance(p.get("text"), str)]
    return []


def _calls(wire_calls: JSONValue) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool calls, Gemini signature blocks that rode on them)."""
    out: list[dict[str, Any]] = []
    signatures: list[dict[str, Any]] = []
    if not isinstance(wire_calls, list):
        return out, signatures
    for call in wire_calls:
        if not isinstance(call, MAPPING):
            continue
        fn = call.get("function")
        if not isinstance(fn, MAPPING):
            fn = {}
        name = fn.get("name")
        if not isinstance(name, str):
            name = ""
        args = fn.get("arguments")
        if isinstance(args, (dict, list)):
            args = orjson.dumps(args).decode()  # some servers send an object, not a string
        elif not isinstance(args, str):
            args = ""
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            # Gemini's compat endpoint sends "" ids: a deterministic one keeps
            # prompt-cache prefixes stable
            call_id = deterministic_tool_call_id(name, args, len(out))
        out.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": args}})
        if call.get("extra_content"):
            signatures.append(gemini_block(call["extra_content"], call_id))
    return out, signatures


