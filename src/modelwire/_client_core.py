"""The Client's pure core: resolve the chain, prepare and encode each attempt, and
keep the books of one turn (:class:`Turn`): attempts, errors, the ladder state.

No I/O happens here except reading the config file and starting the
in-process emulator on demand; :mod:`modelwire.client` drives the HTTP.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from ._client_creds import CredentialSource, Held, source_for
from .codecs._target import Target
from .completion import Attempt, Completion
from .errors import (
    ConfigError,
    CredentialError,
    FallbackExhaustedError,
    ModelwireError,
    PoolExhaustedError,
    ProviderError,
)
from .messages import prepare_conversation
from .resilience import Failure, FallbackChain, LadderState, classify, decide
from .transport import Timeouts

if TYPE_CHECKING:
    from .codecs._target import EncodedRequest
    from .providers.profile import ProviderProfile
    from .resilience import RetryPolicy

__all__ = ["Endpoint", "Options", "Plan", "Settings", "Turn"]

log = logging.getLogger("modelwire.client")

_OPTION_FIELDS = ("tools", "tool_choice", "max_tokens", "temperature", "top_p", "stop",
                  "response_format", "parallel_tool_calls")


@dataclass(frozen=True, slots=True)
class Options:
    """One call's arguments (``complete``/``stream``), as given."""

    tools: list[Any] | None = None
    tool_choice: Any = None
    thinking: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: Any = None
    response_format: dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    extra: dict[str, Any] | None = None
    headers: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One resolved model of the chain, ready to encode for."""

    name: str  # what was asked for ("anthropic/claude-sonnet-4-6", a config name)
    profile: ProviderProfile
    model_id: str
    base_url: str
    codec: ModuleType
    creds: CredentialSource = field(repr=False)
    thinking: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()  # from the config entry


@dataclass(frozen=True, slots=True)
class Plan:
    request: EncodedRequest
    base_url: str
    timeouts: Timeouts
    stream: bool
    endpoint: Endpoint


class Settings:
    """What the Client was built with, and the resolution of model strings."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        api_mode: str | None,
        fallback: tuple[str, ...] | list[str],
        config: Any,
        timeout: float | Timeouts | None,
        headers: Mapping[str, str] | None,
        retry: RetryPolicy | None,
        pools: Any = None,
    ) -> None:
        from .resilience import RetryPolicy

        self.pools = pools
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.api_mode = api_mode
        self._fallback: tuple[str, ...] | None = tuple(fallback) or None
        self._config_arg = config
        self._config: Any = None
        self._config_loaded = False
        self.explicit_timeouts = timeout is not None
        self.timeouts = _timeouts(timeout)
        self.headers = tuple((headers or {}).items())
        self.retry = retry or RetryPolicy()
        self._endpoints: dict[str, Endpoint] = {}
        self._chain: FallbackChain[Endpoint] | None = None
        self._lock = threading.Lock()

    # -------------------------------------------------------------- config
    def config(self, *, strict: bool) -> Any:
        """The config, loaded once. ``strict=False``: a broken *user* config file is
        ignored (a ``provider/model`` client must work whatever that file holds)."""
        if not self._config_loaded:
            arg = self._config_arg
            if arg is not None and not isinstance(arg, (str, os.PathLike)):
                self._config = arg  # already loaded
            else:
                from .config import load_config

                try:
                    self._config = load_config(arg)
                except ConfigError:
                    if strict or arg is not None:
                        raise
                    self._config = None
            self._config_loaded = True
        return self._config

    def fallback(self) -> tuple[str, ...]:
        """The argument wins over the config's ``fallback:`` (looked up once)."""
        if self._fallback is None:
            config = self.config(strict=False) if self._maybe_config() else None
            self._fallback = tuple(getattr(config, "fallback", ()) or ())
        return self._fallback

    def _maybe_config(self) -> bool:
        """Whether a config could exist (so a plain client does not import YAML)."""
        if self._config_arg is not None or os.environ.get("MODELWIRE_CONFIG"):
            return True
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        return os.path.exists(os.path.join(base, "modelwire", "modelwire.yaml"))

    def _pool_config(self) -> Any:
        return self.config(strict=False) if self._maybe_config() else None

    # ---------------------------------------------------------- resolution
    def endpoint(self, name: str, *, primary: bool) -> Endpoint:
        with self._lock:
            cached = self._endpoints.get(name) if not primary else self._endpoints.get("\0")
            if cached is not None:
                return cached
            made = self._make_endpoint(name, primary=primary)
            self._endpoints["\0" if primary else name] = made
            return made

    def _make_endpoint(self, name: str, *, primary: bool) -> Endpoint:
        from .codecs import codec_for
        from .providers import resolve

        # resolve() reads the config itself when the name needs it (config names may not
        # look like provider/model, so a provider/model client never parses the file)
        config = self._config_arg
        resolved = resolve(
            name, config=config,
            base_url=self.base_url if primary else None,
            api_mode=self.api_mode if primary else None,
        )
        profile = resolved.profile
        base_url = resolved.base_url or _default_base_url(profile)
        creds = source_for(
            profile, api_key=self.api_key if primary else None,
            api_key_env=tuple(resolved.api_key_env), config=self._pool_config, pools=self.pools,
        )
        return Endpoint(
            name=name, profile=profile, model_id=resolved.model_id, base_url=base_url,
            codec=codec_for(profile.api_mode), creds=creds,
            thinking=resolved.thinking, extra=dict(resolved.extra),
            headers=tuple(resolved.headers),
        )

    def chain(self) -> FallbackChain[Endpoint]:
        """The resolved chain (built once: resolution is pure and the inputs are fixed)."""
        chain = self._chain
        if chain is None:
            chain = self._chain = FallbackChain(
                self.model, self.fallback(),
                lambda n: self.endpoint(n, primary=(n == self.model)),
                key=lambda e: (e.profile.name, e.base_url, e.model_id),
            )
        return chain


def _timeouts(timeout: float | Timeouts | None) -> Timeouts:
    if timeout is None:
        return Timeouts()
    if isinstance(timeout, Timeouts):
        return timeout
    value = float(timeout)
    return Timeouts(connect=min(value, 15.0), read=value, stale=value)


def _default_base_url(profile: ProviderProfile) -> str:
    """Only for rows whose URL is known at run time (``resolve`` fills the rest)."""
    if profile.name.startswith("emulator"):
        return _local_emulator_url(profile.api_mode)
    raise ConfigError(f"provider {profile.name!r} needs a base_url")


def _local_emulator_url(api_mode: str) -> str:
    """The process's in-process emulator (one per process, started on first use,
    stopped at exit), for ``emulator/...`` models with no base URL configured."""
    from .emulator import shared_emulator

    emu = shared_emulator()
    if api_mode == "anthropic_messages":
        return emu.anthropic_base_url()
    return emu.openai_base_url()


# ------------------------------------------------------------------------ the turn
class Turn:
    """The books of one ``complete``/``stream`` call across attempts and models."""

    def __init__(self, settings: Settings, messages: list[Any], options: Options,
                 *, stream: bool) -> None:
        self.settings = settings
        self.options = options
        self.want_stream = stream
        self.chain = settings.chain()
        self.position = 0
        self.messages = prepare_conversation(messages)
        self.attempts: list[Attempt] = []
        self.errors: list[ModelwireError] = []
        self.ladder = LadderState(has_fallback=self.chain.has_after(0))
        self.strip = False
        self.strip_schema = False
        self.held: Held | None = None
        self.plan_: Plan | None = None
        total = settings.timeouts.total
        self.deadline = None if total is None else time.monotonic() + total

    @property
    def endpoint(self) -> Endpoint:
        return self.chain.entries[self.position][1]

    # ------------------------------------------------------------- planning
    def plan(self) -> Plan:
        """Lease a credential and encode the request for the current endpoint."""
        ep = self.endpoint
        self.held = ep.creds.acquire()
        stream = self.want_stream or ep.profile.stream_only
        request = self._encode(ep, self.held.secret, stream, self.strip)
        self.plan_ = Plan(request, ep.base_url, self._timeouts(ep, len(request.body)), stream, ep)
        return self.plan_

    def _encode(self, ep: Endpoint, secret: str | None, stream: bool, strip: bool,
                strip_schema: bool | None = None) -> Any:
        headers = ep.headers + self.settings.headers + tuple((self.options.headers or {}).items())
        target = Target(ep.profile, ep.model_id, secret, ep.base_url, headers)
        return ep.codec.encode_request(self._request(ep, stream, strip, strip_schema), target)

    def _request(self, ep: Endpoint, stream: bool, strip: bool,
                 strip_schema: bool | None = None) -> dict[str, Any]:
        opts = self.options
        messages = _strip_reasoning(self.messages) if strip else self.messages
        request: dict[str, Any] = {"model": ep.model_id, "messages": messages, "stream": stream}
        for name in _OPTION_FIELDS:
            value = getattr(opts, name)
            if value is not None:
                request[name] = value
        if (self.strip_schema if strip_schema is None else strip_schema) and opts.tools:
            request["tools"] = _strip_schemas(opts.tools)
        thinking = opts.thinking if opts.thinking is not None else ep.thinking
        if thinking is not None:
            request["thinking"] = thinking
        if ep.extra or opts.extra:
            request["extra"] = {**ep.extra, **(opts.extra or {})}
        return request

    def _timeouts(self, ep: Endpoint, body_size: int) -> Timeouts:
        t = self.settings.timeouts
        if not self.settings.explicit_timeouts:
            if ep.profile.local:
                t = dataclasses.replace(t, stale=None)  # local servers may think for ages
            elif t.stale is not None:
                # reasoning models and very long prompts go quiet for minutes before
                # the first token (hermes: >=240 s above 50k tokens, 300 s above 100k)
                tokens = body_size // 4
                floor = 300.0 if (self.options.thinking or ep.thinking or tokens > 100_000) \
                    else 240.0 if tokens > 50_000 else 0.0
                if floor > t.stale:
                    t = dataclasses.replace(t, stale=floor)
        if self.deadline is not None:
            t = dataclasses.replace(t, total=max(0.001, self.deadline - time.monotonic()))
        return t

    # -------------------------------------------------------------- results
    def decoder(self) -> Any:
        ep = self.endpoint
        return ep.codec.StreamDecoder(issuer=ep.profile.issuer or None)

    def http_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ModelwireError:
        ep = self.endpoint
        error = ep.codec.decode_error(status, headers, body)
        if isinstance(error, ProviderError):
            error.provider = error.provider or ep.profile.name
            error.model = error.model or ep.model_id
        return error

    def decode_response(self, body: bytes) -> Completion:
        ep = self.endpoint
        return ep.codec.decode_response(body, issuer=ep.profile.issuer or None)  # type: ignore[no-any-return]

    def succeed(self, completion: Completion, *, interrupted: bool = False) -> Completion:
        """Record the attempt, report and release the credential, fill in the facts."""
        ep = self.endpoint
        held = self.held
        if held is not None and not interrupted:
            ep.creds.succeeded(held)
        self._record("interrupted" if interrupted else "ok", None)
        self.release()
        return dataclasses.replace(
            completion, provider=ep.profile.name, model=completion.model or ep.model_id,
            attempts=tuple(self.attempts), interrupted=interrupted or completion.interrupted,
        )

    def release(self) -> None:
        if self.held is not None:
            self.endpoint.creds.release(self.held)
            self.held = None

    def _record(self, outcome: Any, error: BaseException | None) -> None:
        ep = self.endpoint
        label = self.held.label if self.held is not None else None
        text = f"{type(error).__name__}: {error}" if error is not None else None
        self.attempts.append(Attempt(ep.profile.name, ep.model_id, outcome, text, label))

    # -------------------------------------------------------------- failures
    def failed_after_start(self, error: ModelwireError, partial: Completion) -> ModelwireError:
        """A failure after events reached the caller: no retry, the error carries ``partial``."""
        self._record("failed", error)
        self.release()
        error.partial = dataclasses.replace(
            partial, provider=self.endpoint.profile.name, attempts=tuple(self.attempts)
        )
        return error

    def fail(self, error: ModelwireError) -> float:
        """Walk the ladder for ``error``: returns the seconds to wait before the next
        attempt, or raises (the error, or :class:`FallbackExhaustedError`)."""
        ep = self.endpoint
        self.errors.append(error)
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
            ep.creds.failed(held, failure, action.kind)
        return self._apply(action, failure, error)

    def _apply(self, action: Any, failure: Failure, error: ModelwireError) -> float:
        kind = action.kind
        ep = self.endpoint
        # error text is redacted by ModelwireError; the credential appears as its label only
        log.info("%s/%s: %s (%s) -> %s%s", ep.profile.name, ep.model_id, failure.kind,
                 type(error).__name__, kind, f" in {action.wait:.2f}s" if action.wait else "")
        if kind in ("strip_reasoning", "strip_schema") and not self._strip_changes_body(kind):
            kind = "raise"  # resending the same body can only get the same 400
        if kind == "refresh":
            refreshed = self.held is not None and self.endpoint.creds.refresh(self.held, error)
            self.ladder = dataclasses.replace(self.ladder, refreshed=True)
            if not refreshed:
                return self.fail_again(failure, error)
        if kind == "raise":
            self._record("failed", error)
            self.release()
            self._raise(error)
        if kind == "fallback":
            return self._next_model(error, "fell_back")
        outcome = {"strip_reasoning": "retried", "strip_schema": "retried",
                   "refresh": "refreshed", "rotate": "rotated", "retry": "retried"}[kind]
        self._record(outcome, error)
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

    def _next_model(self, error: ModelwireError, outcome: Any) -> float:
        self._record(outcome if self.chain.has_after(self.position) else "failed", error)
        self.release()
        if not self.chain.has_after(self.position):
            self._raise(error)
        self.position += 1
        self.strip = False
        self.ladder = LadderState(has_fallback=self.chain.has_after(self.position))
        return 0.0

    def _raise(self, error: ModelwireError) -> NoReturn:
        """The primary alone: its own error. After a fallback: every attempt's error."""
        if self.position == 0:
            raise error
        raise FallbackExhaustedError(list(self.errors)) from error

    def _strip_changes_body(self, kind: str) -> bool:
        plan = self.plan_
        if plan is None:
            return False
        ep = self.endpoint
        secret = self.held.secret if self.held is not None else None
        if kind == "strip_reasoning":
            stripped = self._encode(ep, secret, plan.stream, True)
        else:
            stripped = self._encode(ep, secret, plan.stream, self.strip, strip_schema=True)
        return bool(stripped.body != plan.request.body)


def _strip_reasoning(messages: list[Any]) -> list[Any]:
    """Copies of the messages without provider-native reasoning blocks (signatures,
    encrypted content): what a rejected-signature 400 complains about."""
    out = []
    for msg in messages:
        if msg.get("role") == "assistant" and msg.get("reasoning_details"):
            msg = {k: v for k, v in msg.items() if k != "reasoning_details"}
        out.append(msg)
    return out


def _strip_schemas(tools: list[Any]) -> list[Any]:
    """Copies of the tool specs with ``pattern``/``format`` removed from their schemas."""
    from .providers.llamacpp import strip_grammar_keywords

    out = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            fn = {**fn, "parameters": strip_grammar_keywords(fn["parameters"])}
            tool = {**tool, "function": fn}
        out.append(tool)
    return out
