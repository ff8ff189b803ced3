"""The result of one turn: :class:`Completion`, and :class:`Attempt` records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from .providers.prices import Price
    from .types import AssistantMessage, FinishReason, ToolCall, Usage

__all__ = ["PRIMARY_COOLING", "Attempt", "AttemptOutcome", "Completion", "Timing"]

AttemptOutcome: TypeAlias = Literal[
    "ok", "retried", "rotated", "refreshed", "fell_back", "failed", "interrupted", "skipped"
]
# the error text of a "skipped" attempt: a recent call fell back, so this one started there
PRIMARY_COOLING = "primary cooling after fallback"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try at serving a turn: which provider and model, and how it ended.

    ``skipped`` (error: ``primary cooling after fallback``): not tried at all, because
    a recent call fell back past this model (see ``fallback_stick_s``)."""

    provider: str
    model: str
    outcome: AttemptOutcome
    error: str | None = None  # the error's class and message, never a secret
    credential: str | None = None  # the credential's label, never its secret


@dataclass(frozen=True, slots=True)
class Timing:
    """Where an :class:`~modelwire.AsyncClient` call's time went, in seconds: ``work``, the
    Client's own (preparing, encoding and decoding, its books); ``waited``, on upstreams
    and backoff waits. A relay adds ``work`` to the time it spent itself."""

    work: float
    waited: float


@dataclass(frozen=True, slots=True)
class Completion:
    """One assistant turn in the Chat Completions shape.

    ``message`` is the assistant message dict (``content``, ``tool_calls``,
    ``reasoning_content``, ``reasoning_details``...). ``native_finish_reason``
    keeps the provider's own reason (``pause_turn`` means: send the turn back
    to continue). ``interrupted`` is true when the stream was cut short, by the caller or
    by the upstream (a :class:`~modelwire.StreamInterruptedError`'s ``partial``);
    ``finish_reason`` is then ``None`` unless the turn had finished before the cut, and
    ``tool_calls`` holds only the calls the upstream finished.
    ``stop_sequence``: which of the request's stop sequences ended the text, where
    known (an Anthropic upstream says it, and modelwire knows it where it applied
    them itself; a Chat Completions upstream's ``stop`` just says "stop").
    ``cost``: USD, from ``usage`` and ``price`` (None when the price is unknown).
    ``timing``: where an :class:`~modelwire.AsyncClient` call's time went (:class:`Timing`).
    """

    message: AssistantMessage
    finish_reason: FinishReason | None  # None: the turn never finished (interrupted)
    usage: Usage
    model: str
    provider: str = ""
    interrupted: bool = False
    attempts: tuple[Attempt, ...] = ()
    id: str = ""
    native_finish_reason: str | None = None
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    stop_sequence: str | None = None
    # the serving model's published price (providers/prices.py, or the config's), if known
    price: Price | None = field(default=None, repr=False, compare=False)
    # AsyncClient.complete's time facts (None from the sync Client and for partials)
    timing: Timing | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> float | None:
        """What this answer cost in USD, from ``usage`` and the serving model's price;
        None when the price is unknown (see :mod:`modelwire.providers.prices`)."""
        return None if self.price is None else self.price.cost(self.usage)

    @property
    def text(self) -> str:
        """The assistant's text content ("" when there is none)."""
        content = self.message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content if p.get("type") == "text")
        return ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return list(self.message.get("tool_calls") or [])
