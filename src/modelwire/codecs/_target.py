"""What a codec encodes for (:class:`Target`) and what it returns (:class:`EncodedRequest`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._slotinit import slot_init
from ..errors import UnsupportedContentError
from ..providers.profile import ProviderProfile

if TYPE_CHECKING:
    from .cache import EncodeCache

__all__ = ["EncodedRequest", "Target", "allowed_only", "auth_headers", "native_tool", "protocol_name",
           "unique_tools"]


@slot_init  # built for every request (the gateway's hot path)
@dataclass(frozen=True, slots=True)
class Target:
    """One upstream: the provider profile, the model id sent upstream, and a credential.

    ``api_key`` is the secret to send (``None``: no auth header). ``base_url``
    overrides the profile's. ``headers`` are extra headers sent as they are. ``cache``:
    the caller's :class:`~modelwire.codecs.cache.EncodeCache`, where an encoder keeps
    what repeats across turns (converted tool schemas); the output is the same without.
    """

    profile: ProviderProfile
    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    cache: EncodeCache | None = field(default=None, repr=False, compare=False)

    def auth_headers(self) -> dict[str, str]:
        return auth_headers(self.profile, self.api_key)


def auth_headers(profile: ProviderProfile, api_key: str | None) -> dict[str, str]:
    """The header that carries ``api_key`` in ``profile``'s style (none without a key)."""
    if not api_key:
        return {}
    style = profile.auth_style
    if style == "bearer":
        return {"authorization": f"Bearer {api_key}"}
    if style == "x-api-key":
        return {"x-api-key": api_key}
    if style == "api-key":
        return {"api-key": api_key}
    return {}


@slot_init
@dataclass(frozen=True, slots=True)
class EncodedRequest:
    """An HTTP request, ready for a transport: ``path`` is relative to the base URL."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def __repr__(self) -> str:  # never show auth headers
        shown = {k: ("<redacted>" if k in _SECRET_HEADERS else v) for k, v in self.headers.items()}
        return f"EncodedRequest({self.method} {self.path}, headers={shown}, {len(self.body)} bytes)"


_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie"})


_PROTOCOL_NAMES = {"chat_completions": "Chat Completions", "anthropic_messages": "Anthropic Messages",
                   "responses": "the Responses API"}


def protocol_name(api: str) -> str:
    """``chat_completions`` -> ``Chat Completions``, for messages a person reads."""
    return _PROTOCOL_NAMES.get(api, api)


# marks a tool a front door's caller put in the upstream's own terms (the gateway's
# ``unsupported_tools: map``): it goes to that protocol as it is, the mark taken off
FOR_PROTOCOL = "x-modelwire-for"
# on a function spec the Responses door flattened out of a namespace tool: that namespace
# ({"name", "description", "member"}), so a Responses upstream gets the group back as it
# came; the encoders of other protocols leave it out
NAMESPACE_KEY = "x-modelwire-namespace"


def native_tool(spec: dict[str, Any], index: int, request: Any, protocol: str) -> dict[str, Any]:
    """A tool that is not a function (a server or built-in tool: Anthropic's
    ``web_search_20250305``, Responses' ``web_search`` or ``custom``...) goes out as it is to
    the protocol it was written for; one a front door of another protocol received is
    refused here, naming it, instead of reaching an upstream that would answer a puzzling
    400 ("missing tools[0].function") for it. Without a source (a library caller's own
    spec) it goes out as it is."""
    if spec.get(FOR_PROTOCOL) == protocol:  # already in this protocol's own terms
        return {k: v for k, v in spec.items() if k != FOR_PROTOCOL}
    metadata = request.get("metadata") if isinstance(request, dict) else None
    source = metadata.get("source_api") if isinstance(metadata, dict) else None
    if source is not None and source != protocol:
        name = spec.get("name")
        src = protocol_name(source)
        raise UnsupportedContentError(
            f"tools[{index}]: {spec.get('type')!r}{f' ({name})' if isinstance(name, str) else ''} is a "
            f"tool type of {src}, not a function: {protocol_name(protocol)} has no such tool "
            f"(serve this model from an upstream that speaks {src}, or leave the tool out)")
    return dict(spec)


def allowed_only(tools: Any, choice: Any) -> tuple[Any, Any]:
    """OpenAI's ``tool_choice: {"type": "allowed_tools", ...}`` for an endpoint without it:
    only the allowed tools are sent, and the mode (``auto`` / ``required``) becomes the
    choice. Anything else comes back as it is."""
    if not (isinstance(choice, dict) and choice.get("type") == "allowed_tools"):
        return tools, choice
    inner = choice.get("allowed_tools")
    inner = inner if isinstance(inner, dict) else choice  # Responses' flat shape too
    names = set()
    for ref in inner.get("tools") or ():
        if isinstance(ref, dict):
            fn = ref.get("function")
            name = fn.get("name") if isinstance(fn, dict) else ref.get("name")
            if isinstance(name, str):
                names.add(name)
    kept = [t for t in tools or () if isinstance(t, dict) and _tool_name(t) in names]
    mode = inner.get("mode")
    return kept, ("required" if mode == "required" else "auto") if kept else "none"


def unique_tools(tools: list[Any], logger: Any) -> list[Any]:
    """The tools with duplicate names removed, the first definition kept, a warning
    naming each duplicate. For every target, not only those known to mind: Anthropic,
    DeepSeek, Kimi and MiMo answer 400 "Tool names must be unique" (forgecode #892,
    eino #632), and the same tools sent through custom/... reached such an endpoint."""
    seen: set[str] = set()
    out: list[Any] = []
    for i, tool in enumerate(tools):
        name = _tool_name(tool) if isinstance(tool, dict) else None
        if isinstance(name, str) and name:
            if name in seen:
                logger.warning("tools[%d]: duplicate tool name %r dropped (first definition wins)", i, name)
                continue
            seen.add(name)
        out.append(tool)
    return out


def _tool_name(tool: dict[str, Any]) -> Any:
    fn = tool.get("function")
    return fn.get("name") if isinstance(fn, dict) else tool.get("name")
