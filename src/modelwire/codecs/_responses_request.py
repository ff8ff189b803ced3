"""Responses API requests: internal :class:`~modelwire.types.Request` <-> ``/responses`` body.

Encoding rules and why:

* Leading ``system`` messages become ``instructions``; ``developer`` messages and
  later system messages stay in ``input`` with their role (the API accepts both
  roles as input messages).
* Assistant turns become items in wire order: reasoning items, pass-through
  items (hosted tool calls), the assistant text, then ``function_call`` items.
* ``store: false`` unless the profile says the endpoint stores responses. Then:
  ``include: ["reasoning.encrypted_content"]`` whenever thinking is on (without it,
  reasoning cannot be replayed statelessly), and replayed item ids are stripped
  (OpenAI answers 404 "Item with id 'rs_…' not found" for ids it did not store).
* A reasoning item must be followed by the item it belongs to (OpenAI: 400
  "Item 'rs_…' of type 'reasoning' was provided without its required following
  item"): a turn with reasoning but nothing else drops its reasoning.
* Reasoning goes back only to an equivalent issuer: encrypted_content is sealed
  to the key of whoever minted it (OpenAI: 400 ``invalid_encrypted_content``).
* Function tools are flat and carry ``strict: false`` unless the caller set it:
  the Responses API treats an omitted ``strict`` as "normalize into strict mode",
  which makes optional parameters required (langchain#35837, open-webui#27750);
  the internal model has Chat Completions semantics, where omitted means false.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..errors import MessageError, ProtocolError, UnsupportedContentError
from ..types import Effort, Message, Request, ToolSpec
from ._target import EncodedRequest, Target

__all__ = ["decode_request", "encode_request", "request_fields"]

log = logging.getLogger("modelwire.codecs.responses")

# internal effort -> Responses reasoning.effort; "max" has no Responses level above xhigh
_EFFORT_OUT: dict[str, str] = {"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh"}
# Responses reasoning.effort -> internal effort ("minimal" is clamped up, as Hermes does)
_EFFORT_IN: dict[str, Effort | None] = {
    "none": None, "minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh",
}
_ASSISTANT_ITEM_TYPES = frozenset({"reasoning", "function_call", "message"})
_ENCRYPTED_INCLUDE = "reasoning.encrypted_content"


# =================================================================== encoding
def encode_request(request: Request, target: Target) -> EncodedRequest:
    """The ``POST /responses`` request for ``request`` on ``target``."""
    import orjson

    profile = target.profile
    body = request_fields(request, model=target.model, sanitize=profile.sanitize_tool_schema)
    store = profile.responses_store
    body["store"] = store
    if request.get("thinking") and not store:
        body["include"] = [_ENCRYPTED_INCLUDE]
    body["input"] = encode_input(request.get("messages") or [], accepts=profile.accepts_issuer, store=store)
    if request.get("stream"):
        body["stream"] = True
    body = profile.patch_body(body, target)
    _merge_extra(body, request.get("extra") or {})
    headers = {"content-type": "application/json"}
    headers["accept"] = "text/event-stream" if request.get("stream") else "application/json"
    headers.update(target.auth_headers())
    headers.update(dict(profile.default_headers))
    headers.update(dict(target.headers))
    return EncodedRequest("POST", "/responses", headers, orjson.dumps(body))


def request_fields(request: Request, *, model: str, sanitize: Any = None) -> dict[str, Any]:
    """Every body field but ``input``/``store``/``include``: also used by the
    response encoders to echo the request's settings the way the API does."""
    body: dict[str, Any] = {"model": model}
    instructions = _instructions(request.get("messages") or [])
    if instructions is not None:
        body["instructions"] = instructions
    tools = request.get("tools")
    if tools:
        body["tools"] = [_encode_tool(t, sanitize) for t in tools]
    if "tool_choice" in request:
        body["tool_choice"] = _encode_tool_choice(request["tool_choice"])
    if "parallel_tool_calls" in request:
        body["parallel_tool_calls"] = request["parallel_tool_calls"]
    effort = request.get("thinking")
    if effort:
        body["reasoning"] = {"effort": _EFFORT_OUT.get(effort, "medium"), "summary": "auto"}
    if "max_tokens" in request:
        body["max_output_tokens"] = request["max_tokens"]
    for key in ("temperature", "top_p"):
        if key in request:
            body[key] = request[key]  # type: ignore[literal-required]
    if request.get("stop"):
        # the Responses API has no stop sequences and rejects the parameter (400)
        log.warning("responses: 'stop' is not supported by the Responses API; dropped")
    fmt = request.get("response_format")
    if fmt:
        body["text"] = {"format": _encode_format(fmt)}
    return body


def _merge_extra(body: dict[str, Any], extra: Mapping[str, Any]) -> None:
    # shallow, as the contract says: a native setting in extra (a front door's
    # own "reasoning" or "text") wins whole, so a re-encode says exactly what the
    # client said and adds nothing it did not ask for
    body.update(extra)


def _instructions(messages: list[Message]) -> str | None:
    parts = []
    for msg in messages:
        if msg.get("role") != "system":
            break
        parts.append(_plain_text(msg.get("content"), "system"))
    return "\n\n".join(parts) if parts else None


def _plain_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise UnsupportedContentError(f"{where} content may only hold text parts, got {part!r:.80}")
            out.append(part.get("text", ""))
        return "".join(out)
    if content is None:
        return ""
    raise MessageError(f"{where} content must be a string or a list of parts")


def encode_input(messages: list[Message], *, accepts: Any, store: bool) -> list[dict[str, Any]]:
    """Internal messages -> Responses ``input`` items."""
    items: list[dict[str, Any]] = []
    start = 0
    while start < len(messages) and messages[start].get("role") == "system":
        start += 1  # these went to instructions
    seen_reasoning: set[str] = set()
    for index in range(start, len(messages)):
        msg = messages[index]
        role = msg.get("role")
        if role in ("system", "developer", "user"):
            items.append({"role": role, "content": _encode_content(msg.get("content"), index)})
        elif role == "assistant":
            items.extend(_encode_assistant(msg, index, accepts, store, seen_reasoning))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not call_id:
                raise MessageError("tool message without tool_call_id", index=index)
            items.append({
                "type": "function_call_output",
                "call_id": call_id,
                "output": _encode_tool_output(msg.get("content"), index),
            })
        else:
            raise MessageError(f"unknown role {role!r}", index=index)
    return items


def _encode_assistant(
    msg: Any, index: int, accepts: Any, store: bool, seen: set[str]
) -> list[dict[str, Any]]:
    body: list[dict[str, Any]] = []
    text = _assistant_text(msg.get("content"), index)
    if msg.get("refusal"):
        # an input message cannot carry a refusal part without an output-message id;
        # the refusal is what the assistant said, so it goes back as its text
        text = (text + "\n" if text else "") + msg["refusal"]
    for entry in msg.get("passthrough") or ():
        block = entry.get("block") if isinstance(entry, dict) else None
        if isinstance(block, dict) and accepts(entry.get("issuer", "")) and "type" in block:
            body.append(_strip_id(block, store))
    if text:
        body.append({"role": "assistant", "content": text})
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") or {}
        body.append({
            "type": "function_call",
            "call_id": call.get("id") or "",
            "name": fn.get("name", ""),
            "arguments": fn.get("arguments") or "{}",
        })
    if not body:
        # reasoning alone would be an orphan (400 "provided without its required
        # following item"), so a turn with nothing else sends nothing
        return []
    reasoning = [_replay_reasoning(d, store) for d in msg.get("reasoning_details") or () if _is_own(d, accepts)]
    unique = []
    for item in reasoning:
        if item is None:
            continue
        key = item.get("encrypted_content") or item.get("id") or repr(item)
        if key in seen:
            continue  # the same item replayed twice is a 400 (duplicate item)
        seen.add(key)
        unique.append(item)
    return unique + body


def _is_own(detail: Any, accepts: Any) -> bool:
    return (
        isinstance(detail, dict)
        and isinstance(detail.get("block"), dict)
        and detail["block"].get("type") == "reasoning"
        and accepts(detail.get("issuer", ""))
    )


def _replay_reasoning(detail: dict[str, Any], store: bool) -> dict[str, Any] | None:
    block = detail["block"]
    if not store and not block.get("encrypted_content") and not block.get("content"):
        # without storage, an id-less item with no encrypted or raw content carries
        # nothing the model can use (Hermes replays only encrypted items)
        return None
    item = _strip_id(block, store)
    item.pop("status", None)  # output-only field on reasoning items
    item.setdefault("summary", [])  # required on input reasoning items
    return item


def _strip_id(block: dict[str, Any], store: bool) -> dict[str, Any]:
    item = dict(block)
    if not store:
        item.pop("id", None)
    return item


def _assistant_text(content: Any, index: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                out.append(part.get("text", ""))
            else:
                raise UnsupportedContentError(
                    f"assistant content part {part!r:.80} cannot be sent to the Responses API", index=index
                )
        return "".join(out)
    raise MessageError("assistant content must be a string or a list of parts", index=index)


def _encode_content(content: Any, index: int) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise MessageError("content must be a string or a list of parts", index=index)
    return [_encode_part(p, index) for p in content]


def _encode_tool_output(content: Any, index: int) -> str | list[dict[str, Any]]:
    if content is None:
        return ""
    return _encode_content(content, index)


def _encode_part(part: Any, index: int) -> dict[str, Any]:
    # cache_control has no Responses meaning (OpenAI caches prefixes automatically)
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return {"type": "input_text", "text": part.get("text", "")}
    if kind == "image_url":
        image = part.get("image_url") or {}
        if isinstance(image, str):
            image = {"url": image}
        return {"type": "input_image", "image_url": image.get("url", ""), "detail": image.get("detail", "auto")}
    if kind == "file":
        out = {"type": "input_file"}
        out.update({k: v for k, v in (part.get("file") or {}).items() if k in ("file_id", "file_data", "filename")})
        return out
    if kind == "input_audio":
        return {"type": "input_audio", "input_audio": dict(part.get("input_audio") or {})}
    raise UnsupportedContentError(f"content part {part!r:.80} cannot be sent to the Responses API", index=index)


def _encode_tool(spec: Any, sanitize: Any) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise MessageError(f"tool spec must be an object, got {spec!r:.80}")
    if spec.get("type") != "function" or "function" not in spec:
        return dict(spec)  # a Responses-native tool (web_search, mcp...) passes through
    fn = spec["function"]
    out: dict[str, Any] = {"type": "function", "name": fn.get("name", "")}
    if "description" in fn:
        out["description"] = fn["description"]
    params = fn.get("parameters")
    if params is not None:
        out["parameters"] = sanitize(params) if sanitize else params
    out["strict"] = bool(fn.get("strict", False))  # see the module docstring
    return out


def _encode_tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict):
        if choice.get("type") == "function" and isinstance(choice.get("function"), dict):
            return {"type": "function", "name": choice["function"].get("name", "")}
        if choice.get("type") == "allowed_tools" and isinstance(choice.get("allowed_tools"), dict):
            inner = choice["allowed_tools"]
            return {
                "type": "allowed_tools",
                "mode": inner.get("mode", "auto"),
                "tools": [_flat_tool_ref(t) for t in inner.get("tools") or ()],
            }
        return dict(choice)
    raise MessageError(f"tool_choice must be a string or an object, got {choice!r:.80}")


def _flat_tool_ref(ref: Any) -> Any:
    if isinstance(ref, dict) and isinstance(ref.get("function"), dict):
        return {"type": "function", "name": ref["function"].get("name", "")}
    return ref


def _encode_format(fmt: Any) -> dict[str, Any]:
    if not isinstance(fmt, dict):
        raise MessageError("response_format must be an object")
    if fmt.get("type") == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        return {"type": "json_schema", **fmt["json_schema"]}
    return dict(fmt)


# =================================================================== decoding
def decode_request(
    body: bytes | dict[str, Any], headers: Mapping[str, str] | None = None, *, issuer: str | None = None
) -> Request:
    """What a Responses front door receives -> internal request.

    ``issuer`` tags replayed reasoning items (default ``"openai"``). Fields with no
    internal meaning (``include``, ``store``, ``previous_response_id``, ``metadata``,
    ``truncation``...) go to ``extra`` verbatim; the gateway decides what to reject.
    """
    data = _parse(body)
    issuer = issuer or "openai"
    request: Request = {"metadata": {"source_api": "responses"}}
    extra: dict[str, Any] = {}
    messages: list[Message] = []
    if "model" in data:
        if not isinstance(data["model"], str):
            raise MessageError("'model' must be a string")
        request["model"] = data["model"]
    instructions = data.get("instructions")
    if isinstance(instructions, str):
        messages.append({"role": "system", "content": instructions})
    elif instructions is not None:
        raise MessageError("'instructions' must be a string")
    messages.extend(decode_input(data.get("input"), issuer))
    request["messages"] = messages
    for key, value in data.items():
        if key in ("model", "instructions", "input"):
            continue
        _decode_field(key, value, request, extra)
    if extra:
        request["extra"] = extra
    return request


def _parse(body: bytes | dict[str, Any]) -> dict[str, Any]:
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        import orjson

        try:
            body = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ProtocolError(f"request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise MessageError("request body must be a JSON object")
    return body


def _decode_field(key: str, value: Any, request: Request, extra: dict[str, Any]) -> None:
    if key == "tools":
        if not isinstance(value, list):
            raise MessageError("'tools' must be a list")
        request["tools"] = [_decode_tool(t) for t in value]
    elif key == "tool_choice":
        request["tool_choice"] = _decode_tool_choice(value)
    elif key == "reasoning":
        if isinstance(value, dict) and value.get("effort") is not None:
            effort = _EFFORT_IN.get(value["effort"])
            if value["effort"] not in _EFFORT_IN:
                raise MessageError(f"unknown reasoning.effort {value['effort']!r}")
            request["thinking"] = effort
        extra["reasoning"] = value  # native setting kept, so a re-encode says the same
    elif key == "text":
        if not isinstance(value, dict):
            raise MessageError("'text' must be an object")
        fmt = value.get("format")
        if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
            request["response_format"] = _decode_format(fmt)
        if set(value) - {"format"}:
            extra["text"] = value  # verbosity and friends: the whole native object
    elif key == "max_output_tokens":
        if value is not None:
            request["max_tokens"] = _typed(key, value, int)
    elif key in ("temperature", "top_p"):
        if value is not None:
            request[key] = _typed(key, value, (int, float))  # type: ignore[literal-required]
    elif key == "parallel_tool_calls":
        if value is not None:
            request["parallel_tool_calls"] = _typed(key, value, bool)
    elif key == "stream":
        request["stream"] = bool(value)
    else:
        extra[key] = value


def _typed(key: str, value: Any, kind: Any) -> Any:
    if isinstance(value, bool) and kind is not bool:
        raise MessageError(f"'{key}' must be a number")
    if not isinstance(value, kind):
        raise MessageError(f"'{key}' has the wrong type: {type(value).__name__}")
    return value


def _decode_tool(tool: Any) -> ToolSpec:
    if not isinstance(tool, dict) or "type" not in tool:
        raise MessageError(f"tool must be an object with a type, got {tool!r:.80}")
    if tool["type"] != "function":
        return dict(tool)  # type: ignore[return-value]  # hosted tool, passes through
    if not isinstance(tool.get("name"), str):
        raise MessageError("function tool without a name")
    fn: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description") is not None:
        fn["description"] = tool["description"]
    if tool.get("parameters") is not None:
        fn["parameters"] = tool["parameters"]
    if tool.get("strict") is not None:
        fn["strict"] = tool["strict"]
    return {"type": "function", "function": fn}  # type: ignore[typeddict-item]


def _decode_tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict):
        if choice.get("type") == "function" and "name" in choice:
            return {"type": "function", "function": {"name": choice["name"]}}
        if choice.get("type") == "allowed_tools":
            tools = [
                {"type": "function", "function": {"name": t["name"]}}
                if isinstance(t, dict) and t.get("type") == "function" and "name" in t else t
                for t in choice.get("tools") or ()
            ]
            return {"type": "allowed_tools", "allowed_tools": {"mode": choice.get("mode", "auto"), "tools": tools}}
        return dict(choice)
    raise MessageError(f"tool_choice must be a string or an object, got {choice!r:.80}")


def _decode_format(fmt: dict[str, Any]) -> dict[str, Any]:
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    inner = {k: v for k, v in fmt.items() if k != "type"}
    return {"type": "json_schema", "json_schema": inner}


def decode_input(value: Any, issuer: str) -> list[Message]:
    """Responses ``input`` (a string or items) -> internal messages."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        raise MessageError("'input' must be a string or a list of items")
    out: list[Message] = []
    turn: _Turn | None = None
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise MessageError(f"input item {index} must be an object", index=index)
        kind = item.get("type", "message")
        role = item.get("role")
        if not isinstance(kind, str):
            raise MessageError(f"input item {index} has a non-string type", index=index)
        if kind == "message" and role != "assistant":
            turn = None
            out.append(_decode_message(item, index))
        elif kind == "function_call_output":
            turn = None
            out.append(_decode_tool_result(item, index))
        elif kind in _ASSISTANT_ITEM_TYPES or kind.endswith("_call"):
            if turn is None or not turn.accepts(kind):
                turn = _Turn()
                out.append(turn.message)
            turn.add(kind, item, index, issuer)
        else:
            raise UnsupportedContentError(
                f"input item type {kind!r} has no Chat Completions equivalent", index=index
            )
    return out


class _Turn:
    """Consecutive assistant-side items folded into one assistant message.

    A new turn starts when an item would break the wire order the encoder
    produces (reasoning, hosted calls, text, function calls): e.g. text after a
    function call, or reasoning after text, so a re-encode gives the same order.
    """

    _RANK = {"reasoning": 0, "passthrough": 1, "message": 2, "function_call": 3}

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"role": "assistant", "content": None}
        self.last = -1
        self.text: list[str] = []

    def _rank(self, kind: str) -> int:
        return self._RANK.get(kind, 1)

    def accepts(self, kind: str) -> bool:
        rank = self._rank(kind)
        return rank > self.last or (rank == self.last and kind != "message")

    def add(self, kind: str, item: dict[str, Any], index: int, issuer: str) -> None:
        self.last = self._rank(kind)
        msg = self.message
        if kind == "reasoning":
            msg.setdefault("reasoning_details", []).append({"issuer": issuer, "block": item})
            text = "\n\n".join(reasoning_texts(item))
            if text:
                prev = msg.get("reasoning_content")
                msg["reasoning_content"] = f"{prev}\n\n{text}" if prev else text
        elif kind == "message":
            text, refusal = _output_content(item.get("content"), index)
            msg["content"] = text
            if refusal:
                msg["refusal"] = refusal
        elif kind == "function_call":
            if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
                raise MessageError("function_call item needs call_id and name", index=index)
            arguments = item.get("arguments", "")
            if not isinstance(arguments, str):
                raise MessageError("function_call arguments must be a JSON string", index=index)
            msg.setdefault("tool_calls", []).append({
                "id": item["call_id"], "type": "function",
                "function": {"name": item["name"], "arguments": arguments},
            })
        else:
            msg.setdefault("passthrough", []).append({"issuer": issuer, "block": item})


def reasoning_texts(item: dict[str, Any]) -> list[str]:
    """Readable text of a reasoning item: summary parts, then raw reasoning_text parts."""
    out = []
    for key in ("summary", "content"):
        for part in item.get(key) or ():
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                out.append(part["text"])
    return out


def _output_content(content: Any, index: int) -> tuple[str, str]:
    if isinstance(content, str):
        return content, ""
    text, refusal = [], []
    for part in content or ():
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("output_text", "input_text", "text"):
            text.append(part.get("text", ""))
        elif kind == "refusal":
            refusal.append(part.get("refusal", ""))
        else:
            raise UnsupportedContentError(f"assistant content part {kind!r} is not supported", index=index)
    return "".join(text), "".join(refusal)


def _decode_message(item: dict[str, Any], index: int) -> Message:
    role = item.get("role")
    if role not in ("user", "system", "developer"):
        raise MessageError(f"unknown message role {role!r}", index=index)
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}  # type: ignore[return-value]
    if not isinstance(content, list):
        raise MessageError("message content must be a string or a list of parts", index=index)
    return {"role": role, "content": [_decode_part(p, index) for p in content]}  # type: ignore[return-value]


def _decode_tool_result(item: dict[str, Any], index: int) -> Message:
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        raise MessageError("function_call_output needs a call_id", index=index)
    output = item.get("output", "")
    if isinstance(output, list):
        content: Any = [_decode_part(p, index) for p in output]
    elif isinstance(output, str):
        content = output
    else:
        raise MessageError("function_call_output output must be a string or a list of parts", index=index)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _decode_part(part: Any, index: int) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text", "")}
    if kind == "input_image":
        if not part.get("image_url"):
            # an uploaded file id names an image only OpenAI can resolve; Chat
            # Completions image parts need a URL or a data URL
            raise UnsupportedContentError(
                "input_image by file_id has no Chat Completions equivalent (it needs a URL)", index=index
            )
        image: dict[str, Any] = {"url": part["image_url"]}
        if part.get("detail") in ("auto", "low", "high"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if kind == "input_file":
        if part.get("file_url"):
            raise UnsupportedContentError("input_file by file_url has no Chat Completions equivalent", index=index)
        return {"type": "file", "file": {k: part[k] for k in ("file_id", "file_data", "filename") if part.get(k)}}
    if kind == "input_audio":
        return {"type": "input_audio", "input_audio": dict(part.get("input_audio") or {})}
    raise UnsupportedContentError(f"content part {kind!r} has no Chat Completions equivalent", index=index)
