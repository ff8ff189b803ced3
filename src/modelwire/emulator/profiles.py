"""Which provider's rules apply to a request: one small table of flags.

A request picks its profile by path prefix (``/p/<profile>/v1/...``) or gets the
server default. ``lenient`` is the union of what real APIs accept: the rules every
implementation of a protocol shares (tool pairing, string arguments, Anthropic's
structural rules and signatures), none of the single-provider extras.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["PROFILES", "EmuProfile", "ProfileName", "get_profile"]

ProfileName: TypeAlias = Literal[
    "lenient", "anthropic", "openai", "deepseek", "kimi", "mimo", "mistral", "groq", "cerebras"
]

# How a strict provider rejects reasoning_content it does not know (Chat Completions):
#   "mistral"  422 with a pydantic-style detail list (extra_forbidden)
#   "groq"     400 "property 'reasoning_content' is unsupported"
#   "cerebras" 400 wrong_api_format
RejectStyle: TypeAlias = Literal["", "mistral", "groq", "cerebras"]


@dataclass(frozen=True, slots=True)
class EmuProfile:
    name: str
    # Chat Completions
    unique_tool_names: bool = False  # DeepSeek, Kimi, MiMo reject duplicate function names
    reasoning_required: bool = False  # DeepSeek-style: tool-call turns must echo reasoning_content
    emits_reasoning_content: bool = False  # reasoning as `reasoning_content` in messages/deltas
    reject_reasoning_input: RejectStyle = ""  # strict providers: reasoning_content on input fails
    # OpenAI's reasoning models (a regex over model ids): 400 for stop ("Unsupported
    # parameter") and for a temperature / top_p other than 1 ("Unsupported value"). Written
    # out, not imported from the provider catalog: the emulator plays OpenAI, the catalog is
    # what modelwire believes of it, and a test should be able to tell them apart
    reasoning_models: str = ""
    # Anthropic Messages
    verify_signatures: bool = True  # DeepSeek's/Kimi's Anthropic endpoints take unsigned thinking
    require_version_header: bool = False  # api.anthropic.com answers 400 without anthropic-version


PROFILES: dict[str, EmuProfile] = {
    p.name: p
    for p in (
        EmuProfile("lenient", emits_reasoning_content=True),
        EmuProfile("anthropic", require_version_header=True),
        EmuProfile("openai", reasoning_models=r"(?:^|/)(?:o\d|gpt-(?:5|[6-9]|\d\d))"),
        EmuProfile(
            "deepseek",
            unique_tool_names=True,
            reasoning_required=True,
            emits_reasoning_content=True,
            verify_signatures=False,
        ),
        EmuProfile(
            "kimi",
            unique_tool_names=True,
            reasoning_required=True,
            emits_reasoning_content=True,
            verify_signatures=False,
        ),
        EmuProfile(
            "mimo", unique_tool_names=True, reasoning_required=True, emits_reasoning_content=True
        ),
        EmuProfile("mistral", reject_reasoning_input="mistral"),
        EmuProfile("groq", reject_reasoning_input="groq"),
        EmuProfile("cerebras", reject_reasoning_input="cerebras"),
    )
}


def get_profile(name: str) -> EmuProfile | None:
    return PROFILES.get(name)
