"""Responses API requests: internal :class:`~modelwire.types.Request` -> ``/responses`` body.

Encoding rules and why:

* Leading ``system`` messages become ``instructions``; ``developer`` messages and
  later system messages stay in ``input`` with their role (the API accepts both
  roles as input messages).
* Assistant turns become items in the turn's own order (``block_order``), by default:
  reasoning items, pass-through
  items (hosted tool calls), the assistant text, then ``function_call`` items.
* ``store: false`` unless the profile says the endpoint stores responses. Then:
  ``include: ["reasoning.encrypted_content"]`` whenever thinking is on (without it,
  reasoning cannot be replayed statelessly), and replayed item ids are stripped
  (OpenAI answers 404 "Item with id 'rs_…' not found" for ids it did not store).
* A reasoning item must be followed by the item it belongs to (OpenAI: 400
  "Item 'rs_…' of type 'reasoning' was provided without its required following
  item"): a turn with reasoning but nothing else drops its reasoning.
* Reasoning goes back only to an equivalent issuer: encrypted_content is sealed
  to the key of whoever minted it (OpenAI: 400 ``invalid_encrypted_content``).
* Function tools are flat and carry ``strict: false`` unless the caller set it:
  the Responses API treats an omitted ``strict`` as "normalize into strict mode",
  which makes optional parameters required (langchain#35837, open-webui#27750);
  the internal model has Chat Completions semantics, where omitted means false.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ...blockorder import ordered_items
from ...errors import MessageError, UnsupportedContentError
from ...types import Message, Request
from ...wire import EncodedRequest, Target, auth_headers
from ..cache import Converted, EncodeCache
from ..tools import native_tool, unique_tools

# the other direction (what a front door receives) has its own module; both are "the request"
from ._decode_request import decode_request, no_logprobs
from ._namespaces import namespaced_calls, regroup, spec_table

__all__ = ["decode_request", "encode_input", "encode_request", "request_fields"]

log = logging.getLogger("modelwire.codecs.responses")

# internal effort -> Responses reasoning.effort; "max" has no Responses level above xhigh
_EFFORT_OUT: dict[str, str] = {"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh"}
_ENCRYPTED_INCLUDE = "reasoning.encrypted_content"
Sanitizer = Callable[[dict[str, Any]], dict[str, Any]]  # a profile's sanitize_tool_schema


# =================================================================== encoding
def encode_request(request: Request, target: Target) -> EncodedRequest:
    """The ``POST /responses`` request for ``request`` on ``target``."""
    profile = target.profile
    body = request_fields(request, model=target.model, sanitize=profile.sanitize_tool_schema, cache=target.cache)
    store = profile.responses_store
    body["store"] = store
    body["input"] = encode_input(request.get("messages") or [], accepts=profile.accepts_issuer, store=store)
    namespaced_calls(body["input"], spec_table(request.get("tools") or []))
    replays = any(item.get("encrypted_content") for item in body["input"] if item.get("type") == "reasoning")
    if not store and (request.get("thinking") not in (None, "none") or replays):
        # without it the next turn's reasoning comes back unreplayable; only asked
        # when reasoning is on (non-reasoning models answer 400 "Encrypted content
        # is not supported with this model")
        body["include"] = [_ENCRYPTED_INCLUDE]
    if request.get("stream"):
        body["stream"] = True
    body = profile.patch_body(body, target)
    _merge_extra(body, request.get("extra") or {})
    headers = {"content-type": "application/json"}
    headers["accept"] = "text/event-stream" if request.get("stream") else "application/json"
    headers.update(auth_headers(target.profile, target.api_key))
    headers.update(dict(profile.default_headers))
    headers.update(dict(target.headers))
    return EncodedRequest("POST", "/responses", headers, orjson.dumps(body))


def request_fields(
    request: Request, *, model: str, sanitize: Any = None, cache: EncodeCache | None = None
) -> dict[str, Any]:
    """Every body field but ``input``/``store``/``include``: also used by the
    response encoders to echo the request's settings the way the API does. With a
    ``cache``, the tools are converted once per content (:meth:`EncodeCache.whole`)."""
    body: dict[str, Any] = {"model": model}
    instructions = _instructions(request.get("messages") or [])
    if instructions is not None:
        body["instructions"] = instructions
    tools = request.get("tools")
    if tools:
        found = _kept_tools(tools, sanitize, request, cache) if cache is not None else None
        body["tools"] = found.value if found is not None else _encode_tools(tools, sanitize, request, log)
    if "tool_choice" in request:
        body["tool_choice"] = _encode_tool_choice(request["tool_choice"])
    if "parallel_tool_calls" in request:
        body["parallel_tool_calls"] = request["parallel_tool_calls"]
    effort = request.get("thinking")
    if effort and effort != "none":  # "none": asked off
        body["reasoning"] = {"effort": _EFFORT_OUT.get(effort, "medium"), "summary": "auto"}
    if "max_tokens" in request:
        body["max_output_tokens"] = request["max_tokens"]
    for key in ("temperature", "top_p"):
        if key in request:
            body[key] = request[key]  # type: ignore[literal-required]
    if request.get("stop"):
        # the Responses API has no stop sequences and rejects the parameter (400)
        log.warning("responses: 'stop' is not supported by the Responses API; dropped")
    fmt = request.get("response_format")
    if fmt:
        body["text"] = {"format": _encode_format(fmt)}
    return body


def _merge_extra(body: dict[str, Any], extra: Mapping[str, Any]) -> None:
    # shallow, as the contract says: a native setting in extra (a front door's
    # own "reasoning" or "text") wins whole, so a re-encode says exactly what the
    # client said and adds nothing it did not ask for
    if extra:
        no_logprobs(extra)  # a Client's extra= too: the answer would come back without them
    body.update(extra)


def _instructions(messages: list[Message]) -> str | None:
    parts = []
    for msg in messages:
        if msg.get("role") != "system":
            break
        parts.append(_plain_text(msg.get("content"), "system"))
    return "\n\n".join(parts) if parts else None


def _plain_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise UnsupportedContentError(f"{where} content may only hold text parts, got {part!r:.80}")
            out.append(part.get("text", ""))
        return "".join(out)
    if content is None:
        return ""
    raise MessageError(f"{where} content must be a string or a list of parts")


def encode_input(messages: list[Message], *, accepts: Any, store: bool) -> list[dict[str, Any]]:
    """Internal messages -> Responses ``input`` items."""
    items: list[dict[str, Any]] = []
    start = 0
    while start < len(messages) and messages[start].get("role") == "system":
        start += 1  # these went to instructions
    seen_reasoning: set[str] = set()
    for index in range(start, len(messages)):
        msg = messages[index]
        role = msg.get("role")
        if role in ("system", "developer", "user"):
            items.append({"role": role, "content": _encode_content(msg.get("content"), index)})
        elif role == "assistant":
            items.extend(_encode_assistant(msg, index, accepts, store, seen_reasoning))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not call_id:
                raise MessageError("tool message without tool_call_id", index=index)
            items.append({
                "type": "function_call_output",
                "call_id": call_id,
                "output": _encode_tool_output(msg.get("content"), index),
            })
        else:
            raise MessageError(f"unknown role {role!r}", index=index)
    return items


def _encode_assistant(
    msg: Any, index: int, accepts: Any, store: bool, seen: set[str]
) -> list[dict[str, Any]]:
    """The turn's items in its own order (``block_order``, modelwire.blockorder): each
    reasoning item before the call it led to, as the model produced them."""
    text = _assistant_text(msg.get("content"), index)
    if msg.get("refusal"):
        # an input message cannot carry a refusal part without an output-message id;
        # the refusal is what the assistant said, so it goes back as its text
        text = (text + "\n" if text else "") + msg["refusal"]
    placed: list[tuple[str, dict[str, Any] | None]] = []
    counts = dict.fromkeys(("reasoning", "passthrough", "text", "tool_call"), 0)
    for kind, item in ordered_items(msg):
        counts[kind] += 1
        if kind == "reasoning":
            placed.append((kind, _reasoning_item(item, accepts, store)))
        elif kind == "passthrough":
            placed.append((kind, _passthrough_item(item, accepts, store)))
        elif kind == "tool_call":
            fn = item.get("function") or {}
            placed.append((kind, {"type": "function_call", "call_id": item.get("id") or "",
                                  "name": fn.get("name", ""), "arguments": fn.get("arguments") or "{}"}))
        elif counts["text"] == 1 and text:
            placed.append((kind, {"role": "assistant", "content": text}))
    if text and not counts["text"]:  # a refusal with no content: its text stands last
        placed.append(("text", {"role": "assistant", "content": text}))
    return _without_orphans(placed, seen)


def _without_orphans(placed: list[tuple[str, dict[str, Any] | None]], seen: set[str]) -> list[dict[str, Any]]:
    """Reasoning with no item after it would be an orphan (400 "provided without its
    required following item"): left out, as is a turn with nothing but reasoning; the
    same item replayed twice is a 400 (duplicate item), so each goes once."""
    out: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}
    for kind, item in placed:
        if item is None:
            continue
        if kind == "reasoning":
            key = item.get("encrypted_content") or item.get("id") or repr(item)
            if key not in seen:
                pending.setdefault(key, item)
            continue
        seen.update(pending)
        out += [*pending.values(), item]
        pending = {}
    return out


def _reasoning_item(detail: Any, accepts: Any, store: bool) -> dict[str, Any] | None:
    return _replay_reasoning(detail, store) if _is_own(detail, accepts) else None


def _passthrough_item(entry: Any, accepts: Any, store: bool) -> dict[str, Any] | None:
    block = entry.get("block") if isinstance(entry, dict) else None
    if not (isinstance(block, dict) and accepts(entry.get("issuer", "")) and "type" in block):
        return None
    if store:
        return dict(block)
    # hosted tool calls (web_search_call...) need their id on input, and an id the API
    # did not store is a 404: not replayed, as Hermes does; what they found is already
    # in the assistant's text
    log.debug("responses: not replaying %s item without storage", block["type"])
    return None


def _is_own(detail: Any, accepts: Any) -> bool:
    return (
        isinstance(detail, dict)
        and isinstance(detail.get("block"), dict)
        and detail["block"].get("type") == "reasoning"
        and accepts(detail.get("issuer", ""))
    )


def _replay_reasoning(detail: dict[str, Any], store: bool) -> dict[str, Any] | None:
    block = detail["block"]
    if not store and not block.get("encrypted_content") and not block.get("content"):
        # without storage, an id-less item with no encrypted or raw content carries
        # nothing the model can use (Hermes replays only encrypted items)
        return None
    item = _strip_id(block, store)
    item.pop("status", None)  # output-only field on reasoning items
    item.setdefault("summary", [])  # required on input reasoning items
    return item


def _strip_id(block: dict[str, Any], store: bool) -> dict[str, Any]:
    item = dict(block)
    if not store:
        item.pop("id", None)
    return item


def _assistant_text(content: Any, index: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                out.append(part.get("text", ""))
            else:
                raise UnsupportedContentError(
                    f"assistant content part {part!r:.80} cannot be sent to the Responses API", index=index
                )
        return "".join(out)
    raise MessageError("assistant content must be a string or a list of parts", index=index)


def _encode_content(content: Any, index: int) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise MessageError("content must be a string or a list of parts", index=index)
    return [_encode_part(p, index) for p in content]


def _encode_tool_output(content: Any, index: int) -> str | list[dict[str, Any]]:
    if content is None:
        return ""
    return _encode_content(content, index)


def _encode_part(part: Any, index: int) -> dict[str, Any]:
    # cache_control has no Responses meaning (OpenAI caches prefixes automatically)
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return {"type": "input_text", "text": part.get("text", "")}
    if kind == "image_url":
        image = part.get("image_url") or {}
        if isinstance(image, str):
            image = {"url": image}
        return {"type": "input_image", "image_url": image.get("url", ""), "detail": image.get("detail", "auto")}
    if kind == "file":
        out = {"type": "input_file"}
        out.update({k: v for k, v in (part.get("file") or {}).items() if k in ("file_id", "file_data", "filename")})
        return out
    if kind == "input_audio":
        return {"type": "input_audio", "input_audio": dict(part.get("input_audio") or {})}
    raise UnsupportedContentError(f"content part {part!r:.80} cannot be sent to the Responses API", index=index)


def _encode_tools(tools: list[Any], sanitize: Sanitizer | None, request: Request, logger: object) -> list[dict[str, Any]]:
    kept = unique_tools(tools, logger)
    return regroup([_encode_tool(t, sanitize, i, request) for i, t in enumerate(kept)], kept)


class _Notes:
    """A logger's ``warning`` that keeps its arguments, for :meth:`EncodeCache.whole`."""

    def __init__(self, notes: list[tuple[Any, ...]]) -> None:
        self.notes = notes

    def warning(self, *args: object) -> None:
        self.notes.append(args)


def _kept_tools(tools: object, sanitize: Sanitizer | None, request: Request, cache: EncodeCache) -> Converted | None:
    """:func:`_encode_tools` converted once per content (xAI's schema sanitizer is most of
    encoding an agent's request); None where the cache does not apply."""
    if not isinstance(tools, list):
        return None
    metadata = request.get("metadata")
    source = metadata.get("source_api") if isinstance(metadata, dict) else None
    if source is not None and not isinstance(source, str):
        return None  # native_tool reads it: it is part of the key

    def convert(specs: list[Any], notes: list[tuple[Any, ...]]) -> tuple[Any, None]:
        return _encode_tools(specs, sanitize, request, _Notes(notes)), None

    return cache.whole(("responses.tools", sanitize, source), tools, convert, log)


def _encode_tool(spec: Any, sanitize: Any, index: int, request: Request) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise MessageError(f"tool spec must be an object, got {spec!r:.80}")
    if spec.get("type") != "function" or "function" not in spec:
        return native_tool(spec, index, request, "responses")  # web_search, mcp, custom...
    fn = spec["function"]
    out: dict[str, Any] = {"type": "function", "name": fn.get("name", "")}
    if "description" in fn:
        out["description"] = fn["description"]
    params = fn.get("parameters")
    if params is not None:
        out["parameters"] = sanitize(params) if sanitize else params
    out["strict"] = bool(fn.get("strict", False))  # see the module docstring
    return out


def _encode_tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict):
        if choice.get("type") == "function" and isinstance(choice.get("function"), dict):
            return {"type": "function", "name": choice["function"].get("name", "")}
        if choice.get("type") == "allowed_tools" and isinstance(choice.get("allowed_tools"), dict):
            inner = choice["allowed_tools"]
            return {
                "type": "allowed_tools",
                "mode": inner.get("mode", "auto"),
                "tools": [_flat_tool_ref(t) for t in inner.get("tools") or ()],
            }
        return dict(choice)
    raise MessageError(f"tool_choice must be a string or an object, got {choice!r:.80}")


def _flat_tool_ref(ref: Any) -> Any:
    if isinstance(ref, dict) and isinstance(ref.get("function"), dict):
        return {"type": "function", "name": ref["function"].get("name", "")}
    return ref


def _encode_format(fmt: Any) -> dict[str, Any]:
    if not isinstance(fmt, dict):
        raise MessageError("response_format must be an object")
    if fmt.get("type") == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        return {"type": "json_schema", **fmt["json_schema"]}
    return dict(fmt)
