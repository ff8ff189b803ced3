"""The internal model: OpenAI Chat Completions shapes as TypedDicts.

Every codec decodes into these and encodes from them. They are plain dicts at
runtime, so unknown keys (``cache_control`` on a part, provider extras) pass
through untouched.

Reasoning lives on the assistant message:

* ``reasoning_content``: the reasoning as text (what a person reads);
* ``reasoning_details``: a list of :class:`ReasoningDetail` entries, each the
  provider-native block exactly as received plus the ``issuer`` that can
  verify it. Blocks go back only to an equivalent issuer; elsewhere they are
  dropped, never pasted into text.

``passthrough`` on an assistant message carries provider blocks that have no
Chat Completions meaning (server tool use and results, citations,
``pause_turn`` continuations); each entry is ``{"issuer": ..., "block": ...}``
like a reasoning detail, so nothing the provider sent is lost.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast

from .wire.api import ApiMode

__all__ = [
    "ApiMode",
    "AssistantMessage",
    "ContentPart",
    "DeveloperMessage",
    "Effort",
    "FileContentPart",
    "FinishReason",
    "FunctionCall",
    "FunctionSpec",
    "ImageContentPart",
    "ImageURL",
    "InputAudio",
    "InputAudioContentPart",
    "JSONObject",
    "JSONValue",
    "Message",
    "PassthroughBlock",
    "ReasoningDetail",
    "Request",
    "Role",
    "Speed",
    "SystemMessage",
    "TextContentPart",
    "ToolCall",
    "ToolChoice",
    "ToolMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "empty_usage",
    "json_list",
    "json_object",
]

# Arbitrary JSON as decoded (a wire body, a provider's extra fields, a tool's arguments):
# the one place the API says Any, so a reader knows it means "any JSON", nothing wider.
JSONValue: TypeAlias = Any
JSONObject: TypeAlias = dict[str, JSONValue]

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]
FinishReason: TypeAlias = Literal["stop", "tool_calls", "length", "content_filter"]
Effort: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]
# Anthropic's fast mode where the model has it; "standard" turns a Client-wide "fast" off
Speed: TypeAlias = Literal["fast", "standard"]


# ---------------------------------------------------------------- content parts
class TextContentPart(TypedDict):
    type: Literal["text"]
    text: str
    cache_control: NotRequired[dict[str, Any]]


class ImageURL(TypedDict):
    url: str  # http(s) URL or a data: URL (data:image/png;base64,...)
    detail: NotRequired[Literal["auto", "low", "high"]]


class ImageContentPart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL
    cache_control: NotRequired[dict[str, Any]]


class InputAudio(TypedDict):
    data: str  # base64
    format: str  # "wav" | "mp3" | ...


class InputAudioContentPart(TypedDict):
    type: Literal["input_audio"]
    input_audio: InputAudio


class FileData(TypedDict, total=False):
    file_id: str
    file_data: str  # data: URL (data:application/pdf;base64,...)
    filename: str


class FileContentPart(TypedDict):
    type: Literal["file"]
    file: FileData
    cache_control: NotRequired[dict[str, Any]]


ContentPart: TypeAlias = (
    TextContentPart | ImageContentPart | InputAudioContentPart | FileContentPart
)


# ------------------------------------------------------------------- tool calls
class FunctionCall(TypedDict):
    name: str
    arguments: str  # always a JSON *string*, as OpenAI sends it


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class FunctionSpec(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]  # JSON Schema, type "object"
    strict: NotRequired[bool]


class ToolSpec(TypedDict):
    type: Literal["function"]
    function: FunctionSpec


# "auto" | "none" | "required", or a named tool: {"type": "function", "function": {"name": ...}}
ToolChoice: TypeAlias = 'Literal["auto", "none", "required"] | JSONObject'


# --------------------------------------------------------------------- reasoning
class ReasoningDetail(TypedDict):
    """One provider-native reasoning block and who can verify it.

    ``issuer`` is ``"<family>:<endpoint>"`` style text, e.g. ``"anthropic"``,
    ``"openai-responses"``, ``"openrouter"``, ``"gemini"``, ``"deepseek"``;
    the provider profile decides which issuers are equivalent.
    """

    issuer: str
    block: dict[str, Any]


class PassthroughBlock(TypedDict):
    issuer: str
    block: dict[str, Any]


# ---------------------------------------------------------------------- messages
class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[TextContentPart]
    name: NotRequired[str]


class DeveloperMessage(TypedDict):
    role: Literal["developer"]
    content: str | list[TextContentPart]
    name: NotRequired[str]


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[ContentPart]
    name: NotRequired[str]


# one block of an assistant turn, for ``block_order`` (see modelwire.blockorder)
BlockKind: TypeAlias = Literal["reasoning", "passthrough", "text", "tool_call"]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: NotRequired[str | list[ContentPart] | None]
    tool_calls: NotRequired[list[ToolCall]]
    reasoning_content: NotRequired[str]
    reasoning_details: NotRequired[list[ReasoningDetail]]
    refusal: NotRequired[str | None]
    passthrough: NotRequired[list[PassthroughBlock]]
    # the turn's block order when it is not the default grouping (modelwire.blockorder)
    block_order: NotRequired[list[BlockKind]]
    name: NotRequired[str]
    # response-only (never sent back): url_citation and friends, Chat Completions' shape
    annotations: NotRequired[list[dict[str, Any]]]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str | list[ContentPart]
    name: NotRequired[str]


Message: TypeAlias = (
    SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolMessage
)


# ----------------------------------------------------------------------- request
class Request(TypedDict, total=False):
    """What a caller asks for, in the internal model.

    ``thinking`` is an effort level or ``None`` (off). ``extra`` is merged into
    the encoded body last (provider-specific fields). ``metadata`` is ours and
    never sent upstream unless a codec maps it.
    """

    model: str
    messages: list[Message]
    tools: list[ToolSpec]
    tool_choice: str | dict[str, Any]  # "auto" | "none" | "required" | {"type": "function", ...}
    thinking: Effort | None
    max_tokens: int
    temperature: float
    top_p: float
    stop: str | list[str]
    response_format: dict[str, Any]
    parallel_tool_calls: bool
    stream: bool
    metadata: dict[str, Any]
    extra: dict[str, Any]


# ------------------------------------------------------------------------- usage
class Usage(TypedDict):
    """Token usage with OpenAI semantics: ``prompt_tokens`` includes cached ones.

    ``raw`` is the provider's own usage object, untouched.
    """

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    raw: dict[str, Any]


def empty_usage() -> Usage:
    return {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
        "raw": {},
    }


def json_object(value: object) -> JSONObject | None:
    """``value`` when it is a JSON object (a dict), else None."""
    return cast("JSONObject", value) if isinstance(value, dict) else None


def json_list(value: object) -> list[JSONValue]:
    """``value`` when it is a JSON array (a list), else an empty list."""
    return cast("list[JSONValue]", value) if isinstance(value, list) else []
