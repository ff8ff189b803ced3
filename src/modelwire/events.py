"""Normalized stream events: the one small closed set every codec speaks.

Decoders turn a provider's SSE into these; encoders turn them back into a
provider's SSE; :class:`modelwire.accumulate.Accumulator` folds them into a
:class:`modelwire.Completion`.

Tool calls are routed by ``index``: the call's ordinal in the assistant
message (0, 1, 2...), assigned by the decoder, never the provider's wire index.

Reasoning arrives as :class:`ReasoningDelta` pieces (text for people to read,
a signature, or redacted data). When a provider-native reasoning block is
complete, the decoder emits :class:`ReasoningBlock` with the block exactly as
the provider would want it back (Anthropic ``thinking`` with ``signature``,
Responses ``reasoning`` item with ``encrypted_content``, an OpenRouter
``reasoning_details`` item...). :class:`Passthrough` carries blocks with no
Chat Completions meaning (server tool use, citations) so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from .errors import ModelwireError
    from .types import FinishReason, Usage

__all__ = [
    "Annotation",
    "Finish",
    "Passthrough",
    "ReasoningBlock",
    "ReasoningDelta",
    "RefusalDelta",
    "StreamError",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "UsageEvent",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class RefusalDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning: readable ``text``, a ``signature``, or ``redacted`` data."""

    text: str = ""
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """A finished provider-native reasoning block, byte-exact, and its issuer."""

    issuer: str
    block: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    arguments: str  # a fragment of the JSON arguments string


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    index: int


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Usage so far. Cumulative: the latest one wins, never sum them."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class Finish:
    """The turn ended. ``native`` is the provider's own reason (``end_turn``,
    ``pause_turn``, ``incomplete: max_output_tokens``...); ``stop_sequence``, the stop
    sequence that ended the text, where that is known (Anthropic says it; modelwire
    knows it where it applied the sequences itself)."""

    reason: FinishReason
    native: str | None = None
    stop_sequence: str | None = None


@dataclass(frozen=True, slots=True)
class Annotation:
    """A note on the answer's text, in Chat Completions' shape: ``{"type": "url_citation",
    "url_citation": {"url", "title", "start_index", "end_index"}}`` (a web search's
    source; the indices count characters of the whole message text), or another type
    nested the same way (``file_citation``...)."""

    annotation: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Passthrough:
    """A provider block with no Chat Completions meaning, kept verbatim."""

    issuer: str
    block: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StreamError:
    """An error the provider reported inside a started stream."""

    error: ModelwireError


StreamEvent: TypeAlias = (
    TextDelta
    | RefusalDelta
    | ReasoningDelta
    | ReasoningBlock
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageEvent
    | Finish
    | Passthrough
    | Annotation
    | StreamError
)
