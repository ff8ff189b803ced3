"""Responses API requests as a front door receives them -> internal :class:`~modelwire.types.Request`.

``instructions`` becomes a leading system message; ``input`` items fold into
messages: consecutive assistant-side items (reasoning, hosted tool calls, an
assistant message, function calls) make one assistant turn, in the order the
encoder writes them, so a same-protocol re-encode gives the same items. Fields
with no internal meaning go to ``extra`` verbatim (``previous_response_id``
included: the gateway decides to reject it). Bad input raises
:class:`~modelwire.errors.MessageError` / :class:`~modelwire.errors.ProtocolError`
naming what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from ...blockorder import order_field
from ...errors import MessageError, ProtocolError, UnsupportedContentError
from ...types import AssistantMessage, BlockKind, Effort, JSONValue, Message, Request, ToolSpec
from ._namespaces import NAMESPACE_KEY, call_name, flat_name
from ._shell import LOCAL_SHELL, shell_arguments, shell_tool_spec

__all__ = ["custom_input", "custom_input_schema", "custom_names", "decode_input", "decode_request", "reasoning_texts"]

# Responses reasoning.effort -> internal effort ("minimal" is clamped up, as Hermes does)
_EFFORT_IN: dict[str, Effort | None] = {
    "none": None, "minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh",
}
_ASSISTANT_ITEM_TYPES = frozenset({"reasoning", "function_call", "custom_tool_call", "message"})

# A custom tool (freeform text input, e.g. Codex's apply_patch) in the internal model: a
# function whose one argument is that text; the Responses door's encoders turn calls of it
# back into custom_tool_call items (the request's metadata names the custom tools)
def custom_input_schema() -> dict[str, Any]:
    """The parameters of a custom tool's function: one string, ``input`` (a new dict
    each time: a tool's schema is the caller's to change)."""
    return {
        "type": "object",
        "properties": {"input": {"type": "string", "description": "The tool's input, as free text (not JSON)."}},
        "required": ["input"],
        "additionalProperties": False,
    }


def custom_names(request: Mapping[str, Any] | None) -> frozenset[str]:
    """The names of the request's custom tools (set by :func:`decode_request`)."""
    meta = (request or {}).get("metadata")
    names = meta.get("custom_tools") if isinstance(meta, Mapping) else None
    return frozenset(names) if names else frozenset()


def custom_input(arguments: str) -> str:
    """A custom tool's text from a function call's arguments (``{"input": ...}``); a model
    that wrote something else gets it passed on as it is rather than lost."""
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments
    if isinstance(value, dict) and isinstance(value.get("input"), str):
        return value["input"]
    return arguments


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
    tools = _Tools(data.get("tools"))
    if tools.specs is not None:
        request["tools"] = tools.specs
    messages.extend(decode_input(data.get("input"), issuer, namespaces=tools.namespaces))
    request["messages"] = messages
    for key, value in data.items():
        if key in ("model", "instructions", "input", "tools"):
            continue
        _decode_field(key, value, request, extra)
    if tools.custom:
        request["metadata"]["custom_tools"] = tools.custom  # type: ignore[typeddict-unknown-key]
    if tools.namespaces:
        request["metadata"]["namespaces"] = tools.namespaces  # type: ignore[typeddict-unknown-key]
    if tools.shell:
        request["metadata"]["local_shell"] = True  # type: ignore[typeddict-unknown-key]
    if "tool_choice" in request:
        request["tool_choice"] = _namespaced_choice(request["tool_choice"], tools.namespaces)
    if extra:
        no_logprobs(extra)
        request["extra"] = extra
    return request


def no_logprobs(extra: Mapping[str, Any]) -> None:
    """Token log-probabilities ride on output text parts, which the internal model does not
    keep: asked for, they are refused rather than dropped (the gateway still forwards the
    request as it is where it takes the same-protocol lane)."""
    include = extra.get("include")
    top = extra.get("top_logprobs")
    if (isinstance(include, list) and "message.output_text.logprobs" in include) or (
            type(top) is int and top > 0):
        raise UnsupportedContentError(
            "include message.output_text.logprobs / top_logprobs: modelwire does not carry token "
            "log-probabilities through a translation (a gateway forwards them unchanged only to an "
            "upstream that speaks the Responses API itself)")


def _parse(body: bytes | dict[str, Any]) -> dict[str, Any]:
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        try:
            body = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ProtocolError(f"request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise MessageError("request body must be a JSON object")
    return body


class _Tools:
    """The request's tools as internal specs, namespace members flattened in place (see
    ``_namespaces``), with the names of the custom ones."""

    def __init__(self, value: JSONValue) -> None:
        self.specs: list[ToolSpec] | None = None
        self.custom: list[str] = []
        self.namespaces: dict[str, tuple[str, str]] = {}
        self.shell = False  # the local_shell tool is among them
        if value is None:
            return
        if not isinstance(value, list):
            raise MessageError("'tools' must be a list")
        self.specs = []
        taken = {t["name"] for t in value if isinstance(t, dict) and t.get("type") in ("function", "custom")
                 and isinstance(t.get("name"), str)}
        for tool in value:
            if isinstance(tool, dict) and tool.get("type") == "namespace":
                self._namespace(tool, taken)
            elif isinstance(tool, dict) and tool.get("type") == LOCAL_SHELL:
                self.shell = True
                self.specs.append(shell_tool_spec())  # type: ignore[arg-type]
            else:
                self._add(tool)

    def _add(self, tool: JSONValue, name: str | None = None) -> None:
        spec = _decode_tool(tool)
        if name is not None:
            spec["function"]["name"] = name  # type: ignore[typeddict-item]
        if isinstance(tool, dict) and tool.get("type") == "custom":
            self.custom.append(spec["function"]["name"])  # type: ignore[typeddict-item]
        self.specs.append(spec)  # type: ignore[union-attr]

    def _namespace(self, tool: dict[str, Any], taken: set[str]) -> None:
        space = tool.get("name")
        members = tool.get("tools")
        if not isinstance(space, str) or not space or not isinstance(members, list):
            raise MessageError("namespace tool needs a name and a list of tools")
        for member in members:
            if not isinstance(member, dict) or member.get("type") not in ("function", "custom"):
                raise MessageError(f"namespace {space!r}: its tools must be function or custom tools")
            if not isinstance(member.get("name"), str):
                raise MessageError(f"namespace {space!r}: a tool without a name")
            flat = flat_name(space, member["name"])
            if flat in taken:  # another tool has the joined name already
                flat = flat_name(space, member["name"], hashed=True)
            taken.add(flat)
            self.namespaces[flat] = (space, member["name"])
            self._add(member, flat)
            self.specs[-1][NAMESPACE_KEY] = {  # type: ignore[index, literal-required]
                "name": space, "description": tool.get("description"), "member": member["name"]}


def _namespaced_choice(choice: JSONValue, table: Mapping[str, tuple[str, str]]) -> Any:
    """``tool_choice`` naming a namespaced tool (``{"type": "function", "namespace": ...,
    "name": ...}``) names its flat function; ``allowed_tools`` entries likewise."""
    flat = {pair: name for name, pair in table.items()}

    def one(ref: JSONValue) -> Any:
        fn = ref.get("function") if isinstance(ref, dict) else None
        space = ref.get("namespace") if isinstance(ref, dict) else None
        if isinstance(fn, dict) and isinstance(space, str) and isinstance(fn.get("name"), str):
            name = flat.get((space, fn["name"])) or flat_name(space, fn["name"])
            return {"type": "function", "function": {"name": name}}
        return ref

    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        inner = choice.get("allowed_tools") or {}
        return {**choice, "allowed_tools": {**inner, "tools": [one(t) for t in inner.get("tools") or ()]}}
    return one(choice)


def _decode_field(key: str, value: JSONValue, request: Request, extra: dict[str, Any]) -> None:
    if key == "tool_choice":
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


def _typed(key: str, value: JSONValue, kind: type | tuple[type, ...]) -> Any:
    if isinstance(value, bool) and kind is not bool:
        raise MessageError(f"'{key}' must be a number")
    if not isinstance(value, kind):
        raise MessageError(f"'{key}' has the wrong type: {type(value).__name__}")
    return value


def _decode_tool(tool: JSONValue) -> ToolSpec:
    if not isinstance(tool, dict) or "type" not in tool:
        raise MessageError(f"tool must be an object with a type, got {tool!r:.80}")
    if tool["type"] == "custom":
        return _decode_custom_tool(tool)
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


def _decode_custom_tool(tool: dict[str, Any]) -> ToolSpec:
    """A custom tool as a function of one text argument; its grammar, which only OpenAI's
    models are constrained by, goes into the description for the others to follow."""
    if not isinstance(tool.get("name"), str):
        raise MessageError("custom tool without a name")
    about = [tool["description"]] if isinstance(tool.get("description"), str) and tool["description"] else []
    fmt = tool.get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "grammar" and isinstance(fmt.get("definition"), str):
        about.append(f"The input must follow this {fmt.get('syntax') or 'lark'} grammar:\n{fmt['definition']}")
    fn: dict[str, Any] = {"name": tool["name"], "parameters": custom_input_schema()}
    if about:
        fn["description"] = "\n\n".join(about)
    return {"type": "function", "function": fn}  # type: ignore[typeddict-item]


def _decode_tool_choice(choice: JSONValue) -> Any:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict):
        if choice.get("type") in ("function", "custom") and "name" in choice:
            return _choice_ref(choice)
        if choice.get("type") == "allowed_tools":
            tools = [
                _choice_ref(t) if isinstance(t, dict) and t.get("type") in ("function", "custom") and "name" in t
                else t for t in choice.get("tools") or ()
            ]
            return {"type": "allowed_tools", "allowed_tools": {"mode": choice.get("mode", "auto"), "tools": tools}}
        return dict(choice)
    raise MessageError(f"tool_choice must be a string or an object, got {choice!r:.80}")


def _choice_ref(ref: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "function": {"name": ref["name"]}}
    if isinstance(ref.get("namespace"), str):
        out["namespace"] = ref["namespace"]  # replaced by the flat name once the tools are known
    return out


def _decode_format(fmt: dict[str, Any]) -> dict[str, Any]:
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    inner = {k: v for k, v in fmt.items() if k != "type"}
    return {"type": "json_schema", "json_schema": inner}


def decode_input(value: JSONValue, issuer: str, *,
                 namespaces: Mapping[str, tuple[str, str]] | None = None) -> list[Message]:
    """Responses ``input`` (a string or items) -> internal messages. ``namespaces``: the
    request's flat name -> (namespace, name) table, for echoed namespaced calls."""
    flat = {pair: name for name, pair in (namespaces or {}).items()}
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
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            turn = None
            out.append(_decode_tool_result(item, index))
        elif kind in _ASSISTANT_ITEM_TYPES or kind.endswith("_call"):
            if turn is None or not turn.accepts(kind):
                turn = _Turn(flat)
                out.append(turn.message)
            turn.add(kind, item, index, issuer)
        elif kind == "item_reference":
            raise UnsupportedContentError(
                f"input[{index}]: item_reference {item.get('id')!r} points at an item the Responses "
                "API stored; modelwire sends whole conversations (store: false): send the item "
                "itself", index=index)
        else:
            raise UnsupportedContentError(
                f"input item type {kind!r} has no Chat Completions equivalent", index=index
            )
    return out


class _Turn:
    """Consecutive assistant-side items folded into one assistant message, their order
    kept as ``block_order`` (modelwire.blockorder) when it is not the default grouping:
    reasoning, function_call, reasoning, function_call is one turn, as the model made it.
    A second message item starts a new turn (one turn holds one text)."""

    _KIND: ClassVar[dict[str, BlockKind]] = {
        "reasoning": "reasoning", "message": "text", "function_call": "tool_call", "custom_tool_call": "tool_call",
        "local_shell_call": "tool_call",
    }

    def __init__(self, flat: Mapping[tuple[str, str], str]) -> None:
        self.flat = flat  # (namespace, name) -> the flat name the request's tools have
        self.message: AssistantMessage = {"role": "assistant", "content": None}
        self.kinds: list[BlockKind] = []

    def _flat_name(self, item: dict[str, Any]) -> str | None:
        namespace = item.get("namespace")
        return self.flat.get((namespace, item["name"])) if isinstance(namespace, str) else None

    def accepts(self, kind: str) -> bool:
        return not (kind == "message" and "text" in self.kinds)

    def add(self, kind: str, item: dict[str, Any], index: int, issuer: str) -> None:
        self.kinds.append(self._KIND.get(kind, "passthrough"))
        order = order_field(self.kinds)
        if order is not None:
            self.message["block_order"] = order
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
        elif kind == "local_shell_call":
            if not isinstance(item.get("call_id"), str):
                raise MessageError("local_shell_call item needs a call_id", index=index)
            msg.setdefault("tool_calls", []).append({
                "id": item["call_id"], "type": "function",
                "function": {"name": LOCAL_SHELL, "arguments": shell_arguments(item)},
            })
        elif kind in ("function_call", "custom_tool_call"):
            # a custom tool's text becomes the one argument of the function it is here
            field, what = ("arguments", "a JSON string") if kind == "function_call" else ("input", "a string")
            if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
                raise MessageError(f"{kind} item needs call_id and name", index=index)
            value = item.get(field, "")
            if not isinstance(value, str):
                raise MessageError(f"{kind} {field} must be {what}", index=index)
            arguments = value if kind == "function_call" else orjson.dumps({"input": value}).decode()
            msg.setdefault("tool_calls", []).append({
                "id": item["call_id"], "type": "function",
                "function": {"name": self._flat_name(item) or call_name(item),
                             "arguments": arguments},
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


def _output_content(content: JSONValue, index: int) -> tuple[str, str]:
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
    if call_id is None and item.get("type") == "local_shell_call_output":
        call_id = item.get("id")  # the API's shape names the call by "id"
    if not isinstance(call_id, str):
        raise MessageError(f"{item.get('type')} needs a call_id", index=index)
    output = item.get("output", "")
    if isinstance(output, list):
        content: Any = [_decode_part(p, index) for p in output]
    elif isinstance(output, str):
        content = output
    else:
        raise MessageError("function_call_output output must be a string or a list of parts", index=index)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _decode_part(part: JSONValue, index: int) -> dict[str, Any]:
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
