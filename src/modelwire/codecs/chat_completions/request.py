"""Chat Completions requests: ``encode_request`` (internal -> provider body) and
``decode_request`` (what a gateway front door receives -> internal)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from ...errors import MessageError, ProtocolError, UnsupportedContentError
from ...kept_json import KeptDict
from ...types import Effort, Request
from ...wire import EncodedRequest, ProviderProfile, Target, auth_headers
from ..cache import Converted, EncodeCache
from ..tools import NAMESPACE_KEY, allowed_only, native_tool
from ._common import DEFAULT_ISSUER, MAPPING, dumps, loads
from ._messages import SYNTHETIC_REASONING, encode_messages, reasoning_text, wrap_details

log = logging.getLogger("modelwire.codecs.chat_completions")

PATH = "/chat/completions"

# The body key each thinking knob writes (profile.reasoning_request -> key).
_KNOB_KEY: dict[str, str | None] = {
    "none": None,
    "reasoning_effort": "reasoning_effort",
    "openrouter": "reasoning",
    "thinking_flag": "thinking",
    "enable_thinking": "enable_thinking",
}
_THINKING_KEYS = frozenset(k for k in _KNOB_KEY.values() if k)

# Request fields with an internal meaning; everything else goes to ``extra``.
_KNOWN = frozenset(
    {"model", "messages", "tools", "tool_choice", "max_tokens", "max_completion_tokens",
     "temperature", "top_p", "stop", "response_format", "parallel_tool_calls", "stream",
     "stream_options"}
)

# OpenAI models that accept reasoning_effort "xhigh": gpt-5.1-codex-max and every
# model after it (gpt-5.2+, gpt-6...). Older ones answer 400 "unsupported_value".
_XHIGH_MODEL = re.compile(r"(?:^|/)(?:gpt-5\.1-codex-max|gpt-5\.(?:[2-9]|\d\d)|gpt-(?:[6-9]|\d\d))")


# ------------------------------------------------------------------------ encode
def encode_request(request: Request, target: Target) -> EncodedRequest:
    profile = target.profile
    if not isinstance(request, MAPPING):
        raise MessageError("request must be a mapping")
    body: dict[str, Any] = {
        "model": target.model or request.get("model", ""),
        "messages": encode_messages(request.get("messages"), profile),
    }
    _encode_tools(body, request, profile, target.cache)
    max_tokens = request.get("max_tokens")
    if max_tokens is not None:
        body[profile.max_tokens_field] = max_tokens
    for key in ("temperature", "top_p", "stop", "response_format"):
        value = request.get(key)
        if value is not None:
            body[key] = value
    _encode_thinking(body, request, profile, body["model"])
    metadata = request.get("metadata") or {}
    if request.get("stream"):
        body["stream"] = True
        options = {k: v for k, v in (metadata.get("stream_options") or {}).items() if k != "include_usage"}
        if profile.stream_usage:
            # Without it OpenAI-compatible streams carry no usage at all (litellm #5632)
            options["include_usage"] = True
            body["stream_options"] = options
        elif options:
            body["stream_options"] = options
    body = profile.patch_body(body, target)
    native = metadata.get("native_thinking")
    knob = _KNOB_KEY.get(profile.reasoning_request)
    extra = request.get("extra")
    if extra:
        answer_fits(extra, "extra")
    for key, value in (extra or {}).items():
        if key == native and key in _THINKING_KEYS and key != knob:
            # A front door's native thinking setting in a knob this endpoint does not
            # speak (Kimi answers 400 to both thinking and reasoning_effort):
            # the level in request["thinking"] was encoded instead.
            continue
        body[key] = value
    headers = {"content-type": "application/json"}
    headers.update(auth_headers(target.profile, target.api_key))
    if profile.default_headers:
        headers.update({k.lower(): v for k, v in profile.default_headers})
    if target.headers:
        headers.update({k.lower(): v for k, v in target.headers})
    return EncodedRequest("POST", PATH, headers, dumps(body))


def _encode_tools(
    body: dict[str, Any], request: Mapping[str, Any], profile: ProviderProfile, cache: EncodeCache | None
) -> None:
    tools = request.get("tools")
    choice = request.get("tool_choice")
    if type(choice) is dict and "allowed_tools" not in profile.tool_choice_values:
        tools, choice = allowed_only(tools, choice)  # only the allowed ones are sent
    if tools:
        if not isinstance(tools, list):
            raise MessageError("tools must be a list")
        kept = None
        if cache is not None:
            kept = _kept_tools(tools, profile, request, cache)
        body["tools"] = kept.value if kept is not None else _tools(tools, profile, request)
    if choice is not None and body.get("tools"):
        choice = _tool_choice(choice, profile)
        if choice == "none" and "none" not in profile.tool_choice_values:
            del body["tools"]  # no way to say "none": send no tools instead
        elif choice is not None:
            body["tool_choice"] = choice
    if request.get("parallel_tool_calls") is not None and body.get("tools"):
        if profile.parallel_tool_calls:
            body["parallel_tool_calls"] = request["parallel_tool_calls"]
        else:
            log.debug("%s does not take parallel_tool_calls; dropped", profile.name)


def _kept_tools(
    tools: list[Any], profile: ProviderProfile, request: Mapping[str, Any], cache: EncodeCache
) -> Converted | None:
    """:func:`_tools` converted once per content (Gemini's, xAI's and Moonshot's schema
    sanitizers are most of encoding an agent's request); None where the cache does not apply."""
    metadata = request.get("metadata")
    source = metadata.get("source_api") if isinstance(metadata, dict) else None
    if source is not None and not isinstance(source, str):
        return None  # native_tool reads it: it is part of the key

    def convert(specs: list[Any], notes: list[tuple[Any, ...]]) -> tuple[Any, None]:
        return _tools(specs, profile, request, notes), None

    return cache.whole(("chat_completions.tools", profile, source), tools, convert, log)


def _tools(
    tools: list[Any], profile: ProviderProfile, request: Mapping[str, Any],
    notes: list[tuple[Any, ...]] | None = None,
) -> list[dict[str, Any]]:
    """The tools as this endpoint takes them; duplicate-name warnings logged, or appended
    to ``notes`` (their ``log.warning`` arguments) when given."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for j, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise MessageError(f"tools[{j}] must be an object")
        if tool.get("type", "function") != "function":
            out.append(native_tool(tool, j, request, "chat_completions"))  # custom tools...
            continue
        fn = tool.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise MessageError(f"tools[{j}].function.name must be a string")
        name = fn["name"]
        if name in seen:
            # DeepSeek, Kimi, MiMo and custom endpoints behind them answer 400 "Tool names
            # must be unique" (forgecode #892, eino #632): for every target, first wins
            args = ("tools[%d]: duplicate tool name %r dropped (first definition wins)", j, name)
            if notes is None:
                log.warning(*args)
            else:
                notes.append(args)
            continue
        seen.add(name)
        if isinstance(fn.get("parameters"), dict):
            fn = {**fn, "parameters": profile.sanitize_tool_schema(fn["parameters"])}
        spec = {k: v for k, v in tool.items() if k != NAMESPACE_KEY} if NAMESPACE_KEY in tool else tool
        out.append({**spec, "type": "function", "function": fn})
    return out


_CHOICE_WORDS = frozenset({"auto", "none", "required", "any"})


def _tool_choice(choice: Any, profile: ProviderProfile) -> Any:
    allowed = profile.tool_choice_values
    if isinstance(choice, str):
        if choice not in _CHOICE_WORDS and choice not in allowed:
            raise MessageError(f"tool_choice {choice!r} is not one of auto, none, required")
        kind = choice
    elif isinstance(choice, dict) and isinstance(choice.get("type"), str):
        kind = choice["type"]
        fn = choice.get("function")
        if kind == "function" and not (isinstance(fn, dict) and isinstance(fn.get("name"), str)):
            raise MessageError("tool_choice.function.name must be a string")
    else:
        raise MessageError("tool_choice must be a string or an object with a type")
    if kind in allowed:
        return choice
    if kind == "required" and "any" in allowed:
        return "any"  # Mistral's word for "call some tool"
    if kind == "function":
        fallback = "required" if "required" in allowed else "any" if "any" in allowed else "auto"
    elif kind == "required":
        fallback = "auto"
    elif kind == "none":
        return "none"  # the caller drops the tools
    else:
        fallback = "auto"
    log.warning("%s does not take tool_choice %r; sending %r", profile.name, kind, fallback)
    return fallback if fallback in allowed else None


def openai_effort(level: Effort, model: str) -> str:
    """Our level -> OpenAI's reasoning_effort. ``xhigh`` and ``max`` become
    ``xhigh`` only where the model accepts it, else ``high``."""
    if level in ("xhigh", "max"):
        return "xhigh" if _XHIGH_MODEL.search(model.lower()) else "high"
    return level


def _encode_thinking(body: dict[str, Any], request: Mapping[str, Any], profile: ProviderProfile,
                     model: str) -> None:
    level = request.get("thinking")
    if not level:  # None or absent: the provider's default
        return
    mode = profile.reasoning_request
    if level == "none":  # asked off: say so where the endpoint has an off switch
        if mode == "thinking_flag":
            body["thinking"] = {"type": "disabled"}
        elif mode == "enable_thinking":
            body["enable_thinking"] = False
        return
    if mode == "reasoning_effort":
        body["reasoning_effort"] = openai_effort(level, model)
    elif mode == "openrouter":
        # OpenRouter's efforts include xhigh for every reasoning model
        body["reasoning"] = {"effort": "xhigh" if level == "max" else level}
    elif mode == "thinking_flag":
        body["thinking"] = {"type": "enabled"}
    elif mode == "enable_thinking":
        body["enable_thinking"] = True


# ------------------------------------------------------------------------ decode
_EFFORTS: dict[str, Effort | None] = {
    "none": None, "minimal": "low", "low": "low", "medium": "medium", "high": "high",
    "xhigh": "xhigh", "max": "max",
}


def decode_request(body: bytes | str | Mapping[str, Any], headers: Mapping[str, str] | None = None,
                   *, issuer: str | None = None) -> Request:
    data = loads(body, "request body") if isinstance(body, (bytes, bytearray, str)) else body
    if not isinstance(data, MAPPING):
        raise ProtocolError("request body must be a JSON object")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise MessageError("model is required and must be a string")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise MessageError("messages is required and must be a non-empty list")
    # dicts parsed here are this request's own: kept, not copied (a caller's are copied)
    owned = data is not body
    req: Request = {"model": model, "messages": _decode_messages(messages, issuer or DEFAULT_ISSUER, owned)}
    metadata: dict[str, Any] = {"source_api": "chat_completions"}
    _decode_fields(data, req, metadata)
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    _decode_thinking(data, req, metadata)
    if extra:
        answer_fits(extra, "request")
        req["extra"] = extra
    req["metadata"] = metadata
    return req


def answer_fits(fields: Mapping[str, Any], where: str) -> None:
    """An answer here is one text message: a request for several choices (``n``), token
    log-probabilities or spoken audio would have the translation drop what the upstream
    sends back, so it is refused instead (``UnsupportedContentError``: the gateway still
    forwards it as it is where the request takes the same-protocol lane)."""
    n = fields.get("n")
    if n is not None and (type(n) is not int or n != 1):  # True == 1, but is not a count
        if type(n) is not int or n < 1:
            raise MessageError(f"{where}: n must be a positive integer, got {n!r}")
        raise UnsupportedContentError(
            f"{where}: n={n} asks for {n} choices; modelwire answers with one choice, so send "
            f"{n} requests instead (a gateway forwards n unchanged only to an upstream that "
            "speaks Chat Completions itself)")
    modalities = fields.get("modalities")
    if fields.get("audio") or (isinstance(modalities, list) and "audio" in modalities):
        raise UnsupportedContentError(
            f"{where}: audio output (modalities / audio): modelwire carries text answers only (a "
            "gateway forwards it unchanged only to an upstream that speaks Chat Completions itself)")
    if fields.get("logprobs") or fields.get("top_logprobs"):
        raise UnsupportedContentError(
            f"{where}: logprobs / top_logprobs: modelwire does not carry token log-probabilities "
            "through a translation (a gateway forwards them unchanged only to an upstream that "
            "speaks Chat Completions itself)")


def _decode_messages(messages: list[Any], issuer: str, owned: bool = False) -> list[Any]:
    out = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise MessageError(f"messages[{i}] must be an object", index=i)
        role = msg.get("role")
        if not isinstance(role, str):
            raise MessageError(f"messages[{i}].role must be a string", index=i)
        content = msg.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise MessageError(f"messages[{i}].content must be a string, a list of parts or null", index=i)
        if role == "tool" and not isinstance(msg.get("tool_call_id"), str):
            raise MessageError(f"messages[{i}].tool_call_id must be a string", index=i)
        if msg.get("tool_calls") is not None and not isinstance(msg["tool_calls"], list):
            raise MessageError(f"messages[{i}].tool_calls must be a list", index=i)
        if role == "assistant" and ("reasoning_details" in msg or "reasoning_content" in msg
                                    or "reasoning" in msg):
            msg = _tag_reasoning(msg, issuer)  # a new dict when it tags anything
        # a kept message (the gateway's, read-only) is shared as it is
        out.append(msg if owned or type(msg) is KeptDict else dict(msg))
    return out


def _tag_reasoning(msg: dict[str, Any], issuer: str) -> dict[str, Any]:
    """Reasoning a client echoes carries its issuer, as in a decoded response:
    OpenRouter-style items wrapped, plain reasoning text as one synthetic block."""
    details = wrap_details(msg.get("reasoning_details"), issuer)
    text = reasoning_text(msg)
    if text and not details:
        details = [{"issuer": issuer, "block": {"type": SYNTHETIC_REASONING, "text": text}}]
    if not details:
        return msg
    return {**msg, "reasoning_details": details}


def _decode_fields(data: Mapping[str, Any], req: Request, metadata: dict[str, Any]) -> None:
    max_tokens = data.get("max_completion_tokens", data.get("max_tokens"))
    if max_tokens is not None:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise MessageError("max_tokens must be an integer")
        req["max_tokens"] = max_tokens
    for key in ("temperature", "top_p"):
        value = data.get(key)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise MessageError(f"{key} must be a number")
            req[key] = value  # type: ignore[literal-required]
    if data.get("tools") is not None:
        if not isinstance(data["tools"], list):
            raise MessageError("tools must be a list")
        req["tools"] = data["tools"]
    for key in ("tool_choice", "stop", "response_format", "parallel_tool_calls"):
        if data.get(key) is not None:
            req[key] = data[key]  # type: ignore[literal-required]
    if req.get("tool_choice") == "any":
        req["tool_choice"] = "required"  # Mistral's spelling, in our (OpenAI's) words
    if data.get("stream") is not None:
        req["stream"] = bool(data["stream"])
    options = data.get("stream_options")
    if options is not None and isinstance(options, MAPPING):  # None: no ABC check
        metadata["stream_options"] = dict(options)


def _decode_thinking(data: Mapping[str, Any], req: Request, metadata: dict[str, Any]) -> None:
    """The native thinking setting -> an effort level; the native one stays in
    ``extra`` (so a same-protocol re-encode is exact) and is named in
    ``metadata["native_thinking"]``."""
    effort = data.get("reasoning_effort")
    reasoning = data.get("reasoning")
    thinking = data.get("thinking")
    if isinstance(effort, str) and effort in _EFFORTS:
        req["thinking"], metadata["native_thinking"] = _EFFORTS[effort], "reasoning_effort"
    elif reasoning is not None and isinstance(reasoning, MAPPING):
        level: Effort | None = "medium"
        if isinstance(reasoning.get("effort"), str):
            level = _EFFORTS.get(reasoning["effort"], "medium")
        if reasoning.get("enabled") is False:
            level = None
        req["thinking"], metadata["native_thinking"] = level, "reasoning"
    elif thinking is not None and isinstance(thinking, MAPPING) and isinstance(thinking.get("type"), str):
        on = thinking["type"] in ("enabled", "adaptive")
        req["thinking"], metadata["native_thinking"] = ("medium" if on else None), "thinking"
    elif isinstance(data.get("enable_thinking"), bool):
        req["thinking"] = "medium" if data["enable_thinking"] else None
        metadata["native_thinking"] = "enable_thinking"
