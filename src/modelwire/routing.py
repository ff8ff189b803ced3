"""Smart routing: simple turns go to a cheap model, everything else to the primary.

A user message is *simple* when all of these hold (the seed's rules; limits
from ``smart_routing`` in the config):

- at most ``max_simple_chars`` characters (160) and ``max_simple_words`` words (28)
- at most one newline, no backtick, no URL (``http(s)://`` or ``www.``)
- none of :data:`KEYWORDS` among its words (lowercased, punctuation stripped)

Turns carrying images go to the primary; turns carrying tool results are not
routed (they stay on the conversation's current model). Routing is *sticky*
per conversation: once a turn needed the primary, later turns stay there, so
prompt caches stay warm and the model does not flap. Every decision is logged
on the ``modelwire.routing`` logger with its reason.

    memory = RoutingMemory()
    route = choose_route("what's the capital of France?", config,
                         sticky_state=memory.state("conv-1"))
    route.kind, route.reason   # ("cheap", "simple: 5 words, no keywords")
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .errors import ConfigError
from .types import json_list, json_object

if TYPE_CHECKING:
    from .client.resolution import ResolvedModel
    from .config import Config

__all__ = ["KEYWORDS", "Route", "RouteKind", "RoutingMemory", "StickyState", "choose_route",
           "route_messages", "simple_turn_reason", "turn_facts"]

log = logging.getLogger("modelwire.routing")

RouteKind = Literal["cheap", "primary"]

# The seed's complexity keywords (35, "optimise" included: hermes-behaviours 0.1).
KEYWORDS = frozenset({
    "debug", "debugging", "implement", "implementation", "refactor", "patch", "traceback",
    "stacktrace", "exception", "error", "analyze", "analysis", "investigate", "architecture",
    "design", "compare", "benchmark", "optimize", "optimise", "review", "terminal", "shell",
    "tool", "tools", "pytest", "test", "tests", "plan", "planning", "delegate", "subagent",
    "cron", "docker", "kubernetes",
})
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_STRIP = ".,:;!?()[]{}\"'`"


@dataclass(frozen=True, slots=True)
class Route:
    """One routing decision.

    ``model_name`` is the config model name (or the model string) chosen;
    ``signature`` tells callers whether the upstream changed (compare tuples).
    """

    model_name: str
    kind: RouteKind
    reason: str
    provider: str
    model: str
    label: str | None
    signature: tuple[str, ...]

    @property
    def is_cheap(self) -> bool:
        return self.kind == "cheap"


class StickyState:
    """One conversation's routing memory: escalation only goes up."""

    __slots__ = ("_lock", "escalated_because", "last")

    def __init__(self) -> None:
        self.escalated_because: str | None = None
        self.last: Route | None = None
        self._lock = threading.Lock()

    @property
    def escalated(self) -> bool:
        return self.escalated_because is not None

    def record(self, route: Route, *, escalate: bool) -> None:
        with self._lock:
            self.last = route
            if escalate and self.escalated_because is None:
                self.escalated_because = route.reason


class RoutingMemory:
    """Sticky states keyed by conversation id (bounded: least recently used dropped)."""

    def __init__(self, max_conversations: int = 10_000) -> None:
        self._states: OrderedDict[str, StickyState] = OrderedDict()
        self._max = max_conversations
        self._lock = threading.Lock()

    def state(self, conversation_id: str) -> StickyState:
        with self._lock:
            state = self._states.get(conversation_id)
            if state is None:
                state = self._states[conversation_id] = StickyState()
                while len(self._states) > self._max:
                    self._states.popitem(last=False)
            else:
                self._states.move_to_end(conversation_id)
            return state

    def __len__(self) -> int:
        return len(self._states)


def simple_turn_reason(text: str, *, max_chars: int = 160, max_words: int = 28) -> tuple[bool, str]:
    """``(is_simple, reason)`` for one user message, by the seed's rules in order."""
    stripped = text.strip()
    if not stripped:
        return False, "empty message"
    if len(stripped) > max_chars:
        return False, f"too long: {len(stripped)} chars"
    words = stripped.split()
    if len(words) > max_words:
        return False, f"too long: {len(words)} words"
    newlines = stripped.count("\n")
    if newlines > 1:
        return False, f"multi-line: {newlines} newlines"
    if "`" in stripped:
        return False, "code: backticks"
    if _URL.search(stripped):
        return False, "url"
    for word in words:
        token = word.strip(_STRIP).lower()
        if token in KEYWORDS:
            return False, f"keyword: {token}"
    return True, f"simple: {len(words)} words, no keywords"


def choose_route(
    text: str,
    config: Config,
    *,
    has_tool_results: bool = False,
    has_images: bool = False,
    sticky_state: StickyState | None = None,
    primary: str | None = None,
) -> Route:
    """Choose the cheap or the primary model for a turn whose user message is ``text``.

    ``primary`` is the model the caller would use otherwise (a config name or
    provider/model string); it defaults to ``config.default_model``.
    """
    primary_name = primary or config.default_model
    if not primary_name:
        raise ConfigError(_where(config) + "default_model: smart routing needs a primary model "
                          "(set default_model or pass primary=)")
    settings = config.smart_routing
    kind, reason, escalate = _decide(text, config, has_tool_results, has_images, sticky_state)
    route = None
    if kind == "cheap":
        assert settings.cheap_model is not None
        try:
            route = _route(settings.cheap_model, "cheap", reason, config)
        except ConfigError as exc:  # a broken cheap entry must not stop the turn
            reason = f"cheap model unavailable: {exc}"
    if route is None:
        route = _route(primary_name, "primary", reason, config)
    if sticky_state is not None:
        sticky_state.record(route, escalate=escalate)
    log.info("route %s -> %s (%s)", route.kind, route.model_name, route.reason)
    return route


def turn_facts(messages: Sequence[Mapping[str, object]]) -> tuple[str, bool, bool]:
    """``(text, has_tool_results, has_images)`` for the turn a conversation is on.

    The text is the last user message's text parts; the turn carries tool
    results when the conversation ends with ``tool`` messages (a tool loop in
    progress); images are counted in that user message.
    """
    has_tool_results = bool(messages) and _role(messages[-1]) == "tool"
    for message in reversed(messages):
        if _role(message) != "user":
            continue
        content = message.get("content")  # a dict: _role gave "user"
        if isinstance(content, str):
            return content, has_tool_results, False
        texts: list[str] = []
        images = False
        for item in json_list(content):
            part = json_object(item) or {}
            kind = part.get("type")
            if kind == "text":
                texts.append(str(part.get("text", "")))
            elif kind in ("image_url", "image", "input_image"):
                images = True
        return "\n".join(texts), has_tool_results, images
    return "", has_tool_results, False


def route_messages(
    messages: Sequence[Mapping[str, object]], config: Config, *, sticky_state: StickyState | None = None,
    primary: str | None = None,
) -> Route:
    """:func:`choose_route` for a whole conversation (what an Agent or the gateway holds)."""
    text, tool_results, images = turn_facts(messages)
    return choose_route(text, config, has_tool_results=tool_results, has_images=images,
                        sticky_state=sticky_state, primary=primary)


def _role(message: object) -> object:
    obj = json_object(message)
    return obj.get("role") if obj is not None else None


def _decide(
    text: str, config: Config, has_tool_results: bool, has_images: bool,
    sticky: StickyState | None,
) -> tuple[RouteKind, str, bool]:
    """``(kind, reason, escalate)``: escalate makes the conversation stick to primary."""
    settings = config.smart_routing
    if not settings.enabled or not settings.cheap_model:
        return "primary", "smart routing disabled", False
    if has_tool_results:
        # a tool loop finishes on the model that started it
        last = sticky.last if sticky is not None else None
        if sticky is not None and last is not None and last.kind == "cheap" and not sticky.escalated:
            return "cheap", "tool results: no routing, stays on cheap", False
        return "primary", "tool results: no routing", False
    if sticky is not None and sticky.escalated:
        return "primary", f"sticky: earlier turn needed primary ({sticky.escalated_because})", False
    if has_images:
        return "primary", "images: no routing", True
    simple, reason = simple_turn_reason(
        text, max_chars=settings.max_simple_chars, max_words=settings.max_simple_words)
    return ("cheap", reason, False) if simple else ("primary", reason, True)


def _route(name: str, kind: RouteKind, reason: str, config: Config) -> Route:
    from .client.resolution import resolve

    resolved: ResolvedModel = resolve(name, config=config)
    label = f"smart route → {resolved.model_id} ({resolved.provider})" if kind == "cheap" else None
    return Route(
        model_name=name, kind=kind, reason=reason, provider=resolved.provider,
        model=resolved.model_id, label=label, signature=resolved.signature,
    )


def _where(config: Config) -> str:
    return f"{config.path}: " if config.path else ""
