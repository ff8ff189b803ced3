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

from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

if TYPE_CHECKING:
    from .errors import ModelwireError
    from .types import FinishReason, Usage

__all__ = [
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

_T = TypeVar("_T")


def _slot_init(cls: type[_T]) -> type[_T]:
    """Give a frozen, slotted dataclass a cheaper ``__init__`` with the same signature.

    The generated one stores each field with ``object.__setattr__`` (a frozen class
    refuses plain assignment): about 300 ns for a one-field event, 600 ns for
    ``ReasoningDelta``, and a decoder builds one event per streamed token. Storing
    through the slot descriptors is the same store at about two thirds of the cost.
    Everything else (eq, hash, repr, ``replace``, ``FrozenInstanceError``) stays the
    dataclass's own; a test checks the signatures did not change.
    """
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    env: dict[str, Any] = {f"_set_{n}": getattr(cls, n).__set__ for n in names}
    params = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default_factory is not MISSING or not f.init or f.kw_only:
            raise TypeError(f"{cls.__name__}.{f.name}: only plain fields are supported")
        if f.default is MISSING:
            params.append(f.name)
        else:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"\n    _set_{n}(self, {n})" for n in names)
    exec(f"def __init__(self, {', '.join(params)}):{body}\n", env)  # noqa: S102 - our own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)  # type: ignore[misc]
    cls.__init__ = init  # type: ignore[misc]
    return cls


@_slot_init
@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@_slot_init
@dataclass(frozen=True, slots=True)
class RefusalDelta:
    text: str


@_slot_init
@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning: readable ``text``, a ``signature``, or ``redacted`` data."""

    text: str = ""
    signature: str | None = None
    redacted: str | None = None


@_slot_init
@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """A finished provider-native reasoning block, byte-exact, and its issuer."""

    issuer: str
    block: dict[str, Any]


@_slot_init
@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@_slot_init
@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    arguments: str  # a fragment of the JSON arguments string


@_slot_init
@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    index: int


@_slot_init
@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Usage so far. Cumulative: the latest one wins, never sum them."""

    usage: Usage


@_slot_init
@dataclass(frozen=True, slots=True)
class Finish:
    """The turn ended. ``native`` is the provider's own reason (``end_turn``,
    ``pause_turn``, ``incomplete: max_output_tokens``...)."""

    reason: FinishReason
    native: str | None = None


@_slot_init
@dataclass(frozen=True, slots=True)
class Passthrough:
    """A provider block with no Chat Completions meaning, kept verbatim."""

    issuer: str
    block: dict[str, Any]


@_slot_init
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
    | StreamError
)
