"""``encode_request`` for Anthropic Messages: the body, headers and path.

Order of work: conversation (``_convert``), tools and tool_choice, thinking
from an effort level (per model family), sampling parameters (per family and API
version), max_tokens, structured output, betas, cache breakpoint budget, prefill check,
then ``profile.patch_body``, then ``request["extra"]`` merged last.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import Any, cast
from urllib.parse import quote

import orjson

from ...errors import MessageError
from ...types import Request
from ...wire import EncodedRequest, Target, auth_headers
from ..cache import Converted
from ..tools import allowed_only
from ._convert import ConvertContext, encode_conversation, is_strict_version

# the other direction (what a front door receives) has its own module; both are "the request"
from ._decode_request import decode_request
from ._models import NON_CLAUDE, ModelFamily, family_for
from ._tool_list import kept_tools
from ._tools import encode_tool_choice, encode_tools, is_forced, normalize_schema
from ._turns import MIN_MESSAGES, CachedConversation, cached_conversation

__all__ = ["DEFAULT_VERSION", "MAX_BREAKPOINTS", "decode_request", "encode_request", "limit_cache_breakpoints", "supports_mid_system"]

log = logging.getLogger("modelwire.codecs.anthropic")

DEFAULT_VERSION = "2023-06-01"  # what third-party Anthropic-compatible endpoints document
MAX_BREAKPOINTS = 4  # Anthropic: "A maximum of 4 blocks with cache_control may be provided"
# budget thinking per effort level (older Claude models and non-Claude endpoints)
BUDGETS = {"low": 4000, "medium": 8000, "high": 16000, "xhigh": 32000, "max": 32000}
MIN_BUDGET = 1024  # Anthropic: budget_tokens >= 1024
BUDGET_HEADROOM = 4096  # room for the answer after the thinking budget
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
FAST_BETA = "fast-mode-2026-02-01"
MID_SYSTEM_BETA = "mid-conversation-system-2026-04-07"


def supports_mid_system(profile: Any, model: str) -> bool:
    """Whether ``{"role": "system"}`` entries in ``messages`` may go to ``model`` at this
    endpoint as they are (else the encoder turns them into reminders in user turns)."""
    return bool(profile.mid_conversation_system) and family_for(model).mid_system


def _effort_for(effort: str, family: ModelFamily) -> str:
    if effort in family.efforts:
        return effort
    return "max" if effort == "xhigh" and "max" in family.efforts else "high"


def _apply_thinking(
    body: dict[str, Any], request: dict[str, Any], family: ModelFamily, betas: list[str]
) -> str | None:
    """Set ``thinking`` (and ``output_config.effort``); returns the mode used or None."""
    effort = request.get("thinking")
    if not effort or effort == "none":  # "none": asked off
        return None
    if family.thinking == "none":
        log.warning("%s does not think; thinking level %r ignored", body["model"], effort)
        return None
    if family.thinking == "budget":
        budget = BUDGETS.get(effort, BUDGETS["medium"])
        ceiling = family.max_output if family.known else 10**9
        max_tokens = min(max(body["max_tokens"], budget + BUDGET_HEADROOM), ceiling)
        room = max_tokens - BUDGET_HEADROOM
        budget = min(budget, room if room >= MIN_BUDGET else max_tokens - 1)  # budget < max_tokens
        if budget < MIN_BUDGET:
            log.warning("max_tokens %d leaves no room for a thinking budget; thinking off", max_tokens)
            return None
        body["max_tokens"] = max_tokens
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if family.known and body.get("tools"):
            betas.append(INTERLEAVED_BETA)  # 4.x budget models think between tool calls only with it
        return "budget"
    # adaptive: thinking depth from output_config.effort; interleaved thinking is automatic.
    # display "summarized": Opus 4.7 and later omit the thinking text by default, so a
    # caller who asked for thinking would otherwise see no reasoning at all
    # (docker-agent#3415 hit exactly this).
    body["thinking"] = {"type": "adaptive", "display": "summarized"}
    body.setdefault("output_config", {})["effort"] = _effort_for(effort, family)
    return "adaptive"


def _apply_sampling(
    body: dict[str, Any], request: dict[str, Any], family: ModelFamily, version: str, thinking: str | None
) -> None:
    wanted = {k: request[k] for k in ("temperature", "top_p") if request.get(k) is not None}
    if is_strict_version(version) or not family.sampling:
        if wanted:
            log.warning("%s dropped: %s rejects sampling parameters (API %s)", sorted(wanted), body["model"], version)
        return
    if thinking:
        # Anthropic: thinking is not compatible with temperature changes (1 only) and
        # top_p below 0.95
        if thinking == "budget":
            body["temperature"] = 1
        elif wanted.get("temperature") not in (None, 1):
            log.warning("temperature dropped: not allowed with thinking")
        top_p = wanted.get("top_p")
        if top_p is not None and top_p >= 0.95:
            body["top_p"] = top_p
        elif top_p is not None:
            log.warning("top_p %s dropped: thinking needs top_p >= 0.95", top_p)
        return
    body.update(wanted)


def _family(target: Target) -> ModelFamily:
    """The model's family; a non-Claude model takes its endpoint's documented output
    limit from the catalog row (MiniMax stopped long answers at 8,192 with
    finish_reason length while it allows 131,072: issue 4 of the seed comparison)."""
    family = family_for(target.model)
    limit = target.profile.max_output
    if family is NON_CLAUDE and limit:
        return dataclasses.replace(family, max_output=limit)
    return family


def _max_tokens(request: dict[str, Any], family: ModelFamily) -> int:
    wanted = request.get("max_tokens")
    if isinstance(wanted, float) and math.isfinite(wanted) and wanted >= 1:
        wanted = int(wanted)  # 4096.0 from a JSON config is fine; NaN, inf and 0.5 are not
    if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 1:
        if wanted is not None:
            log.warning("max_tokens %r is not a positive integer; using the model default", wanted)
        return family.max_output
    if family.known and wanted > family.max_output:
        log.warning("max_tokens %d clamped to %s's limit %d", wanted, family.name, family.max_output)
        return family.max_output
    return wanted


def _apply_speed(body: dict[str, Any], direct: bool, family: ModelFamily, betas: list[str]) -> None:
    """Fast mode, asked for: only on Anthropic's own endpoint (third parties know neither
    the field nor the beta: the seed, 8.6) and a model that has it. A premium tier, so
    never on by default; elsewhere it is left out with a warning: it changes how fast
    the answer comes, not what it says."""
    if direct and family.fast_mode:
        body["speed"] = "fast"
        betas.append(FAST_BETA)
    else:
        where = "this endpoint" if not direct else family.name
        log.warning("speed 'fast' left out: %s has no fast mode (%s)", where, body["model"])


def _response_format(body: dict[str, Any], fmt: Any) -> None:
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        body.setdefault("output_config", {})["format"] = {
            "type": "json_schema",
            "schema": normalize_schema(schema),
        }
    else:  # json_object: Anthropic's structured output needs a schema
        log.warning("response_format %r has no Anthropic form; not sent", fmt.get("type"))


def _iter_breakpoints(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block carrying cache_control, in prompt order (tools, system, messages);
    a turn kept as a Fragment (``_turns``) has none, or it would be a dict here."""
    found = _head_breakpoints(body)
    for m in body.get("messages") or []:
        if isinstance(m, dict) and isinstance(m["content"], list):
            for b in m["content"]:
                if "cache_control" in b:
                    found.append(b)
                if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                    found += [c for c in b["content"] if "cache_control" in c]
    return found


def _head_breakpoints(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The marked tools and system blocks; tools kept as a Fragment (``_tool_list``) are
    counted by their own facts, not here."""
    tools = body.get("tools")
    found = [t for t in tools if "cache_control" in t] if isinstance(tools, list) else []
    if isinstance(body.get("system"), list):
        found += [b for b in body["system"] if "cache_control" in b]
    return found


def _limit_cached_breakpoints(body: dict[str, Any], kept: Converted | None, conv: CachedConversation | None) -> None:
    """:func:`limit_cache_breakpoints` for tools or a conversation from the cache: counted
    from their facts; only when there are too many are the marked pieces made dicts."""
    marks = len(_head_breakpoints(body)) if conv is not None else len(_iter_breakpoints(body))
    marks += (kept.facts if kept is not None else 0) + (sum(conv.marks) if conv is not None else 0)
    if marks <= MAX_BREAKPOINTS:
        return
    if kept is not None and kept.facts:
        body["tools"] = kept.loads()
    if conv is not None:
        for i in [i for i, n in enumerate(conv.marks) if n]:
            conv.materialize(i)
    limit_cache_breakpoints(body)


def limit_cache_breakpoints(body: dict[str, Any]) -> int:
    """Keep at most 4 ``cache_control`` marks (TTLs untouched). Extra marks are dropped
    from the earliest message blocks first: tools and system hold the longest-lived
    prefix. Returns how many were dropped (pydantic-ai#3453: 5 marks -> 400)."""
    marks = _iter_breakpoints(body)
    excess = len(marks) - MAX_BREAKPOINTS
    if excess <= 0:
        return 0
    n_head = len(_head_breakpoints(body))
    order = marks[n_head:] + marks[:n_head]  # message marks first, earliest first
    for block in order[:excess]:
        del block["cache_control"]
    log.warning("%d cache_control breakpoints dropped (Anthropic allows %d)", excess, MAX_BREAKPOINTS)
    return excess


def _current_loop_start(messages: list[dict[str, Any]]) -> int:
    """Index of the user message that opened the current tool loop. A user message right
    after tool results joins their Anthropic turn (it does not end the loop)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user":
            prev = messages[i - 1] if i > 0 else None
            if not (isinstance(prev, dict) and prev.get("role") == "tool"):
                return i
    return -1


def _has_tool_blocks(messages: list[dict[str, Any]]) -> bool:
    """Anthropic: "Requests which include tool_use or tool_result blocks must define
    tools" — so with such history, tool_choice none keeps the tools and sends
    {"type": "none"} instead of dropping them."""
    return any(
        isinstance(m["content"], list) and any(b.get("type") in ("tool_use", "tool_result") for b in m["content"])
        for m in messages
    )


def _check_thinking_turn(body: dict[str, Any]) -> None:
    """With thinking on, the last assistant turn of the tool loop must start with its
    thinking block (Anthropic 400 "Expected `thinking` or `redacted_thinking`, but found
    `tool_use`"). When that block was not kept (foreign issuer, altered turn) thinking is
    turned off for this request instead of sending a request that fails."""
    msgs = body["messages"]
    if not msgs or msgs[-1]["role"] != "user" or len(msgs) < 2:
        return
    last = msgs[-1]["content"]
    if not (isinstance(last, list) and last and last[0].get("type") == "tool_result"):
        return
    prev = msgs[-2]
    first = prev["content"][0] if isinstance(prev["content"], list) and prev["content"] else {}
    if first.get("type") not in ("thinking", "redacted_thinking"):
        log.warning("thinking turned off: the tool loop's last assistant turn has no thinking block to send back")
        body.pop("thinking", None)
        oc = body.get("output_config")
        if isinstance(oc, dict):
            oc = {k: v for k, v in oc.items() if k != "effort"}  # a copy: it may be the caller's
            if oc:
                body["output_config"] = oc
            else:
                del body["output_config"]
        if body.get("temperature") == 1:
            del body["temperature"]


def _body(request: dict[str, Any], target: Target, betas: list[str]) -> dict[str, Any]:
    profile = target.profile
    version = profile.anthropic_version or DEFAULT_VERSION
    family = _family(target)
    extra = request.get("extra") or {}
    messages = request.get("messages") or []
    ctx = ConvertContext(profile, version, _current_loop_start(messages),
                         mid_system=supports_mid_system(profile, target.model))
    conv = None
    if target.cache is not None and len(messages) >= MIN_MESSAGES:
        conv = cached_conversation(messages, ctx, target.cache)
    if conv is not None:
        system, converted = conv.system, conv.messages  # no native system turns there
    else:
        system, converted = encode_conversation(messages, ctx)
        if any(m["role"] == "system" for m in converted):
            betas.append(MID_SYSTEM_BETA)  # what Claude Code sends with them (the API needs none now)
    if not converted:
        raise MessageError("the conversation has no user or assistant message")
    body: dict[str, Any] = {"model": target.model, "max_tokens": _max_tokens(request, family)}
    if system is not None:
        body["system"] = system
    body["messages"] = converted
    # Anthropic has no allowed_tools: only the allowed tools are sent
    tools, choice = allowed_only(request.get("tools") or [], request.get("tool_choice"))
    if choice == "none" and tools and not (conv.tool_blocks if conv is not None else _has_tool_blocks(converted)):
        tools = []  # tool_choice none: no tools are sent at all
    kept = None
    if tools:
        eager = bool(request.get("stream")) and profile.fine_grained_tool_streaming
        if target.cache is not None:
            kept = kept_tools(tools, profile, eager=eager, request=request, cache=target.cache)
        body["tools"] = kept.value if kept is not None else \
            encode_tools(tools, profile, eager=eager, request=request, cache=target.cache)
        tc = encode_tool_choice(choice, request.get("parallel_tool_calls"))
        if tc is not None:
            body["tool_choice"] = tc
    native_thinking = "thinking" in extra  # a front door's native setting wins
    mode = None if native_thinking else _apply_thinking(body, request, family, betas)
    if mode and is_forced(body.get("tool_choice")):
        # Anthropic: thinking cannot be combined with a forced tool; keep thinking
        log.warning("tool_choice %r sent as auto: thinking is on", choice)
        body["tool_choice"] = {k: v for k, v in body["tool_choice"].items() if k == "disable_parallel_tool_use"}
        body["tool_choice"]["type"] = "auto"
    _apply_sampling(body, request, family, version, mode or ("native" if native_thinking else None))
    stop = request.get("stop")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if "output_format" not in extra:
        _response_format(body, request.get("response_format"))
    if "stream" in request:
        body["stream"] = bool(request["stream"])
    if mode:
        _check_thinking_turn(body)
    if request.get("speed") == "fast":
        _apply_speed(body, profile.fast_mode, family, betas)
    if body["messages"][-1]["role"] == "assistant" and not family.prefill:
        raise MessageError(
            f"{target.model} does not accept a conversation ending with an assistant turn "
            "(no prefill on Claude 4.6 and later): end with a user message",
            index=len(messages) - 1,
        )
    if conv is None and kept is None:
        limit_cache_breakpoints(body)
    else:
        _limit_cached_breakpoints(body, kept, conv)
    return body


def encode_request(request: Request, target: Target) -> EncodedRequest:
    profile = target.profile
    betas: list[str] = list(profile.anthropic_betas)
    try:
        body = _body(cast(dict[str, Any], request), target, betas)  # read as plain JSON
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        # wrong types in the caller's request: one seam, a MessageError naming it
        raise MessageError(f"malformed request for Anthropic: {type(exc).__name__}: {exc}") from exc
    body = profile.patch_body(body, target)
    extra = request.get("extra") or {}
    for k, v in extra.items():
        body[k] = v
    if isinstance(extra.get("thinking"), dict) and extra["thinking"].get("type") in ("enabled", "adaptive"):
        # a front door's own thinking setting (Claude Code's adaptive): the same rule as
        # for a derived one, now that it is in the body (history from another issuer
        # leaves the loop's turn without its thinking block)
        _check_thinking_turn(body)
    client_betas = (request.get("metadata") or {}).get("anthropic_beta")
    if client_betas and profile.accepts_issuer("anthropic"):
        # betas a front-door client asked for go only to Anthropic's own endpoints
        # (direct, Bedrock, Vertex); compatibles such as MiniMax reject unknown betas
        # (oauth-* betas belong to consumer logins; modelwire sends API keys upstream)
        betas.extend(
            b for b in client_betas
            if not b.startswith("oauth-")
            and (profile.fine_grained_tool_streaming or not b.startswith("fine-grained-tool-streaming"))
        )
    version = profile.anthropic_version or DEFAULT_VERSION
    headers: dict[str, str] = {"content-type": "application/json"}
    headers.update(auth_headers(target.profile, target.api_key))
    bedrock = version.startswith("bedrock-")
    if bedrock:
        # Bedrock InvokeModel: version in the body, model in the path, no stream field
        body.pop("model", None)
        stream = bool(body.pop("stream", False))
        body.setdefault("anthropic_version", version)
        action = "invoke-with-response-stream" if stream else "invoke"
        path = f"/model/{quote(target.model, safe='')}/{action}"
    else:
        headers["anthropic-version"] = version
        path = "/v1/messages"
    headers.update(dict(profile.default_headers))
    unique = list(dict.fromkeys(b for b in betas if b))
    if unique and not bedrock:
        headers["anthropic-beta"] = ",".join(unique)
    elif unique:
        body.setdefault("anthropic_beta", unique)
    headers.update(dict(target.headers))
    return EncodedRequest("POST", path, headers, orjson.dumps(body))
