"""Tool pieces every codec shares: marks a front door puts on tools, native tools,
``allowed_tools`` for endpoints without it, duplicate names."""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedContentError
from ..types import JSONValue
from ..wire import protocol_name

__all__ = ["FOR_PROTOCOL", "NAMESPACE_KEY", "allowed_only", "native_tool", "unique_tools"]


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


def allowed_only(tools: JSONValue, choice: JSONValue) -> tuple[Any, Any]:
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
