"""Published prices of the catalog's models, as data: USD per million tokens.

Each row cites its provider's own price page and the day it was read there
(``verified``), or says that it was not: a row whose numbers come only from third-party
copies of a provider's page (no copy of the page itself was at hand) has
``verified=False``. Its cost is still computed, because a budget counts a request of an
unpriced model as free, which would be worse than a figure that may be stale; the price
table in the docs marks it, and a row under ``prices:`` replaces it. A model with no row
costs ``None`` (unknown), never a guess. Override or add rows with ``prices:`` in
modelwire.yaml or ``Client(prices=...)``: keys are ``provider/model-id``.

How a usage is priced (our usage has OpenAI semantics: ``prompt_tokens`` includes
cache reads and writes, ``completion_tokens`` includes reasoning): uncached input
at ``input``; cache reads at ``cache_read`` and cache writes at ``cache_write``
(each ``input`` when the provider charges no separate rate); answer text at
``output``, reasoning at ``reasoning`` (``output`` when billed as output, as
Anthropic, OpenAI and DeepSeek do). Not modelled: batch discounts and long-context
tiers (Anthropic's Sonnet 4 above 200K input tokens costs more).

Pure data and arithmetic: no I/O, nothing imported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PRICES", "Price", "price_for", "price_from_dict"]

_PER = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of each kind; ``None``: billed at the input (cache) or
    output (reasoning) rate. ``source``: the price page; ``checked``: when it was read;
    ``verified``: whether the numbers were read on that page itself (a row from config
    is the user's own: verified)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None
    source: str = ""
    checked: str = ""
    verified: bool = True

    def cost(self, usage: Mapping[str, Any]) -> float:
        """The USD cost of one answer's ``usage`` (a :class:`~modelwire.types.Usage`)."""
        read = int(usage.get("cache_read_tokens") or 0)
        write = int(usage.get("cache_write_tokens") or 0)
        reasoning = int(usage.get("reasoning_tokens") or 0)
        fresh = max(int(usage.get("prompt_tokens") or 0) - read - write, 0)
        text = max(int(usage.get("completion_tokens") or 0) - reasoning, 0)
        total = (
            fresh * self.input
            + read * _or(self.cache_read, self.input)
            + write * _or(self.cache_write, self.input)
            + text * self.output
            + reasoning * _or(self.reasoning, self.output)
        )
        return total / _PER


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


# The pages read, each a stored copy read on _READ (the copies carry no capture date).
_ANTHROPIC = "https://platform.claude.com/docs/en/docs/about-claude/pricing"
_DEEPSEEK = "https://api-docs.deepseek.com/quick_start/pricing-details-usd"
_XAI = "https://docs.x.ai/developers/pricing"
_READ = "2026-12-02"
# Pages of which no copy was at hand: their rows match third-party copies only
# (read 2026-12-01), so they are marked unverified.
_OPENAI = "https://developers.openai.com/api/docs/pricing"
_GEMINI = "https://ai.google.dev/gemini-api/docs/pricing"
_MISTRAL = "https://mistral.ai/pricing#api-pricing"
_GROQ = "https://groq.com/pricing"
_THIRD_PARTY = "2026-12-01"


def _anthropic(input: float, output: float, write_5m: float, read: float) -> Price:
    # cache_write: the 5-minute cache's rate (the default; a 1-hour write costs 2x input)
    return Price(input, output, cache_read=read, cache_write=write_5m, source=_ANTHROPIC,
                 checked=_READ)


def _deepseek(miss: float, hit: float, output: float) -> Price:
    # DeepSeek bills cache misses at the input rate and charges nothing extra to write
    return Price(miss, output, cache_read=hit, source=_DEEPSEEK, checked=_READ)


def _openai(input: float, cached: float, output: float) -> Price:
    # OpenAI bills cached input at its own rate and nothing extra to write the cache;
    # reasoning tokens are output tokens
    return Price(input, output, cache_read=cached, source=_OPENAI, checked=_THIRD_PARTY,
                 verified=False)


def _xai(input: float, cached: float, output: float, *, verified: bool = True) -> Price:
    # prompts of 200K tokens and more cost twice as much (not modelled)
    return Price(input, output, cache_read=cached, source=_XAI,
                 checked=_READ if verified else _THIRD_PARTY, verified=verified)


def _unverified(source: str, input: float, output: float, cached: float | None = None) -> Price:
    # cached None: the page lists no cache rate we model; cache reads then count at the
    # input rate (an upper bound, so a budget is never under-charged)
    return Price(input, output, cache_read=cached, source=source, checked=_THIRD_PARTY,
                 verified=False)


# provider/model-id -> price; model ids without the date suffix (see price_for)
PRICES: dict[str, Price] = {
    "anthropic/claude-opus-4-1": _anthropic(15.0, 75.0, 18.75, 1.50),
    "anthropic/claude-opus-4": _anthropic(15.0, 75.0, 18.75, 1.50),
    "anthropic/claude-opus-4-0": _anthropic(15.0, 75.0, 18.75, 1.50),
    "anthropic/claude-sonnet-4": _anthropic(3.0, 15.0, 3.75, 0.30),
    "anthropic/claude-sonnet-4-0": _anthropic(3.0, 15.0, 3.75, 0.30),
    "anthropic/claude-3-7-sonnet": _anthropic(3.0, 15.0, 3.75, 0.30),
    "anthropic/claude-3-5-haiku": _anthropic(0.80, 4.0, 1.0, 0.08),
    "anthropic/claude-3-haiku": _anthropic(0.25, 1.25, 0.30, 0.03),
    "anthropic/claude-opus-4-5": _anthropic(5.0, 25.0, 6.25, 0.50),
    "anthropic/claude-sonnet-4-5": _anthropic(3.0, 15.0, 3.75, 0.30),
    "anthropic/claude-haiku-4-5": _anthropic(1.0, 5.0, 1.25, 0.10),
    "deepseek/deepseek-chat": _deepseek(0.27, 0.07, 1.10),
    "deepseek/deepseek-reasoner": _deepseek(0.55, 0.14, 2.19),
    "openai/gpt-5": _openai(1.25, 0.125, 10.0),
    "openai/gpt-5-mini": _openai(0.25, 0.025, 2.0),
    "openai/gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "openai/gpt-4.1": _openai(2.0, 0.50, 8.0),
    "openai/gpt-4.1-mini": _openai(0.40, 0.10, 1.60),
    "openai/gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "openai/gpt-4o": _openai(2.50, 1.25, 10.0),
    "openai/gpt-4o-mini": _openai(0.15, 0.075, 0.60),
    "openai/o3": _openai(2.0, 0.50, 8.0),
    "openai/o4-mini": _openai(1.10, 0.275, 4.40),
    # Gemini: prompts up to 200K tokens (longer ones cost more: not modelled); thinking
    # tokens are billed as output
    "gemini/gemini-2.5-pro": _unverified(_GEMINI, 1.25, 10.0),
    "gemini/gemini-2.5-flash": _unverified(_GEMINI, 0.30, 2.50),
    "gemini/gemini-2.5-flash-lite": _unverified(_GEMINI, 0.10, 0.40),
    # xAI's page lists these two at 1.25 / 0.20 / 2.50 (the rows said 2.00 / 0.20 / 6.00)
    "xai/grok-4.20-0309-reasoning": _xai(1.25, 0.20, 2.50),
    "xai/grok-4.20-0309-non-reasoning": _xai(1.25, 0.20, 2.50),
    # not on the copy of xAI's page that was read (retired there?); third-party copies only
    "xai/grok-4-1-fast-reasoning": _xai(0.20, 0.05, 0.50, verified=False),
    "xai/grok-4-1-fast-non-reasoning": _xai(0.20, 0.05, 0.50, verified=False),
    "mistral/mistral-large-latest": _unverified(_MISTRAL, 2.0, 6.0),
    "mistral/mistral-medium-latest": _unverified(_MISTRAL, 0.40, 2.0),
    "mistral/mistral-small-latest": _unverified(_MISTRAL, 0.10, 0.30),
    "mistral/codestral-latest": _unverified(_MISTRAL, 0.30, 0.90),
    "groq/llama-3.3-70b-versatile": _unverified(_GROQ, 0.59, 0.79),
    "groq/llama-3.1-8b-instant": _unverified(_GROQ, 0.05, 0.08),
}

# "-20250514" (a snapshot date) or "-latest": the same price as the bare model id
_SUFFIX = re.compile(r"-(\d{8}|latest)$")


def price_for(provider: str, model: str,
              overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model`` at ``provider`` (``overrides`` first), or None (unknown).
    A model id's date or ``-latest`` suffix is ignored when the exact id has no row."""
    for table in (overrides or {}, PRICES):
        for name in (model, _SUFFIX.sub("", model)):
            found = table.get(f"{provider}/{name}")
            if found is not None:
                return found
    return None


def price_from_dict(key: str, spec: Mapping[str, Any]) -> Price:
    """A row from config (``{input: 3, output: 15, cache_read: 0.3}``); ValueError names
    what is wrong."""
    allowed = {"input", "output", "cache_read", "cache_write", "reasoning", "source", "checked"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ValueError(f"prices.{key}: unknown field {unknown[0]!r} "
                         f"(allowed: {', '.join(sorted(allowed))})")
    missing = [name for name in ("input", "output") if name not in spec]
    if missing:
        raise ValueError(f"prices.{key}: {missing[0]} (USD per million tokens) is required")
    numbers: dict[str, Any] = {}
    for name in ("input", "output", "cache_read", "cache_write", "reasoning"):
        value = spec.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"prices.{key}.{name}: a number of USD per million tokens, "
                             f"got {value!r}")
        numbers[name] = float(value)
    return Price(**numbers, source=str(spec.get("source", "")),
                 checked=str(spec.get("checked", "")))
