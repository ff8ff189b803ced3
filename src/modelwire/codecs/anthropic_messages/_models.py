"""Claude model families as data: output limits, thinking mode, sampling, prefill.

Model ids arrive in many spellings: ``claude-sonnet-4-5-20250929`` (dated),
``anthropic/claude-opus-4.6`` (OpenRouter style), ``us.anthropic.claude-3-5-sonnet-20240620-v1:0``
(Bedrock), ``claude-opus-4-6@20260205`` (Vertex), ``claude-3-5-haiku-latest``. They are
parsed into ``(tier, major, minor)`` and looked up in :data:`FAMILIES`. A Claude id
that is not in the table is treated as the newest family (new models get the current
rules, never the oldest ones); a non-Claude id (MiniMax, DeepSeek, Kimi behind an
Anthropic-compatible endpoint) gets :data:`NON_CLAUDE`.

Facts checked in November 2026 (platform.claude.com model pages, AWS Bedrock's
adaptive-thinking page, Vercel's model pages). Where sources disagree the value is
kept here with a comment, so one edit fixes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeAlias

__all__ = [
    "FAMILIES",
    "NEWEST",
    "NON_CLAUDE",
    "ModelFamily",
    "ThinkingMode",
    "family_for",
    "normalize_model_id",
]

# How a family thinks:
#   "none"           no extended thinking (the 3.x Haiku, Opus and 3.5 Sonnet models)
#   "budget"         {"type": "enabled", "budget_tokens": N} only (3.7 Sonnet .. 4.5 family)
#   "adaptive"       {"type": "adaptive"} + output_config.effort; budget still accepted but
#                    deprecated (Opus 4.6, Sonnet 4.6)
#   "adaptive_only"  only adaptive: budget thinking and "disabled" are a 400
#                    (Opus 4.7, Mythos, the 5.x families; AWS Bedrock adaptive-thinking page)
ThinkingMode: TypeAlias = Literal["none", "budget", "adaptive", "adaptive_only"]

_ALL_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
# Opus 4.6 answers 400 "does not support effort level 'xhigh'. Supported levels:
# high, low, max, medium" (recorded in the corpus), so xhigh becomes max there.
_EFFORTS_46 = frozenset({"low", "medium", "high", "max"})


@dataclass(frozen=True, slots=True)
class ModelFamily:
    name: str
    max_output: int
    thinking: ThinkingMode
    # temperature / top_p / top_k accepted (API 2023-06-01). Opus 4.7 and later reject
    # them even at defaults; API version 2026-10-21 rejects them for every model.
    sampling: bool = True
    # a conversation may end with an assistant turn (prefill). Claude 4.6 and later
    # answer 400 for it.
    prefill: bool = True
    efforts: frozenset[str] = _ALL_EFFORTS
    # speed: "fast" accepted (a premium tier, direct API only), when the caller asks
    fast_mode: bool = False
    known: bool = True  # False for the "newest family" stand-in used for unknown ids
    # takes {"role": "system"} messages inside ``messages`` (mid-conversation system
    # messages). Anthropic's page lists the models: Opus 4.8, Opus 5, Opus 5.5, Sonnet 5.5,
    # Haiku 5.5, Fable 5 / 5.1, Mythos 5 / 5.1, and says Sonnet 5 does not
    # (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages).
    mid_system: bool = False


# max_output per family, the default max_tokens (mandatory on this protocol). Sources:
# https://platform.claude.com/docs/en/models (checked 2026-12-01: Fable 5.1, Opus 5.5,
# Sonnet 5: 128K; Haiku 4.5: 64K); Effect-TS #7129 (checked 2026-12-01: Opus 4.6, 4.7,
# 4.8 and Sonnet 4.6 at 128,000, the 4.5 family at 64,000); fastgpt-plugin #242
# (checked 2026-12-01: Opus 4 / 4.1 32,000, Sonnet 4 64,000); the seed (8.2.3) for the
# 3.x models. fast_mode per https://platform.claude.com/docs/en/build-with-claude/fast-mode
# (checked 2026-12-01: Opus 5.5, Opus 5, Opus 4.8) and the seed (8.6: Opus 4.6).
FAMILIES: dict[tuple[str, int, int], ModelFamily] = {
    ("haiku", 3, 0): ModelFamily("claude-3-haiku", 4096, "none"),
    ("sonnet", 3, 0): ModelFamily("claude-3-sonnet", 4096, "none"),
    ("opus", 3, 0): ModelFamily("claude-3-opus", 4096, "none"),
    ("haiku", 3, 5): ModelFamily("claude-3-5-haiku", 8192, "none"),
    ("sonnet", 3, 5): ModelFamily("claude-3-5-sonnet", 8192, "none"),
    # 3.7 Sonnet: 64k (128k only with the output-128k beta, which we do not send)
    ("sonnet", 3, 7): ModelFamily("claude-3-7-sonnet", 64000, "budget"),
    ("sonnet", 4, 0): ModelFamily("claude-sonnet-4", 64000, "budget"),
    ("opus", 4, 0): ModelFamily("claude-opus-4", 32000, "budget"),
    ("opus", 4, 1): ModelFamily("claude-opus-4-1", 32000, "budget"),
    ("sonnet", 4, 5): ModelFamily("claude-sonnet-4-5", 64000, "budget"),
    # Haiku 4.5 does think (budget), unlike the 3.x Haikus
    ("haiku", 4, 5): ModelFamily("claude-haiku-4-5", 64000, "budget"),
    ("opus", 4, 5): ModelFamily("claude-opus-4-5", 64000, "budget"),
    ("opus", 4, 6): ModelFamily(
        "claude-opus-4-6", 128000, "adaptive", prefill=False, efforts=_EFFORTS_46, fast_mode=True
    ),
    # Sonnet 4.6: Vercel's page and Effect-TS (#7129) say 128k output; an older
    # Anthropic table said 64k. We keep 128k (a caller above the real limit gets a
    # clear 400, a too-low default silently truncates answers).
    ("sonnet", 4, 6): ModelFamily(
        "claude-sonnet-4-6", 128000, "adaptive", prefill=False, efforts=_EFFORTS_46
    ),
    ("opus", 4, 7): ModelFamily("claude-opus-4-7", 128000, "adaptive_only", False, False),
    ("opus", 4, 8): ModelFamily("claude-opus-4-8", 128000, "adaptive_only", False, False, fast_mode=True,
                                mid_system=True),  # the first with mid-conversation system
    ("opus", 5, 0): ModelFamily("claude-opus-5", 128000, "adaptive_only", False, False, fast_mode=True,
                                mid_system=True),
    ("sonnet", 5, 0): ModelFamily("claude-sonnet-5", 128000, "adaptive_only", False, False),
    ("opus", 5, 5): ModelFamily("claude-opus-5-5", 128000, "adaptive_only", False, False, fast_mode=True,
                                mid_system=True),
    ("sonnet", 5, 5): ModelFamily("claude-sonnet-5-5", 128000, "adaptive_only", False, False, mid_system=True),
    ("haiku", 5, 5): ModelFamily("claude-haiku-5-5", 128000, "adaptive_only", False, False, mid_system=True),
    ("fable", 5, 0): ModelFamily("claude-fable-5", 128000, "adaptive_only", False, False, mid_system=True),
    ("fable", 5, 1): ModelFamily("claude-fable-5-1", 128000, "adaptive_only", False, False, mid_system=True),
    ("fable", 5, 2): ModelFamily("claude-fable-5-2", 128000, "adaptive_only", False, False),
    ("mythos", 5, 0): ModelFamily("claude-mythos-5", 128000, "adaptive_only", False, False, mid_system=True),
    ("mythos", 5, 1): ModelFamily("claude-mythos-5-1", 128000, "adaptive_only", False, False, mid_system=True),
}

# Unknown Claude ids: the newest family's rules (adaptive only, no sampling, no prefill).
NEWEST = ModelFamily("claude-unknown", 128000, "adaptive_only", False, False, known=False)

# Not Claude (MiniMax-M2, deepseek-chat, kimi-k2 behind /anthropic endpoints): budget
# thinking is the form these endpoints document. Their output limit is the catalog row's
# (ProviderProfile.max_output, with its source); this modest value is only for an
# endpoint the catalog does not know (custom), and callers' values are never clamped.
NON_CLAUDE = ModelFamily("non-claude", 8192, "budget", True, True, known=False)

_PREFIX_RE = re.compile(r"^(?:[a-z0-9_-]+/)+")  # "anthropic/", "openrouter/anthropic/"
_BEDROCK_RE = re.compile(r"^(?:(?:global|us|eu|apac|ap|jp|au|ca|us-gov)\.)?anthropic\.")
_SUFFIX_RE = re.compile(r"(?:-v\d+(?::|%3a)\d+|@[0-9a-z-]+|-latest|\[1m\])$")
# claude-<tier>-<major>[-<minor>]   (4.x and later)
_NEW_RE = re.compile(r"^claude-([a-z]+)-(\d{1,2})(?:-(\d{1,2}))?(?!\d)")
# claude-<major>[-<minor>]-<tier>  (3.x)
_OLD_RE = re.compile(r"^claude-(\d)(?:-(\d))?-([a-z]+)")


def normalize_model_id(model: str) -> str:
    """``anthropic/claude-opus-4.6`` -> ``claude-opus-4-6``; Bedrock/Vertex decorations removed.

    Only used to look the family up: the id sent upstream is the caller's, untouched.
    """
    m = model.strip().lower()
    m = _BEDROCK_RE.sub("", m)
    m = _PREFIX_RE.sub("", m)
    m = _SUFFIX_RE.sub("", m)
    if m.startswith("claude"):
        m = m.replace(".", "-")  # claude-opus-4.6 -> claude-opus-4-6 (never for non-Claude ids)
    return m


@lru_cache(maxsize=512)  # asked twice per encode, of the few ids a process sends to
def family_for(model: str) -> ModelFamily:
    """The :class:`ModelFamily` for any spelling of a model id."""
    m = normalize_model_id(model)
    if not m.startswith("claude"):
        return NON_CLAUDE
    new = _NEW_RE.match(m)
    if new:
        key = (new.group(1), int(new.group(2)), int(new.group(3) or 0))
        return FAMILIES.get(key, NEWEST)
    old = _OLD_RE.match(m)
    if old:
        key = (old.group(3), int(old.group(1)), int(old.group(2) or 0))
        return FAMILIES.get(key, NEWEST)
    return NEWEST
