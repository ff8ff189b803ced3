"""The model endpoints: authenticate, pick a fault, check the profile's rules, ask the
model (or the script), render in the protocol, and hand an :class:`EmuResponse` back."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..types import JSONValue
from . import render_anthropic, render_chat, render_responses
from .faults import (
    BODY_FAULTS,
    ERROR_FAULTS,
    STREAM_FAULTS,
    Fault,
    FaultStore,
    fault_error,
    parse_header,
)
from .model import Reply, respond
from .oauth import ACCESS_PREFIX, OAuthServer
from .profiles import PROFILES, EmuProfile
from .replay import ENDPOINTS as REPLAYED
from .replay import Replay
from .response import EmuResponse
from .rules import Parsed
from .rules.anthropic import check_messages
from .rules.chat import check_chat
from .rules.responses import check_responses
from .script import Script, ScriptRequest
from .signing import Signer
from .state import EmulatorState, mask_headers
from .wire import ApiError, RenderContext, dumps, error_body, new_id, protocol_of, tokens

__all__ = ["MODELS", "Backend", "api_key"]

MODELS = ("emulator-1", "claude-sonnet-4-6", "claude-opus-4-7", "claude-haiku-4-5", "gpt-5.5",
          "gpt-4o-mini", "deepseek-reasoner", "kimi-k2-thinking")
_JSON = "application/json"
_SSE = "text/event-stream; charset=utf-8"


@dataclass
class Backend:
    profile: str = "lenient"
    keys: frozenset[str] | None = None
    script: Script | None = None
    signer: Signer = field(default_factory=lambda: Signer.from_key(None))
    max_hang: float = 10.0
    state: EmulatorState = field(default_factory=EmulatorState)
    faults: FaultStore = field(default_factory=FaultStore)
    oauth: OAuthServer = field(init=False)
    replay: Replay | None = None  # captured answers served instead of the model's

    def __post_init__(self) -> None:
        self.oauth = OAuthServer(self.state)

    # ------------------------------------------------------------ entry point
    async def handle(self, endpoint: str, profile_name: str | None, method: str, path: str,
                     headers: Mapping[str, str], raw: bytes, *,
                     client_port: int | None = None) -> EmuResponse:
        protocol = protocol_of(endpoint)
        if endpoint == "models" and "anthropic-version" in headers:
            protocol = "anthropic"
        name = profile_name or self.profile
        body: Any = None
        if raw:
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                body = raw.decode("utf-8", "replace")
        model = body.get("model") if isinstance(body, dict) else None
        entry = self.state.record(method=method, path=path, endpoint=endpoint, profile=name,
                                  model=model, headers=mask_headers(headers), body=body,
                                  stream=bool(isinstance(body, dict) and body.get("stream")),
                                  client_port=client_port)
        request_id = new_id("req_", 24)
        try:
            profile = PROFILES.get(name)
            if profile is None:
                raise ApiError(404, f"unknown emulator profile '{name}'; known: "
                               + ", ".join(PROFILES), etype="not_found_error")
            self._authenticate(headers, protocol)
            fault = self._fault(headers, endpoint, name, model, api_key(headers))
            self.state.update(entry, fault=fault.fault if fault else None)
            if fault and fault.fault in ERROR_FAULTS:
                raise fault_error(fault, protocol)
            if isinstance(body, str) or (raw and body is None):
                raise ApiError(400, "There was an error parsing the body of your request as JSON.")
            as_json = bool(fault and fault.fault == "json_answer")
            status, out_headers, chunks, error_event = self._serve(endpoint, profile, headers, body,
                                                                   as_json=as_json)
        except ApiError as err:
            return self._error(err, protocol, request_id, entry)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError,
                RecursionError) as exc:
            # a body shaped unlike anything the protocol allows, in a way no rule names: a real
            # provider answers 400, never 5xx; the log keeps the cause for whoever debugs it
            self.state.update(entry, internal_error=f"{type(exc).__name__}: {exc}")
            err = ApiError(400, "Invalid request: the body does not match the API's schema "
                           f"({type(exc).__name__}).")
            return self._error(err, protocol, request_id, entry)
        out_headers["request-id" if protocol == "anthropic" else "x-request-id"] = request_id
        if endpoint not in ("models", "count_tokens"):
            out_headers.update(_ratelimit_headers(protocol))
        hang = min(fault.seconds, self.max_hang) if fault and fault.fault == "hang" else 0.0
        if fault and fault.fault in STREAM_FAULTS:
            fault, chunks = _fit_stream_fault(fault, chunks)
            if fault.fault == "stall":
                fault = dataclasses.replace(fault, seconds=min(fault.seconds, self.max_hang))
        if fault and fault.fault in BODY_FAULTS:
            chunks = []  # reset_before sends nothing, empty_stream no event
            if fault.fault == "empty_stream" and out_headers.get("content-type") == _SSE:
                chunks = [b": no events\n\n"]
        served = fault if fault and fault.fault in STREAM_FAULTS | BODY_FAULTS else None
        return EmuResponse(status, out_headers, chunks, state=self.state, entry=entry, hang=hang,
                           fault=served,
                           error_event=error_event)

    def _error(self, err: ApiError, protocol: str, request_id: str,
               entry: dict[str, Any] | None) -> EmuResponse:
        headers = {"content-type": _JSON, **err.headers}
        headers["request-id" if protocol == "anthropic" else "x-request-id"] = request_id
        payload = dumps(error_body(err, protocol, request_id))  # type: ignore[arg-type]
        if entry is not None:
            self.state.update(entry, error={"status": err.status, "type": err.etype,
                                            "message": err.message})
        return EmuResponse(err.status, headers, [payload], state=self.state, entry=entry)

    def _authenticate(self, headers: Mapping[str, str], protocol: str) -> None:
        key = api_key(headers)
        if key.startswith(ACCESS_PREFIX):
            if self.oauth.is_access_token(key):
                return
        elif key and (self.keys is None or key in self.keys):
            return
        if protocol == "anthropic":
            message = "invalid x-api-key" if key else "x-api-key header is required"
            raise ApiError(401, message, etype="authentication_error",
                           headers={"x-should-retry": "false"})
        if key:
            shown = f"{key[:3]}*****{key[-4:]}" if len(key) > 8 else "*****"
            raise ApiError(401, f"Incorrect API key provided: {shown}. You can find your API key "
                           "at https://platform.openai.com/account/api-keys.",
                           code="invalid_api_key")
        raise ApiError(401, "You didn't provide an API key. You need to provide your API key in an "
                       "Authorization header using Bearer auth (i.e. Authorization: Bearer "
                       "YOUR_KEY).", code=None)

    def _fault(self, headers: Mapping[str, str], endpoint: str, profile: str,
               model: str | None, key: str) -> Fault | None:
        header = headers.get("x-emulator-fault")
        if header:
            try:
                return parse_header(header)
            except (ValueError, orjson.JSONDecodeError) as exc:
                raise ApiError(400, f"x-emulator-fault: {exc}") from exc
        return self.faults.pick(endpoint, profile, model, key)

    # ------------------------------------------------------------ serving
    def _serve(self, endpoint: str, profile: EmuProfile, headers: Mapping[str, str],
               body: JSONValue, *, as_json: bool = False,
               ) -> tuple[int, dict[str, str], list[bytes], bytes | None]:
        if endpoint == "models":
            return 200, {"content-type": _JSON}, [dumps(self._models(headers))], None
        if endpoint == "embeddings":
            from .embeddings import serve as serve_embeddings

            return 200, {"content-type": _JSON}, [serve_embeddings(body)], None
        if endpoint == "count_tokens":
            parsed = check_messages(body, headers, profile, self.signer, count_only=True)
            return 200, {"content-type": _JSON}, [dumps({"input_tokens": tokens(parsed.prompt_chars)})], None
        if self.replay is not None and endpoint in REPLAYED:
            return self.replay.answer(endpoint, body)
        if endpoint == "messages":
            parsed = check_messages(body, headers, profile, self.signer)
        elif endpoint == "chat_completions":
            parsed = check_chat(body, profile)
        else:
            parsed = check_responses(body, self.signer, self.state.stored())
        reply = self._reply(parsed, endpoint, body)
        ctx = self._context(parsed, reply, body, profile)
        if as_json and parsed.stream:
            # json_answer fault: render as if stream had been false (servers that ignore it)
            parsed = dataclasses.replace(parsed, stream=False)
        return self._render(endpoint, parsed, reply, ctx)

    def _reply(self, parsed: Parsed, endpoint: str, body: JSONValue) -> Reply:
        if self.script is None:
            return respond(parsed.prompt)
        step = self.script.next(ScriptRequest(endpoint, parsed.model, parsed.stream,
                                              parsed.prompt, body, 0))
        if isinstance(step, ApiError):
            raise step
        return step

    def _context(self, parsed: Parsed, reply: Reply, body: JSONValue, profile: EmuProfile) -> RenderContext:
        output_chars = len(reply.text) + sum(len(c.name) + len(c.arguments) for c in reply.calls)
        prefix_key = dumps([body.get("model"), body.get("system"), body.get("tools"),
                            parsed.cache_prefix_chars])
        usage = self.state.usage(parsed.prompt_chars, parsed.cache_prefix_chars, prefix_key,
                                 output_chars, len(reply.reasoning or ""))
        return RenderContext(usage=usage, created=int(time.time()), signer=self.signer,
                             emits_reasoning_content=profile.emits_reasoning_content,
                             interleaved=bool(parsed.options.get("interleaved")))

    def _render(self, endpoint: str, parsed: Parsed, reply: Reply,
                ctx: RenderContext) -> tuple[int, dict[str, str], list[bytes], bytes | None]:
        if endpoint == "messages":
            renderer: Any = render_anthropic
            error_event = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
        elif endpoint == "chat_completions":
            renderer = render_chat
            error_event = (b'data: {"error":{"message":"The server had an error while processing '
                           b'your request.","type":"server_error","param":null,"code":"server_error"}}\n\n')
        else:
            return self._render_responses(parsed, reply, ctx)
        if parsed.stream:
            return 200, {"content-type": _SSE, "cache-control": "no-cache"}, renderer.events(parsed, reply, ctx), error_event
        return 200, {"content-type": _JSON}, [dumps(renderer.body(parsed, reply, ctx))], None

    def _render_responses(self, parsed: Parsed, reply: Reply,
                          ctx: RenderContext) -> tuple[int, dict[str, str], list[bytes], bytes | None]:
        items = render_responses.output_items(parsed, reply, ctx)
        rid = new_id("resp_", 48)
        if parsed.options.get("store"):
            self.state.store_response(rid, list(parsed.options["history"]) + items)
        if parsed.stream:
            error_event = (b'event: error\ndata: {"type":"error","code":"server_error","message":'
                           b'"The server had an error while processing your request.","param":null,'
                           b'"sequence_number":0}\n\n')
            chunks = render_responses.events(parsed, reply, ctx, items, rid)
            return 200, {"content-type": _SSE, "cache-control": "no-cache"}, chunks, error_event
        return 200, {"content-type": _JSON}, [dumps(render_responses.body(parsed, reply, ctx, items, rid))], None

    def _models(self, headers: Mapping[str, str]) -> dict[str, Any]:
        if "anthropic-version" in headers:
            data = [{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
                    for m in MODELS]
            return {"data": data, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]}
        return {"object": "list", "data": [{"id": m, "object": "model", "created": 1767225600,
                                            "owned_by": "modelwire-emulator"} for m in MODELS]}


def api_key(headers: Mapping[str, str]) -> str:
    """The request's API key, in whichever header its protocol puts it."""
    key = headers.get("x-api-key") or headers.get("api-key") or ""
    auth = headers.get("authorization", "")
    if not key and auth.lower().startswith("bearer "):
        key = auth[7:].strip()
    return key


def _fit_stream_fault(fault: Fault, chunks: list[bytes]) -> tuple[Fault, list[bytes]]:
    """Make a stream fault land inside this answer: a JSON body is split in two so it can be
    cut, corrupted or slowed too; ``after`` is clamped to the last chunk."""
    if len(chunks) == 1 and len(chunks[0]) > 1:
        half = len(chunks[0]) // 2
        chunks = [chunks[0][:half], chunks[0][half:]]
    return dataclasses.replace(fault, after=max(0, min(fault.after, len(chunks) - 1))), chunks


def _ratelimit_headers(protocol: str) -> dict[str, str]:
    """The rate-limit headers real providers put on every answer (../shared/corpus), with
    plenty left, so credential pools see their usual shape on success too."""
    if protocol == "anthropic":
        reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))
        return {"anthropic-ratelimit-requests-limit": "50",
                "anthropic-ratelimit-requests-remaining": "49",
                "anthropic-ratelimit-requests-reset": reset,
                "anthropic-ratelimit-tokens-limit": "100000",
                "anthropic-ratelimit-tokens-remaining": "99000",
                "anthropic-ratelimit-tokens-reset": reset}
    return {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59",
            "x-ratelimit-reset-requests": "1s", "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "149000", "x-ratelimit-reset-tokens": "0s"}
