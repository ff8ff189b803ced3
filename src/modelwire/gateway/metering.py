"""The usage of an answer the lane relayed as bytes (it never decodes them): read from
the body, or tapped from the stream's events that carry usage, in our usage's terms
(OpenAI semantics: ``prompt_tokens`` includes cache reads and writes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..codecs import anthropic_messages, chat_completions, responses
from ..types import ApiMode, Usage

if TYPE_CHECKING:
    from ..client import Upstream
    from ..providers.prices import Price

__all__ = ["Counted", "Relayed", "StreamUsage", "body_usage", "usage_of"]

_MAX_PENDING = 1 << 20  # an event longer than this carries text, not usage: not kept


def _counts(usage: Usage) -> dict[str, int]:
    """The codec's usage without the provider's own object: the books keep counts only."""
    counts: dict[str, Any] = usage  # type: ignore[assignment]  (a new dict: the codec made it for this call)
    del counts["raw"]
    return counts


# each protocol's own reader, as its codec decodes a usage object (every provider's
# spellings of cache reads, writes and reasoning; odd values count as 0)
_READERS: dict[str, Callable[[dict[str, Any]], Usage]] = {
    "anthropic_messages": anthropic_messages.usage_from,
    "responses": responses.usage_in,
    "chat_completions": chat_completions.usage_from_wire,
}


def usage_of(door: ApiMode, raw: Any) -> dict[str, int] | None:
    """Our usage from a door's own usage object (None: it has none)."""
    return _counts(_READERS[door](raw)) if type(raw) is dict else None


class Relayed:
    """A relayed answer as the metrics, the spend record and the status page read a
    Completion: its usage (None: the bytes said none), and from the upstream that served
    it its price and so the cost."""

    __slots__ = ("cost", "price", "upstream", "usage")
    attempts: tuple[Any, ...] = ()  # the lane makes one
    price: Price | None
    cost: float | None

    def __init__(self, usage: dict[str, int] | None, upstream: Upstream) -> None:
        self.usage, self.upstream = usage, upstream
        price = self.price = upstream.price
        self.cost = None if usage is None or price is None else price.cost(usage)

    @property
    def provider(self) -> str:
        return self.upstream.provider

    @property
    def model(self) -> str:
        return self.upstream.model_id


class Counted:
    """An answer known by its token counts alone (embeddings: no price in the table)."""

    __slots__ = ("usage",)
    attempts: tuple[Any, ...] = ()
    price = cost = None

    def __init__(self, usage: dict[str, int]) -> None:
        self.usage = usage


def body_usage(door: ApiMode, body: bytes) -> dict[str, int] | None:
    """The usage of a JSON answer. Every protocol puts ``usage`` after the content, so
    the body is parsed from its last ``"usage"`` key on, as ``{"usage": ..., <the rest>``:
    that parses only when the key is a top-level one (a nested one leaves brackets
    unmatched); else the whole body."""
    at = body.rfind(b'"usage"')
    if at < 0:
        return None
    try:
        data = orjson.loads(b"{" + body[at:])
    except orjson.JSONDecodeError:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
    return usage_of(door, data.get("usage")) if type(data) is dict else None


class StreamUsage:
    """Fed the relayed chunks; ``usage`` is the answer's once its usage events passed.
    Anthropic sends input counts in ``message_start`` and the running output count in
    ``message_delta``; Chat Completions one final chunk with ``usage`` (when the client
    asked for it: ``stream_options.include_usage``); Responses ``response.completed``."""

    __slots__ = ("_anthropic", "_door", "_pending", "usage")

    def __init__(self, door: ApiMode) -> None:
        self._door: ApiMode = door
        self._pending = b""
        self._anthropic: dict[str, Any] = {}
        self.usage: dict[str, int] | None = None

    def feed(self, chunk: bytes) -> None:
        if self._pending:
            data = self._pending + chunk
        elif b'"usage"' not in chunk and chunk.endswith(b"\n\n"):
            return  # whole events without usage: most chunks
        else:
            data = chunk
        cut = data.rfind(b"\n\n")
        if cut < 0:
            self._pending = data if len(data) <= _MAX_PENDING else b""
            return
        self._pending = data[cut + 2:] if len(data) - cut <= _MAX_PENDING else b""
        # each line holding "usage" (found in C, not line by line: a read may hold dozens of events)
        at = data.find(b'"usage"', 0, cut)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)  # at most cut: a line ends there
            # Chat Completions with include_usage: "usage":null in every chunk but the last
            if data.startswith(b"data:", start) and not data.startswith(b'"usage":null', at):
                self._event(data[start + 5:end])
            at = data.find(b'"usage"', end, cut)

    def _event(self, payload: bytes) -> None:
        try:
            event = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return
        if type(event) is not dict:
            return
        door = self._door
        if door == "chat_completions":
            raw = event.get("usage")
            if type(raw) is dict:
                self.usage = usage_of("chat_completions", raw)
        elif door == "anthropic_messages":
            raw = event.get("usage")
            if event.get("type") == "message_start" and type(event.get("message")) is dict:
                raw = event["message"].get("usage")
            if type(raw) is dict:
                self._anthropic.update({k: v for k, v in raw.items() if v is not None})
                self.usage = usage_of("anthropic_messages", self._anthropic)
        else:
            response = event.get("response")
            raw = response.get("usage") if type(response) is dict else None
            if type(raw) is dict:
                self.usage = usage_of("responses", raw)
