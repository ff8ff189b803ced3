"""``ProviderProfile``: what one provider endpoint speaks and accepts, as data.

Quirks are *fields* (capabilities, field names, policies) read by the codecs;
a provider that needs more gets a small subclass in ``providers/`` overriding
one of the hooks, each hook taking and returning whole values. Profiles do no
I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .api import ApiMode
from .embedding import EmbeddingSpec

if TYPE_CHECKING:
    from .target import Target

__all__ = [
    "AuthStyle",
    "ProviderProfile",
    "ReasoningEcho",
    "ReasoningRequest",
    "ToolIdFormat",
]

AuthStyle: TypeAlias = Literal["bearer", "x-api-key", "api-key", "none"]

# How reasoning from earlier assistant turns goes back (Chat Completions):
#   "none"               never sent (OpenAI, and strict providers that reject the field:
#                        Mistral, Groq, Cerebras, SambaNova)
#   "reasoning_content"  sent as reasoning_content when the turn has it
#   "required"           reasoning_content on every assistant turn that made tool calls
#                        (DeepSeek thinking mode, Kimi, MiMo); a single space when the
#                        turn's reasoning came from another issuer
#   "reasoning_details"  OpenRouter-style reasoning_details items from an equivalent issuer
ReasoningEcho: TypeAlias = Literal["none", "reasoning_content", "required", "reasoning_details"]

# How a thinking level is requested (Chat Completions):
#   "none"              the endpoint has no knob (thinking levels are ignored)
#   "reasoning_effort"  OpenAI's top-level reasoning_effort
#   "openrouter"        OpenRouter's {"reasoning": {"effort": ...}}
#   "thinking_flag"     {"thinking": {"type": "enabled"}} (DeepSeek V4, Z.AI GLM, Kimi)
#   "enable_thinking"   {"enable_thinking": true} (Qwen/DashScope, SiliconFlow)
ReasoningRequest: TypeAlias = Literal[
    "none", "reasoning_effort", "openrouter", "thinking_flag", "enable_thinking"
]

# Tool-call id formats a provider accepts:
#   "any"       anything
#   "mistral9"  exactly 9 characters [a-zA-Z0-9] (Mistral rejects others)
#   "anthropic" [A-Za-z0-9_-]+ (Anthropic rejects others)
ToolIdFormat: TypeAlias = Literal["any", "mistral9", "anthropic"]


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    name: str
    base_url: str = ""
    api_mode: ApiMode = "chat_completions"
    auth_style: AuthStyle = "bearer"
    key_env: tuple[str, ...] = ()
    default_headers: tuple[tuple[str, str], ...] = ()
    docs_url: str = ""
    # the issuer name this endpoint's reasoning blocks carry, and the issuers whose
    # blocks it accepts back (Anthropic signatures verify on Anthropic, Bedrock, Vertex)
    issuer: str = ""
    accepts_issuers: frozenset[str] = frozenset()
    # Anthropic Messages
    anthropic_version: str | None = None  # "2026-10-21" direct; "2023-06-01" for most compatibles
    drop_earlier_thinking: bool = False  # drop thinking from turns before the current tool loop
    unsigned_thinking_echo: bool = False  # DeepSeek/Kimi Anthropic endpoints: rebuild from text
    fine_grained_tool_streaming: bool = True  # per-tool eager_input_streaming (MiniMax: no)
    fast_mode: bool = False  # speed: fast + its beta may be sent (direct endpoint only), when asked
    # the endpoint's real output limit for its own (non-Claude) models: the default
    # max_tokens, mandatory on this protocol (Claude ids use their family's limit)
    max_output: int | None = None
    anthropic_betas: tuple[str, ...] = ()
    # {"role": "system"} entries inside ``messages`` reach the model as they are, for the
    # models whose family takes them (``ModelFamily.mid_system``); elsewhere they become a
    # <system-reminder> in the user turn at their place. Off unless the endpoint is
    # Anthropic's own API (or plays it).
    mid_conversation_system: bool = False
    # Chat Completions
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    stream_usage: bool = True  # accepts stream_options.include_usage
    reasoning_echo: ReasoningEcho = "none"
    reasoning_request: ReasoningRequest = "none"
    developer_role: bool = False  # accepts role "developer" (else it becomes system)
    # capabilities
    vision: bool = True
    vision_in_tool_results: bool = False
    tool_choice_values: frozenset[str] = frozenset({"auto", "none", "required", "function"})
    parallel_tool_calls: bool = True
    # the endpoint answers 400 to duplicate tool names: a fact (tests, docs); the encoders
    # drop duplicates for every target, since an unknown endpoint may be one of these
    unique_tool_names: bool = False
    tool_id_format: ToolIdFormat = "any"
    stream_only: bool = False  # complete() must stream and accumulate
    # the endpoint takes its protocol exactly as the first party's clients send it, so
    # the gateway may forward a same-protocol client's bytes untouched (the lane)
    raw_passthrough: bool = False
    # the endpoint answers POST <messages path>/count_tokens (Anthropic's token counter),
    # so the gateway's count_tokens asks it instead of estimating
    counts_tokens: bool = False
    local: bool = False  # a local server: no stale-stream timeout, key optional
    # the modelwire emulator: with no base URL the Client points it at the process's own
    # in-process emulator, which opens to any key (the one hook the Client core needs)
    emulated: bool = False
    # Responses
    responses_store: bool = False
    # model ids (a regex) that reject ``stop`` (OpenAI's reasoning models answer 400
    # "Unsupported parameter: 'stop'"): the Client ends their text at the sequences itself
    no_stop_models: str = ""
    # Embeddings: POST <base_url>/embeddings in OpenAI's shape (None: the endpoint has none)
    embeddings: EmbeddingSpec | None = None
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    # ------------------------------------------------------------------ hooks
    def takes_stop(self, model: str) -> bool:
        """Whether ``model`` here accepts stop sequences in the request."""
        return not self.no_stop_models or _pattern(self.no_stop_models).search(model) is None

    def accepts_issuer(self, issuer: str) -> bool:
        """Whether a reasoning block issued by ``issuer`` can go back to this endpoint."""
        return bool(issuer) and (issuer == self.issuer or issuer in self.accepts_issuers)

    def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Return a copy of a tool's parameters schema this provider accepts."""
        return schema

    def patch_body(self, body: dict[str, Any], target: Target) -> dict[str, Any]:
        """Last change to an encoded body before ``extra`` is merged. Return the body.
        With a cache on the target, earlier turns in an Anthropic body's ``messages``
        and the whole ``tools`` array of every protocol's body are ``orjson.Fragment``
        objects (their JSON): pass them on as they are."""
        return body

    def default_base_url(self, environ: Mapping[str, str]) -> str:
        """The base URL when the caller gives none. ``environ`` is passed in (profiles do
        no I/O); Azure builds it from ``AZURE_OPENAI_ENDPOINT``. Empty: must be given."""
        return self.base_url

    def url(self, path: str, base_url: str | None = None) -> str:
        base = (base_url or self.base_url).rstrip("/")
        return base + path


@functools.lru_cache(maxsize=64)
def _pattern(regex: str) -> re.Pattern[str]:
    return re.compile(regex)
