"""One ``complete``/``stream`` call's books: :class:`Turn` prepares and encodes each
attempt for the current model of the chain, and walks the resilience ladder on each
failure (attempts, errors, ladder state, credential outcomes, fallback position).

No I/O: :mod:`modelwire.client` sends what :meth:`Turn.plan` returns and reports back.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from ..completion import PRIMARY_COOLING, Attempt, AttemptOutcome, Completion, Timing
from ..errors import (
    CredentialError,
    FallbackExhaustedError,
    MessageError,
    ModelwireError,
    PoolExhaustedError,
    UnsupportedContentError,
)
from ..messages import prepare_conversation
from ..messages.stops import StopDecoder, cut_completion, stop_list
from ..observe.watch import CallWatch
from ..resilience import Failure, LadderState, StickyStart, classify, decide
from ..resilience.policy import Action
from ..transport import Timeouts
from ..wire import API_MODES, protocol_name
from ._core import OPTION_FIELDS, Endpoint, Options, Plan, Settings
from ._creds import HeldCredential

__all__ = ["Turn", "sleep_async"]

_NONE: frozenset[str] = frozenset()

# native fields that change what is asked, not how: refused toward another protocol
# rather than left out (stored prompts, MCP connectors, code containers, web search)
_ESSENTIAL: dict[str, frozenset[str]] = {
    "responses": frozenset({"prompt", "conversation", "previous_response_id"}),
    "anthropic_messages": frozenset({"mcp_servers", "container"}),
    "chat_completions": frozenset({"web_search_options"}),
}

_OFF = frozenset({"none", "off"})  # thinking levels that turn thinking off

async def sleep_async(sleep: Callable[[float], Any], seconds: float) -> float:
    """One backoff wait through the caller's ``sleep`` (a coroutine function or a plain
    one, as tests inject); returns the seconds it took, which are not the Client's work."""
    started = time.perf_counter()
    result = sleep(seconds)
    if inspect.isawaitable(result):
        await result
    return time.perf_counter() - started

log = logging.getLogger("modelwire.client")

# what an attempt that led to a step of the ladder is recorded as
_OUTCOME_OF: dict[str, AttemptOutcome] = {
    "strip_reasoning": "retried", "strip_schema": "retried", "drop_param": "retried",
    "refresh": "refreshed", "rotate": "rotated", "retry": "retried",
}

# a turn's ladder before any failure (frozen, so shared): most turns never fail
_FRESH = {False: LadderState(), True: LadderState(has_fallback=True)}
_AT_PRIMARY = StickyStart()


class Turn:
    """The books of one ``complete``/``stream`` call across attempts and models."""

    def __init__(self, settings: Settings, messages: Sequence[Any], options: Options,
                 *, stream: bool) -> None:
        self.settings = settings
        self.options = options
        if options.speed not in (None, "fast", "standard"):
            raise MessageError(f"speed must be 'fast' or 'standard', got {options.speed!r}")
        if options.extra_api is not None and options.extra_api not in API_MODES:
            raise MessageError(f"extra_api must be one of {', '.join(API_MODES)}, got {options.extra_api!r}")
        self.want_stream = stream
        # stop sequences the Client applies itself where an endpoint has none
        self.stops = stop_list(options.stop) if options.stop is not None else ()
        self.dropped: frozenset[str] = _NONE  # settings the current model answered 400 to
        self.chain = settings.chain()
        self.attempts: list[Attempt] = []
        # where this call starts: after a recent fallback, at the model that served
        self.start = settings.sticky.start() if self.chain.has_after(0) else _AT_PRIMARY
        self.position = self.start.position if self.start.position < len(self.chain.entries) else 0
        self.fell_back = False  # this call moved down the chain
        for _, skipped in self.chain.entries[:self.position]:
            self.attempts.append(Attempt(skipped.profile.name, skipped.model_id, "skipped", PRIMARY_COOLING))
        # the current model's endpoint (an attribute, not a lookup: read ~5 times a call)
        self.endpoint: Endpoint = self.chain.entries[self.position][1]
        self.upstream = settings.upstream(self.endpoint)  # the lease/encode/report cycle
        if settings.refused:
            self.dropped = frozenset(settings.refused.get(self.endpoint.name, ()))
        self.messages = prepare_conversation(messages, cache=settings.encode_cache)
        observer = settings.observer  # Client(observer=...): reports per attempt and call
        self.watch = None if observer is None or observer.reports == "failures" \
            else CallWatch(observer, settings.model, stream, self.messages)
        self.errors: list[ModelwireError] = []
        self.ladder = _FRESH[self.chain.has_after(self.position)]
        self.strip = False
        self.strip_schema = False
        self.held: HeldCredential | None = None
        self.plan_: Plan | None = None
        total = settings.timeouts.total
        self.deadline = None if total is None else time.monotonic() + total

    # ------------------------------------------------------------- planning
    def plan(self) -> Plan:
        """Lease a credential and encode the request for the current endpoint."""
        ep = self.endpoint
        if self.watch is not None:
            self.watch.attempt_began()
        self.held = self.upstream.lease()
        stream = self.want_stream or ep.profile.stream_only
        request = self.encode(ep, self.held, stream, self.strip)
        self.plan_ = Plan(request, ep.base_url, self._timeouts(ep, len(request.body)), stream, ep)
        return self.plan_

    def encode(self, ep: Endpoint, lease: HeldCredential | None, stream: bool, strip: bool,
                strip_schema: bool | None = None) -> Any:
        extra = tuple(self.options.headers.items()) if self.options.headers else ()
        if self.watch is not None:
            extra += self.watch.headers(ep.name)
        request = self.upstream.encode(self._request(ep, stream, strip, strip_schema), lease, extra)
        tags = self.options.tags
        return request if tags is None else dataclasses.replace(request, tags=tags)

    def _request(self, ep: Endpoint, stream: bool, strip: bool,
                 strip_schema: bool | None = None) -> dict[str, Any]:
        opts = self.options
        messages = _strip_reasoning(self.messages) if strip else self.messages
        request: dict[str, Any] = {"model": ep.model_id, "messages": messages, "stream": stream}
        for name in OPTION_FIELDS:
            value = getattr(opts, name)
            if value is not None:
                request[name] = value
        if self.stops and self._cuts_stops(ep):
            del request["stop"]  # applied to the answer instead (see decoder, decode_response)
        if self.dropped:
            for name in self.dropped:
                request.pop(name, None)
        if (self.strip_schema if strip_schema is None else strip_schema) and opts.tools:
            request["tools"] = _strip_schemas(opts.tools)
        thinking = opts.thinking if opts.thinking is not None else ep.thinking
        if thinking is not None:
            # "off" and "none" say the same: thinking asked off (DeepSeek, Z.AI, Kimi take
            # {"thinking": {"type": "disabled"}}; elsewhere nothing is sent)
            request["thinking"] = "none" if thinking in _OFF else thinking
        speed = opts.speed or self.settings.speed or ep.speed
        if speed == "fast":
            if ep.profile.api_mode == "anthropic_messages":
                request["speed"] = speed  # the codec sends it where profile and model have it
            else:
                _no_fast_mode(ep)
        extra = opts.extra
        api = opts.extra_api
        if api is not None:
            # the encoders refuse a non-function tool of another protocol, and native
            # fields of another protocol are left out (they have no field to go in)
            if opts.tools:
                request["metadata"] = {"source_api": api}
            if extra and ep.profile.api_mode != api:
                lost = [k for k in extra if k in _ESSENTIAL[api]]
                if lost:  # not a tuning knob: what the model is asked to do would change
                    raise UnsupportedContentError(
                        f"{lost[0]}: a setting of {protocol_name(api)} that "
                        f"{protocol_name(ep.profile.api_mode)} has no place for, and the answer "
                        f"depends on it (serve {ep.name} from an upstream that speaks "
                        f"{protocol_name(api)}, or leave it out)")
                extra = None
        if ep.extra or extra:
            request["extra"] = {**ep.extra, **(extra or {})}
            if self.dropped:
                request["extra"] = {k: v for k, v in request["extra"].items() if k not in self.dropped}
        return request

    def _timeouts(self, ep: Endpoint, body_size: int) -> Timeouts:
        t = ep.timeouts or self.settings.timeouts  # a Model's own timeout is explicit too
        if ep.timeouts is None and not self.settings.explicit_timeouts:
            if ep.profile.local:  # local servers may think for ages: no stale-stream limit
                t = self.settings.local_timeouts
            elif t.stale is not None:
                # reasoning models and very long prompts go quiet for minutes before
                # the first token (hermes: >=240 s above 50k tokens, 300 s above 100k)
                tokens = body_size // 4
                thinks = (self.options.thinking or ep.thinking) not in (None, *_OFF)
                floor = 300.0 if (thinks or tokens > 100_000) \
                    else 240.0 if tokens > 50_000 else 0.0
                if floor > t.stale:
                    t = dataclasses.replace(t, stale=floor)
        if self.deadline is not None:
            t = Timeouts(t.connect, t.read, t.stale, max(0.001, self.deadline - time.monotonic()))
        return t

    # -------------------------------------------------------------- results
    def _cuts_stops(self, ep: Endpoint) -> bool:
        """Whether the Client applies the stop sequences for ``ep`` (the Responses API has
        none; OpenAI's reasoning models reject them, by name or by a 400 naming ``stop``)."""
        return (not ep.codec.STOP_SEQUENCES or not ep.profile.takes_stop(ep.model_id)
                or "stop" in self.dropped)

    def decoder(self) -> Any:
        ep = self.endpoint
        decoder = ep.codec.StreamDecoder(issuer=ep.profile.issuer or None)
        if self.stops and self._cuts_stops(ep):
            return StopDecoder(decoder, self.stops)
        return decoder

    def http_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ModelwireError:
        return self.upstream.decode_error(status, headers, body)

    def decode_response(self, body: bytes) -> Completion:
        ep = self.endpoint
        done = ep.codec.decode_response(body, issuer=ep.profile.issuer or None)
        if self.stops and self._cuts_stops(ep):
            return cut_completion(done, self.stops)  # type: ignore[no-any-return]
        return done  # type: ignore[no-any-return]

    def succeed(self, completion: Completion, *, interrupted: bool = False,
                timing: Timing | None = None) -> Completion:
        """Record the attempt, report and release the credential, fill in the facts."""
        ep = self.endpoint
        held = self.held
        if held is not None and not interrupted:
            self.upstream.succeeded(held)
        self._record("interrupted" if interrupted else "ok", None)
        self.release()
        if self.position or self.start.probe:
            self.settings.sticky.served(self.position, fell_back=self.fell_back)
        # every field named (dataclasses.replace walks the field list on each call: it
        # showed in the gateway's per-request profile); tests/client pin that none is lost
        c = completion
        done = Completion(
            message=c.message, finish_reason=c.finish_reason, usage=c.usage,
            model=c.model or ep.model_id, provider=ep.profile.name,
            interrupted=interrupted or c.interrupted, attempts=tuple(self.attempts), id=c.id,
            native_finish_reason=c.native_finish_reason, raw=c.raw, stop_sequence=c.stop_sequence,
            price=ep.price, timing=timing,
        )
        if self.watch is not None:
            self.watch.ended(done)
        return done

    def renew_at(self) -> float | None:
        """Monotonic time of the next lease renewal (``None``: no lease to renew)."""
        held = self.held
        every = self.endpoint.creds.renew_every(held) if held is not None else None
        return None if every is None else time.monotonic() + every

    def renew(self) -> float | None:
        """Renew the lease now; returns when to renew next."""
        if self.held is not None:
            self.endpoint.creds.renew(self.held)
        return self.renew_at()

    def release(self) -> None:
        if self.held is not None:
            self.upstream.release(self.held)
            self.held = None

    def _record(self, outcome: AttemptOutcome, error: BaseException | None) -> None:
        ep = self.endpoint
        label = self.held.label if self.held is not None else None
        text = f"{type(error).__name__}: {error}" if error is not None else None
        self.attempts.append(Attempt(ep.profile.name, ep.model_id, outcome, text, label))
        if self.watch is None and error is not None and self.settings.observer is not None:
            # an observer of failures only: told from the first one on
            self.watch = CallWatch(self.settings.observer, self.settings.model, self.want_stream, ())
        if self.watch is not None:
            self.watch.attempt(ep.name, ep.profile, ep.model_id, outcome, error, label)

    # -------------------------------------------------------------- failures
    def failed_after_start(self, error: ModelwireError, partial: Completion) -> ModelwireError:
        """A failure after events reached the caller: no retry, the error carries ``partial``."""
        self._record("failed", error)
        self.release()
        self._gave_up()
        error.partial = dataclasses.replace(
            partial, provider=self.endpoint.profile.name, attempts=tuple(self.attempts)
        )
        if self.watch is not None:
            self.watch.failed(error, error.partial)
        return error

    def fail(self, error: ModelwireError) -> float:
        """Walk the ladder for ``error``: returns the seconds to wait before the next
        attempt, or raises (the error, or :class:`FallbackExhaustedError`)."""
        ep = self.endpoint
        self.errors.append(error)
        if isinstance(error, PoolExhaustedError) and error.next_available_at is None:
            # every key dead (revoked): no wait brings one back, the next model may have one
            return self._next_model(error, "failed")
        if isinstance(error, PoolExhaustedError):
            # every key cooling: like a rate limit on this model, with the pool's ETA as hint
            failure = Failure("rate_limit", provider=ep.profile.name, reason="pool exhausted",
                              retry_after=getattr(error, "retry_after", None), error=error)
            return self._apply(decide(failure, self.ladder, self.settings.retry), failure, error)
        if isinstance(error, CredentialError):  # no key here: the next model may have one
            return self._next_model(error, "failed")
        failure = classify(error, ep.profile)
        held = self.held
        if held is not None:
            self.ladder = dataclasses.replace(
                self.ladder, oauth=held.oauth, pooled=held.pooled,
                other_credential=held.pooled and ep.creds.other_available(held),
            )
        action = decide(failure, self.ladder, self.settings.retry)
        if held is not None:
            self.upstream.report(held, failure, action.kind)
        return self._apply(action, failure, error)

    def _apply(self, action: Action, failure: Failure, error: ModelwireError) -> float:
        kind = action.kind
        ep = self.endpoint
        # error text is redacted by ModelwireError; the credential appears as its label only
        log.info("%s/%s: %s (%s) -> %s%s: %s", ep.profile.name, ep.model_id, failure.kind,
                 type(error).__name__, kind, f" in {action.wait:.2f}s" if action.wait else "",
                 action.reason)
        if kind == "retry" and self.start.probe and self.position == 0 and self.ladder.has_fallback:
            kind = "fallback"  # the one probe of a cooling primary: no backoff, back at once
        if kind in ("strip_reasoning", "strip_schema") and not self._strip_changes_body(kind):
            kind = "raise"  # resending the same body can only get the same 400
        if kind == "drop_param":
            param = self.upstream.refuse(error)  # remembered for later calls too
            if param is None or param in self.dropped:
                kind = "raise"  # not a setting to do without, or dropping it did not help
            else:
                self.dropped = self.dropped | {param}
                log.warning("%s/%s does not take %r: resent without it%s", ep.profile.name, ep.model_id,
                            param, " (the stop sequences are applied to the answer)" if param == "stop" else "")
        if kind == "refresh":
            refreshed = self.held is not None and self.endpoint.creds.refresh(self.held, error)
            self.ladder = dataclasses.replace(self.ladder, refreshed=True)
            if not refreshed:
                return self.fail_again(failure, error)
        if kind == "raise":
            if failure.kind == "rate_limit" and self.held is not None and self.held.pooled:
                # every key cooling now: the pool knows when one frees up, which may be
                # later than the capped hint of this one answer (the caller's Retry-After)
                ready = ep.creds.ready_in()
                if ready is not None and ready > (getattr(error, "retry_after", None) or 0.0):
                    error.retry_after = ready  # type: ignore[attr-defined]
            self._record("failed", error)
            self.release()
            self._raise(error)
        if kind == "fallback":
            return self._next_model(error, "fell_back")
        self._record(_OUTCOME_OF[kind], error)
        self.release()
        if kind == "strip_reasoning":
            self.strip = True
            self.ladder = dataclasses.replace(self.ladder, stripped_reasoning=True)
        elif kind == "strip_schema":
            self.strip_schema = True
            self.ladder = dataclasses.replace(self.ladder, stripped_schema=True)
        elif kind == "retry":
            self.ladder = dataclasses.replace(self.ladder, retries=self.ladder.retries + 1)
        if self.deadline is not None and time.monotonic() + action.wait > self.deadline:
            self._raise(error)  # the total deadline would pass while waiting
        return float(action.wait)

    def fail_again(self, failure: Failure, error: ModelwireError) -> float:
        """The refresh did not help: decide again, now with ``refreshed`` set."""
        return self._apply(decide(failure, self.ladder, self.settings.retry), failure, error)

    def _next_model(self, error: ModelwireError, outcome: AttemptOutcome) -> float:
        self._record(outcome if self.chain.has_after(self.position) else "failed", error)
        self.release()
        if not self.chain.has_after(self.position):
            self._raise(error, exhausted=True)
        self.position += 1
        self.fell_back = True
        self.endpoint = self.chain.entries[self.position][1]
        self.upstream = self.settings.upstream(self.endpoint)
        self.strip = False
        self.dropped = frozenset(self.settings.refused.get(self.endpoint.name, ()))  # its own
        self.ladder = LadderState(has_fallback=self.chain.has_after(self.position))
        return 0.0

    def _gave_up(self, *, exhausted: bool = False) -> None:
        """No answer: the sticky books hear of it (``exhausted``: the chain ran out, so
        a fallback this call started at is no longer one to start at)."""
        if self.start.probe or (exhausted and self.start.position):
            self.settings.sticky.gave_up(self.start)

    def _raise(self, error: ModelwireError, *, exhausted: bool = False) -> NoReturn:
        """One model tried: its own error. After a fallback: every attempt's error."""
        self._gave_up(exhausted=exhausted)
        # fallbacks that could not be used are named too: else the caller sees only
        # the primary's error and never learns that its fallback was never tried
        unusable = self.chain.unusable
        if not self.fell_back and not unusable:
            if self.watch is not None:
                self.watch.failed(error)
            raise error
        skipped = self.chain.skipped if self.fell_back else unusable
        exhausted_error = FallbackExhaustedError(list(self.errors), skipped=[str(s) for s in skipped])
        if self.watch is not None:
            self.watch.failed(exhausted_error)
        raise exhausted_error from error

    def _strip_changes_body(self, kind: str) -> bool:
        plan = self.plan_
        if plan is None:
            return False
        ep = self.endpoint
        if kind == "strip_reasoning":
            stripped = self.encode(ep, self.held, plan.stream, True)
        else:
            stripped = self.encode(ep, self.held, plan.stream, self.strip, strip_schema=True)
        return bool(stripped.body != plan.request.body)


def _no_fast_mode(ep: Endpoint) -> None:
    # a speed/price knob, not content: the answer is the same without it, so it is left
    # out (never refused) and a fallback of another protocol still serves
    log.warning("%s/%s: speed 'fast' is Anthropic's fast mode; %s has none: sent without it",
                ep.profile.name, ep.model_id, protocol_name(ep.profile.api_mode))


def _strip_reasoning(messages: list[Any]) -> list[Any]:
    """Copies of the messages without provider-native reasoning blocks (signatures,
    encrypted content): what a rejected-signature 400 complains about."""
    out = []
    for msg in messages:
        if msg.get("role") == "assistant" and msg.get("reasoning_details"):
            msg = {k: v for k, v in msg.items() if k != "reasoning_details"}
        out.append(msg)
    return out


def _strip_schemas(tools: Sequence[Any]) -> list[Any]:
    """Copies of the tool specs with ``pattern``/``format`` removed from their schemas."""
    from ..providers.llamacpp import strip_grammar_keywords

    out = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            fn = {**fn, "parameters": strip_grammar_keywords(fn["parameters"])}
            tool = {**tool, "function": fn}
        out.append(tool)
    return out
