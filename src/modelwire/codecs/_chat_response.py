"""Chat Completions non-stream responses and error bodies, both directions."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from ..accumulate import deterministic_tool_call_id
from ..blockorder import joined_text_order
from ..completion import Completion
from ..errors import ProtocolError, ProviderError
from ..messages import split_think_tags
from ..types import AssistantMessage, empty_usage
from ._chat_common import (
    DEFAULT_ISSUER,
    MAPPING,
    error_class,
    error_code,
    error_message,
    finish_reason,
    loads,
    parse_error_body,
    status_in_error,
    usage_from_wire,
    usage_to_wire,
)
from ._chat_messages import SYNTHETIC_REASONING, gemini_block, wrap_details


# ------------------------------------------------------------------------ decode
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
        raw=data if parsed else dict(data),  # parsed here: nobody else holds it
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
        msg["annotations"] = [a for a in notes if isinstance(a, MAPPING)]
    return msg


def _item_text(detail: Mapping[str, Any]) -> str | None:
    block = detail["block"]
    text = block.get("summary") if block.get("type") == "reasoning.summary" else block.get("text")
    return text if isinstance(text, str) else None


def _content(content: Any) -> tuple[str, list[str]]:
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


def _thinking_texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [p["text"] for p in value if isinstance(p, MAPPING) and isinstance(p.get("text"), str)]
    return []


def _calls(wire_calls: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool calls, Gemini signature blocks that rode on them)."""
    out: list[dict[str, Any]] = []
    signatures: list[dict[str, Any]] = []
    if not isinstance(wire_calls, list):
        return out, signatures
    for call in wire_calls:
        if not isinstance(call, MAPPING):
            continue
        fn = call.get("function") if isinstance(call.get("function"), MAPPING) else {}
        name = fn.get("name") if isinstance(fn.get("name"), str) else ""
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


# ------------------------------------------------------------------------ encode
def encode_response(completion: Completion, request: Any = None, *, created: int | None = None,
                    id: str | None = None, model: str | None = None) -> dict[str, Any]:
    """The ``chat.completion`` body OpenAI would send for ``completion``.

    ``created`` (epoch seconds) comes from the caller: codecs have no clock. It
    defaults to the upstream's own ``created`` when known, else 0. ``id`` and ``model``:
    the answer's own (a gateway mints one per answer and names the model the client
    asked for); by default the completion's.
    """
    raw = completion.raw or {}
    if created is None:
        created = raw.get("created") if isinstance(raw.get("created"), int) else 0
    choice: dict[str, Any] = {
        "index": 0,
        "message": encode_message(completion.message),
        "logprobs": None,
        "finish_reason": completion.finish_reason,
    }
    return {
        "id": id or completion.id or _default_id(completion.model, completion.message),
        "object": "chat.completion",
        "created": created,
        "model": model or completion.model,
        "choices": [choice],
        "usage": usage_to_wire(completion.usage),
    }


def encode_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """Our assistant message -> the wire. ``reasoning_details`` entries go out in
    our ``{"issuer", "block"}`` form: a client that echoes them back (through
    the gateway's Chat Completions door) hands each block back with its issuer,
    so every upstream gets its own reasoning again and nobody else's."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, MAPPING) and p.get("type") == "text")
    out: dict[str, Any] = {"role": "assistant", "content": content, "refusal": message.get("refusal")}
    if isinstance(message.get("reasoning_content"), str):
        out["reasoning_content"] = message["reasoning_content"]
    details = tagged_details(message.get("reasoning_details"))
    if details:
        out["reasoning_details"] = details
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [{k: v for k, v in c.items() if k in ("id", "type", "function")} for c in calls]
    if message.get("annotations"):
        out["annotations"] = list(message["annotations"])
    order = joined_text_order(message) if "block_order" in message else None
    if order is not None:
        # modelwire's extension, like reasoning_details: a client that echoes the message
        # gives an Anthropic or Responses upstream its interleaved turn back in order
        out["block_order"] = order
    return out


def tagged_details(details: Any) -> list[dict[str, Any]]:
    if not isinstance(details, list):
        return []
    return [{"issuer": d.get("issuer") or "", "block": d["block"]} for d in details
            if isinstance(d, MAPPING) and isinstance(d.get("block"), MAPPING)]


def _default_id(model: str, message: Mapping[str, Any]) -> str:
    seed = orjson.dumps({"model": model, "message": message}, default=str, option=orjson.OPT_SORT_KEYS)
    return "chatcmpl-" + hashlib.sha256(seed).hexdigest()[:24]


# ------------------------------------------------------------------------ errors
def decode_error(status: int, headers: Mapping[str, str] | None,
                 body: bytes | dict | list | str | None) -> ProviderError:
    """An error response -> the most specific :class:`ProviderError`."""
    parsed, err = parse_error_body(body)
    code, type_ = error_code(err)
    if status == 200:
        status = status_in_error(err) or status
    cls = error_class(status if status != 200 else None, code, type_)
    hdrs = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    from ..resilience.retry_after import retry_after_seconds

    return cls(
        error_message(err),
        status=status if status != 200 else None,
        request_id=hdrs.get("x-request-id") or hdrs.get("request-id"),
        retry_after=retry_after_seconds(hdrs, parsed),
        headers=hdrs,
        body=parsed,
        code=code or type_ or (str(err["code"]) if isinstance(err.get("code"), int) else None),
    )


def stream_error(err: Any, chunk: Any) -> ProviderError:
    """An ``{"error": ...}`` inside a 200 stream (Groq ``tool_use_failed``,
    OpenRouter mid-stream failures)."""
    inner = err if isinstance(err, MAPPING) else {"message": str(err)}
    status = status_in_error(inner)
    code, type_ = error_code(inner)
    return error_class(status, code, type_)(
        error_message(inner), status=status, body=chunk, code=code or type_,
    )
