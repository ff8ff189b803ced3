"""OpenAI Chat Completions (and the OpenAI-compatible providers' variants):
parse a ``/v1/chat/completions`` body and enforce the rules of the chosen profile."""

from __future__ import annotations

import re
from typing import Any

from ...messages.stops import stop_list
from ...types import JSONValue
from ..model import PlannedCall, Prompt, ToolDef, Turn
from ..profiles import EmuProfile
from ..wire import ApiError, dumps
from . import Parsed, bad, cache_prefix_chars, text_of

__all__ = ["check_chat", "thinking_requested"]


def thinking_requested(body: dict[str, Any], profile: EmuProfile) -> bool:
    """Whether the request asks for reasoning, in any of the providers' spellings."""
    model = str(body.get("model") or "").lower()
    thinking = body.get("thinking")
    if isinstance(thinking, dict):
        if thinking.get("type") == "disabled":
            return False
        if thinking.get("type") in ("enabled", "adaptive"):
            return True
    effort = body.get("reasoning_effort")
    if isinstance(effort, str) and effort not in ("none", "minimal"):
        return True
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort") not in (None, "none"):
        return True
    if body.get("enable_thinking") is True:
        return True
    # DeepSeek's reasoner and Kimi's *-thinking models think without being asked
    return profile.reasoning_required and ("reasoner" in model or "thinking" in model)


def check_chat(body: JSONValue, profile: EmuProfile) -> Parsed:
    if not isinstance(body, dict):
        raise bad("We could not parse the JSON body of your request.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("you must provide a model parameter", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad("[] is too short - 'messages'", param="messages", code="empty_array")
    if profile.reasoning_models and re.search(profile.reasoning_models, model):
        _reasoning_model_settings(body)
    tools = _tools(body.get("tools"), profile)
    thinking_on = thinking_requested(body, profile)
    turns = _messages(messages, profile, thinking_on)
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        choice = str((choice.get("function") or {}).get("name") or "required")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    prompt = Prompt(
        tuple(turns), tools,
        tool_choice=choice if isinstance(choice, str) else "auto",
        parallel=body.get("parallel_tool_calls") is not False,
        thinking=thinking_on,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        json_schema=_response_format(body.get("response_format")),
        stop=stop_list(body.get("stop")),
    )
    blocks: list[Any] = []
    for m in messages:
        content = m.get("content")
        blocks += content if isinstance(content, list) else [{"text": content}]
    stream_options = body.get("stream_options")
    if not isinstance(stream_options, dict):
        stream_options = {}
    return Parsed(
        prompt, model, bool(body.get("stream")),
        prompt_chars=len(dumps([body.get("tools"), messages])),
        cache_prefix_chars=cache_prefix_chars(blocks),
        options={"include_usage": bool(stream_options.get("include_usage"))},
    )


def _tools(raw: JSONValue, profile: EmuProfile) -> tuple[ToolDef, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise bad("Invalid type for 'tools': expected an array.", param="tools", code="invalid_type")
    out = []
    seen: set[str] = set()
    for i, tool in enumerate(raw):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise bad(f"Missing required parameter: 'tools[{i}].function'.",
                      param=f"tools[{i}].function", code="missing_required_parameter")
        name = fn["name"]
        if name in seen and profile.unique_tool_names:
            # DeepSeek, Kimi and MiMo reject a request that defines one function twice
            raise bad(f"Duplicate tool name: '{name}'. Tool names must be unique.",
                      code="invalid_request_error")
        seen.add(name)
        out.append(ToolDef(name, str(fn.get("description") or ""), fn.get("parameters") or {}))
    return tuple(out)


def _messages(messages: list[Any], profile: EmuProfile, thinking_on: bool) -> list[Turn]:
    turns: list[Turn] = []
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message
    open_at = -1
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise bad(f"Invalid type for 'messages[{i}]': expected an object.",
                      param=f"messages[{i}]", code="invalid_type")
        role = msg.get("role")
        if role != "tool" and open_calls:
            raise _missing_results(open_at, open_calls)
        if role == "assistant":
            _reasoning_input(i, msg, profile, thinking_on)
            calls = _calls(i, msg.get("tool_calls"))
            open_calls = {c.id: i for c in calls}
            open_at = i
            turns.append(Turn("assistant", text_of(msg.get("content")), tuple(calls)))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in open_calls:
                raise bad("Invalid parameter: messages with role 'tool' must be a response to a "
                          "preceeding message with 'tool_calls'.", param=f"messages.[{i}].role")
            del open_calls[call_id]
            turns.append(Turn("tool", text_of(msg.get("content")), call_id=str(call_id)))
        elif role in ("user", "system", "developer", "function"):
            if role == "user":
                turns.append(Turn("user", text_of(msg.get("content"))))
        else:
            raise bad(f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', "
                      "'user', 'function', 'tool', and 'developer'.",
                      param=f"messages[{i}].role", code="invalid_value")
    if open_calls:
        raise _missing_results(open_at, open_calls)
    return turns


def _missing_results(i: int, open_calls: dict[str, int]) -> ApiError:
    return bad("An assistant message with 'tool_calls' must be followed by tool messages "
               "responding to each 'tool_call_id'. The following tool_call_ids did not have "
               f"response messages: {', '.join(open_calls)}", param=f"messages.[{i}].role")


def _calls(i: int, raw: JSONValue) -> list[PlannedCall]:
    if not raw:
        return []
    if not isinstance(raw, list):
        raise bad(f"Invalid type for 'messages[{i}].tool_calls': expected an array.",
                  param=f"messages[{i}].tool_calls", code="invalid_type")
    out = []
    for j, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise bad(f"Missing required parameter: 'messages[{i}].tool_calls[{j}].function'.",
                      param=f"messages[{i}].tool_calls[{j}].function",
                      code="missing_required_parameter")
        args = fn.get("arguments")
        if not isinstance(args, str):
            kind = {dict: "an object", list: "an array"}.get(type(args), type(args).__name__)
            raise bad(f"Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': "
                      f"expected a string, but got {kind} instead.",
                      param=f"messages[{i}].tool_calls[{j}].function.arguments", code="invalid_type")
        out.append(PlannedCall(str(fn.get("name")), args, str(call.get("id"))))
    return out


def _reasoning_input(i: int, msg: dict[str, Any], profile: EmuProfile, thinking_on: bool) -> None:
    style = profile.reject_reasoning_input
    if style and "reasoning_content" in msg:
        raise _strict_rejection(style, i, msg["reasoning_content"])
    if (profile.reasoning_required and thinking_on and msg.get("tool_calls")
            and not isinstance(msg.get("reasoning_content"), str)):
            # DeepSeek thinking mode: every assistant turn that made tool calls must carry its
            # reasoning_content in all later requests (api-docs.deepseek.com/guides/thinking_mode)
            raise bad("The `reasoning_content` in the thinking mode must be passed back to the API.",
                      code="invalid_request_error")


def _strict_rejection(style: str, i: int, value: JSONValue) -> ApiError:
    """How Mistral, Groq and Cerebras reject a field they do not know."""
    if style == "mistral":
        body = {"object": "error", "message": {"detail": [{
            "type": "extra_forbidden", "loc": ["body", "messages", i, "assistant", "reasoning_content"],
            "msg": "Extra inputs are not permitted", "input": value}]},
            "type": "invalid_request_message_error", "param": None, "code": None}
        return ApiError(422, "Extra inputs are not permitted", body=body)
    if style == "groq":
        return bad(f"'messages.{i}' : for 'role:assistant' the following must be satisfied"
                   f"[('messages.{i}' : property 'reasoning_content' is unsupported)]")
    param = f"body.messages.{i}.assistant.reasoning_content"
    body = {"message": f"{param}: Extra inputs are not permitted", "type": "invalid_request_error",
            "param": param, "code": "wrong_api_format"}
    return ApiError(400, body["message"], body=body)


def _response_format(raw: JSONValue) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    if raw.get("type") == "json_schema":
        schema = (raw.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else {}
    return {} if raw.get("type") == "json_object" else None


def _reasoning_model_settings(body: dict[str, Any]) -> None:
    """What OpenAI's reasoning models refuse, in their words."""
    if body.get("stop") is not None:
        raise bad("Unsupported parameter: 'stop' is not supported with this model.", param="stop",
                  code="unsupported_parameter")
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and value != 1:
            raise bad(f"Unsupported value: '{name}' does not support {value} with this model. Only the "
                      "default (1) value is supported.", param=name, code="unsupported_value")
