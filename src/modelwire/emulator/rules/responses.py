"""OpenAI Responses: parse a ``/v1/responses`` body and enforce its item rules.

``store`` defaults to true, as on the real API: stored responses can be continued
with ``previous_response_id``. Under ``store: false`` nothing is kept, so an input
item that names an ``id`` gets 404 (except a reasoning item carrying its own
``encrypted_content``, which is self-contained).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...types import JSONValue
from ..model import PlannedCall, Prompt, ToolDef, Turn
from ..signing import Signer
from ..wire import ApiError, dumps
from . import Parsed, bad, text_of

__all__ = ["check_responses", "joined"]

_FOLLOWERS = ("function_call", "message", "custom_tool_call", "web_search_call",
              "file_search_call", "computer_call", "code_interpreter_call")


def check_responses(body: JSONValue, signer: Signer, stored: Mapping[str, list[Any]]) -> Parsed:
    if not isinstance(body, dict):
        raise bad("We could not parse the JSON body of your request.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("Missing required parameter: 'model'.", param="model",
                  code="missing_required_parameter")
    store = body.get("store", True) is not False
    raw_input = body.get("input")
    if raw_input is not None and not isinstance(raw_input, (str, list)):
        raise bad("Invalid type for 'input': expected one of a string or an array of input items.",
                  param="input", code="invalid_type")
    items: list[Any] = (
        [{"type": "message", "role": "user", "content": raw_input}]
        if isinstance(raw_input, str) else list(raw_input or [])
    )
    previous = body.get("previous_response_id")
    history: list[Any] = []
    if previous:
        if not isinstance(previous, str):
            raise bad("Invalid type for 'previous_response_id': expected a string.",
                      param="previous_response_id", code="invalid_type")
        if previous not in stored:
            raise bad(f"Previous response with id '{previous}' not found.",
                      param="previous_response_id", code="previous_response_not_found")
        history = stored[previous]
    _check_items(items, store, signer, history)
    if "stop" in body:  # Chat Completions' setting: the Responses API has no stop sequences
        raise bad("Unknown parameter: 'stop'.", param="stop", code="unknown_parameter")
    tools, namespaces = _tools(body.get("tools"))
    reasoning = r if isinstance(r := body.get("reasoning"), dict) else {}
    thinking_on = reasoning.get("effort") not in (None, "none") or bool(reasoning.get("summary"))
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice.get("name")
        space = choice.get("namespace")
        choice = joined(space, name) if isinstance(space, str) else str(name or "required")
    max_tokens = body.get("max_output_tokens")
    prompt = Prompt(
        tuple(_turns(history + items)), tools,
        tool_choice=choice if isinstance(choice, str) else "auto",
        parallel=body.get("parallel_tool_calls") is not False,
        thinking=thinking_on,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        json_schema=_text_format(body.get("text")),
    )
    include = body.get("include")
    include = include if isinstance(include, list) else []
    return Parsed(
        prompt, model, bool(body.get("stream")),
        prompt_chars=len(dumps([body.get("instructions"), body.get("tools"), history, items])),
        options={
            "store": store,
            "encrypted": "reasoning.encrypted_content" in include,
            "summary": reasoning.get("summary") if reasoning.get("summary") else None,
            "history": history + items,
            "echo": body,
            "namespaces": namespaces,
        },
    )


def _check_items(items: list[Any], store: bool, signer: Signer, history: list[Any]) -> None:
    # calls of a stored response continued with previous_response_id can be answered too
    calls = {str(h.get("call_id")) for h in history if h.get("type") == "function_call"}
    answered = {str(h.get("call_id")) for h in history if h.get("type") == "function_call_output"}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise bad(f"Invalid type for 'input[{i}]': expected an object.", param=f"input[{i}]",
                      code="invalid_type")
        kind = item.get("type", "message")
        item_id = item.get("id")
        self_contained = kind == "reasoning" and item.get("encrypted_content")
        if item_id and not store and not self_contained or kind == "item_reference" and not store:
            raise ApiError(404, f"Item with id '{item_id}' not found. Items are not persisted when "
                           "`store` is set to false. Try again with `store` set to true, or remove "
                           "this item from your input.", param="input")
        if kind == "reasoning":
            _check_reasoning(i, item, items, signer)
        elif kind == "function_call":
            if not isinstance(item.get("arguments"), str):
                raise bad(f"Invalid type for 'input[{i}].arguments': expected a string, but got "
                          "an object instead.", param=f"input[{i}].arguments", code="invalid_type")
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                raise bad(f"No tool call found for function call output with call_id {call_id}.",
                          param="input")
            answered.add(call_id)
        elif kind == "message" and item.get("role") == "user" and calls - answered:
            missing = min(calls - answered)
            raise bad(f"No tool output found for function call {missing}.", param="input")


def _check_reasoning(i: int, item: dict[str, Any], items: list[Any], signer: Signer) -> None:
    item_id = item.get("id", "")
    sealed = None
    if item.get("encrypted_content") is not None:
        sealed = signer.open_reasoning(str(item["encrypted_content"]))
        if sealed is None or (item_id and sealed.get("id") != item_id):
            raise bad(f"The encrypted content for item {item_id or f'input[{i}]'} could not be "
                      "verified. Reason: Encrypted content could not be decrypted or parsed.",
                      code="invalid_encrypted_content")
    nxt = items[i + 1] if i + 1 < len(items) else None
    following: dict[str, Any] = nxt if isinstance(nxt, dict) else {}
    nxt_kind = following.get("type", "message") if isinstance(nxt, dict) else None
    ok = nxt_kind in _FOLLOWERS and not (nxt_kind == "message" and following.get("role") != "assistant")
    if ok and sealed and sealed.get("follows") and sealed["follows"] != nxt_kind:
        ok = False
    if not ok:
        raise bad(f"Item '{item_id}' of type 'reasoning' was provided without its required "
                  "following item.", param="input")


def joined(namespace: str, name: JSONValue) -> str:
    """The model's name for a namespace member (its calls are rendered apart again)."""
    return f"{namespace}__{name}"


def _tools(raw: JSONValue) -> tuple[tuple[ToolDef, ...], dict[str, tuple[str, str]]]:
    """The function tools the model may call, namespace members included, and the table
    joined name -> (namespace, name) the renderer splits their calls with."""
    if raw is not None and not isinstance(raw, list):
        raise bad("Invalid type for 'tools': expected an array.", param="tools", code="invalid_type")
    out: list[ToolDef] = []
    namespaces: dict[str, tuple[str, str]] = {}
    for i, tool in enumerate(raw or []):
        if not isinstance(tool, dict):
            raise bad(f"Invalid type for 'tools[{i}]'.", param=f"tools[{i}]", code="invalid_type")
        kind = tool.get("type", "function")
        if kind == "function":
            out.append(_function(tool, f"tools[{i}]"))
        elif kind == "namespace":
            for member in _namespace_members(tool, i):
                namespaces[joined(tool["name"], member.name)] = (tool["name"], member.name)
                out.append(ToolDef(joined(tool["name"], member.name), member.description, member.parameters))
    return tuple(out), namespaces


def _function(tool: dict[str, Any], where: str) -> ToolDef:
    if not isinstance(tool.get("name"), str):
        raise bad(f"Missing required parameter: '{where}.name'.", param=f"{where}.name",
                  code="missing_required_parameter")
    return ToolDef(tool["name"], str(tool.get("description") or ""), tool.get("parameters") or {})


def _namespace_members(tool: dict[str, Any], i: int) -> list[ToolDef]:
    """A namespace tool's members, checked as the API does (name, description and tools
    required; members are function or custom tools)."""
    for key in ("name", "description", "tools"):
        if key not in tool:
            raise bad(f"Missing required parameter: 'tools[{i}].{key}'.", param=f"tools[{i}].{key}",
                      code="missing_required_parameter")
    if not isinstance(tool["name"], str) or not isinstance(tool["tools"], list):
        raise bad(f"Invalid type for 'tools[{i}]'.", param=f"tools[{i}]", code="invalid_type")
    members = []
    for j, member in enumerate(tool["tools"]):
        where = f"tools[{i}].tools[{j}]"
        kind = member.get("type") if isinstance(member, dict) else None
        if kind not in ("function", "custom"):
            raise bad(f"Invalid value for '{where}.type': a namespace holds function and custom tools.",
                      param=f"{where}.type", code="invalid_value")
        members.append(_function(member, where))
    return members


def _turns(items: list[Any]) -> list[Turn]:
    turns: list[Turn] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role == "user":
                turns.append(Turn("user", text_of(item.get("content"))))
            elif role == "assistant":
                turns.append(Turn("assistant", text_of(item.get("content"))))
        elif kind == "function_call":
            name = item.get("name")
            space = item.get("namespace")
            call = PlannedCall(joined(space, name) if isinstance(space, str) else str(name),
                               str(item.get("arguments")), str(item.get("call_id")))
            if turns and turns[-1].role == "assistant":
                prev = turns.pop()
                turns.append(Turn("assistant", prev.text, prev.calls + (call,)))
            else:
                turns.append(Turn("assistant", "", (call,)))
        elif kind == "function_call_output":
            turns.append(Turn("tool", text_of(item.get("output")), call_id=str(item.get("call_id"))))
    return turns


def _text_format(raw: JSONValue) -> dict[str, Any] | None:
    fmt = raw.get("format") if isinstance(raw, dict) else None
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema":
        return fmt.get("schema") if isinstance(fmt.get("schema"), dict) else {}
    return {} if fmt.get("type") == "json_object" else None
