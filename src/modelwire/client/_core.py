"""The Client's settings and model resolution: what a Client was built with
(:class:`Settings`), each resolved model of the fallback chain (:class:`Endpoint`),
one call's arguments (:class:`Options`) and one attempt's plan (:class:`Plan`).

No I/O happens here except reading the config file and starting the in-process
emulator on demand; :mod:`._turn` keeps each call's books and
:mod:`modelwire.client` drives the HTTP.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..model import Model, as_model
from ..resilience import FallbackChain, StickyFallback
from ..transport import Timeouts
from ._creds import CredentialSource, source_for

if TYPE_CHECKING:
    from ..codecs import Codec
    from ..codecs.cache import EncodeCache
    from ..providers.prices import Price
    from ..providers.profile import ProviderProfile
    from ..resilience import RetryPolicy
    from ..wire import EncodedRequest
    from .upstream import Upstream

__all__ = ["OPTION_FIELDS", "Endpoint", "Options", "Plan", "Settings"]

log = logging.getLogger("modelwire.client")

OPTION_FIELDS = ("tools", "tool_choice", "max_tokens", "temperature", "top_p", "stop",
                  "response_format", "parallel_tool_calls")


@dataclass(slots=True)
class Options:
    """One call's arguments (``complete``/``stream``), as given. Never changed once made;
    not frozen because a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, and one is made per call."""

    tools: Sequence[Any] | None = None
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
    extra_api: str | None = None  # the protocol extra and non-function tools are written for
    speed: str | None = None  # "fast": Anthropic's fast mode where the model has it
    tags: Mapping[str, str] | None = None  # EncodedRequest.tags of every attempt: never sent


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One resolved model of the chain, ready to encode for."""

    name: str  # what was asked for ("anthropic/claude-sonnet-4-6", a config name)
    profile: ProviderProfile
    model_id: str
    base_url: str
    codec: Codec
    creds: CredentialSource = field(repr=False)
    thinking: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()  # from the config entry and its Model
    speed: str | None = None  # from the config entry
    timeouts: Timeouts | None = None  # its Model's own (None: the Client's)
    price: Price | None = None  # its published price, for Completion.cost (None: unknown)


@dataclass(slots=True)
class Plan:  # one per attempt; never changed once made (not frozen: see Options)
    request: EncodedRequest
    base_url: str
    timeouts: Timeouts
    stream: bool
    endpoint: Endpoint


class Settings:
    """What the Client was built with, and the resolution of model strings."""

    def __init__(
        self,
        model: str | Model,
        *,
        base_url: str | None,
        api_key: str | None,
        api_mode: str | None,
        fallback: Sequence[str | Model],
        config: Any,
        timeout: float | Timeouts | None,
        headers: Mapping[str, str] | None,
        retry: RetryPolicy | None,
        pools: Any = None,
        speed: str | None = None,
        fallback_stick_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        strict_fallbacks: bool = True,
        prices: Mapping[str, Any] | None = None,
        encode_cache: EncodeCache | None = None,
    ) -> None:
        from ..codecs.cache import EncodeCache
        from ..resilience import RetryPolicy

        if speed not in (None, "fast"):
            raise ConfigError(f"speed must be 'fast' or None, got {speed!r}")
        if fallback_stick_s is not None and not fallback_stick_s >= 0:
            raise ConfigError(f"fallback_stick_s must be 0 or more seconds, got {fallback_stick_s!r}")
        self.speed = speed
        self._stick_s = fallback_stick_s
        self._clock = clock
        self._sticky: StickyFallback | None = None

        self.pools = pools
        self.encode_cache = EncodeCache() if encode_cache is None else encode_cache
        self.observer: Any = None  # Client(observer=...): see modelwire.observe
        # settings a model answered 400 to ("does not take"), by endpoint name: later calls
        # leave them out from the start instead of paying the 400 again
        self.refused: dict[str, set[str]] = {}
        self.primary = _primary(model, base_url, api_key, api_mode)
        self.model = self.primary.name
        self.strict_fallbacks = strict_fallbacks
        self._prices_arg = prices
        self._prices: dict[str, Price] | None = None
        self._fallback: tuple[Model, ...] | None = self._entries(fallback) or None
        self._config_arg = config
        self._config: Any = None
        self._config_loaded = False
        self.explicit_timeouts = timeout is not None
        self.timeouts = _timeouts(timeout)
        # what a local server's requests use (made once, not per request)
        self.local_timeouts = replace(self.timeouts, stale=None)
        self.headers = tuple((headers or {}).items())
        self.retry = retry or RetryPolicy()
        self._endpoints: dict[Model | str, Endpoint] = {}
        # each endpoint's Upstream, by the endpoint's identity (endpoints live as long as
        # these settings: they are made once and kept in _endpoints)
        self._upstreams: dict[int, Upstream] = {}
        self.transport: Callable[[], Any] | None = None  # () -> the Client's transport
        self._chain: FallbackChain[Model, Endpoint] | None = None
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
                from ..config import load_config

                try:
                    self._config = load_config(arg)
                except ConfigError:
                    if strict or arg is not None:
                        raise
                    self._config = None
            self._config_loaded = True
        return self._config

    def fallback(self) -> tuple[Model, ...]:
        """The argument wins over the config's ``fallback:`` (looked up once)."""
        if self._fallback is None:
            config = self.config(strict=False) if self._maybe_config() else None
            self._fallback = self._entries(getattr(config, "fallback", ()) or ())
        return self._fallback

    def _entries(self, fallback: Any) -> tuple[Model, ...]:
        """Fallback entries as Models; the primary's bare name means the primary itself
        (so the chain skips it as a repeat instead of resolving it without its settings)."""
        bare = Model(self.primary.name)
        return tuple(self.primary if as_model(f) == bare else as_model(f) for f in fallback)

    @property
    def sticky(self) -> StickyFallback:
        """Where calls start in the chain (made once; the argument wins over the
        config's ``fallback_stick_s``, default 300 s)."""
        sticky = self._sticky
        if sticky is None:
            window = self._stick_s
            if window is None:
                config = self.config(strict=False) if self._maybe_config() else None
                window = float(getattr(config, "fallback_stick_s", 300.0))
            with self._lock:
                if self._sticky is None:
                    self._sticky = StickyFallback(window, self._clock)
                sticky = self._sticky
        return sticky

    def _maybe_config(self) -> bool:
        """Whether a config could exist (so a plain client does not import YAML)."""
        if self._config_arg is not None or os.environ.get("MODELWIRE_CONFIG"):
            return True
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        return os.path.exists(os.path.join(base, "modelwire", "modelwire.yaml"))

    def prices(self) -> dict[str, Price]:
        """Price rows that win over the built-in table: the config's ``prices:``, then
        the argument's (``provider/model-id`` -> a Price or its dict)."""
        if self._prices is None:
            from ..providers.prices import Price, price_from_dict

            config = self.config(strict=False) if self._maybe_config() else None
            rows: dict[str, Any] = dict(getattr(config, "prices", None) or {})
            rows.update(self._prices_arg or {})
            try:
                self._prices = {k: v if isinstance(v, Price) else price_from_dict(k, v)
                                for k, v in rows.items()}
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        return self._prices

    def _pool_config(self) -> Any:
        return self.config(strict=False) if self._maybe_config() else None

    # ---------------------------------------------------------- resolution
    def endpoint(self, entry: str | Model, *, primary: bool) -> Endpoint:
        """The resolved endpoint of ``entry`` (``primary``: the Client's own model, with
        its settings, whatever ``entry`` says)."""
        key: Model | str = "\0" if primary else as_model(entry)
        cached = self._endpoints.get(key)  # made once; a dict read needs no lock
        if cached is not None:
            return cached
        with self._lock:
            cached = self._endpoints.get(key)
            if cached is not None:
                return cached
            made = self._make_endpoint(self.primary if primary else as_model(entry))
            self._endpoints[key] = made
            return made

    def _make_endpoint(self, entry: Model) -> Endpoint:
        from ..codecs import codec_for
        from ..providers.prices import price_for
        from .resolution import resolve

        # resolve() reads the config itself when the name needs it (config names may not
        # look like provider/model, so a provider/model client never parses the file)
        config = self._config_arg
        resolved = resolve(entry.name, config=config, base_url=entry.base_url,
                           api_mode=entry.api_mode)
        profile = resolved.profile
        base_url = resolved.base_url or _default_base_url(profile)
        if not profile.issuer:
            # reasoning blocks carry the endpoint that sent them, never a codec's default
            # ("openai" for any Chat Completions server): a profile made without one
            # gets its name, or for a custom endpoint one from its URL
            issuer = f"custom:{base_url}" if profile.name == "custom" else profile.name
            profile = replace(profile, issuer=issuer)
        key_env = (entry.api_key_env,) if entry.api_key_env else tuple(resolved.api_key_env)
        creds = source_for(profile, api_key=entry.api_key, api_key_env=key_env,
                           config=self._pool_config, pools=self.pools)
        return Endpoint(
            name=entry.name, profile=profile, model_id=resolved.model_id, base_url=base_url,
            codec=codec_for(profile.api_mode), creds=creds,
            thinking=entry.thinking or resolved.thinking, extra=dict(resolved.extra),
            headers=tuple(resolved.headers) + entry.headers, speed=resolved.speed,
            timeouts=None if entry.timeout is None else _timeouts(entry.timeout),
            price=price_for(profile.name, resolved.model_id, self.prices()),
        )

    def upstream(self, endpoint: Endpoint) -> Upstream:
        """The :class:`~modelwire.client.upstream.Upstream` of a resolved endpoint (made once)."""
        up = self._upstreams.get(id(endpoint))
        if up is None:
            from .upstream import Upstream

            up = self._upstreams.setdefault(id(endpoint), Upstream(self, endpoint, self.transport))
        return up

    def upstreams(self) -> tuple[Upstream, ...]:
        """The Upstreams of every endpoint resolved so far (the primary first)."""
        return tuple(self.upstream(ep) for ep in list(self._endpoints.values()))

    def chain(self) -> FallbackChain[Model, Endpoint]:
        """The resolved chain (built once: resolution is pure and the inputs are fixed).
        ``strict_fallbacks``: a fallback that does not resolve raises ConfigError naming
        it; otherwise it is skipped with one warning, and the chain keeps the reason."""
        chain = self._chain
        if chain is None:
            chain = FallbackChain(
                self.primary, self.fallback(),
                lambda m: self.endpoint(m, primary=m is self.primary),
                key=lambda e: (e.profile.name, e.base_url, e.model_id),
                label=lambda m: m.name, strict=self.strict_fallbacks,
            )
            for skipped in chain.unusable:  # built once per Client: warned once
                log.warning("fallback %s is skipped: %s", skipped.model, skipped.reason)
            self._chain = chain
        return chain


def _primary(model: str | Model, base_url: str | None, api_key: str | None,
             api_mode: str | None) -> Model:
    """The Client's own model: a :class:`Model`, or a string with the Client's settings."""
    if not isinstance(model, Model):
        if not isinstance(model, str):
            raise ConfigError(f"model must be a string or a modelwire.Model, got "
                              f"{type(model).__name__}")
        return Model(model, base_url=base_url, api_mode=api_mode,  # type: ignore[arg-type]
                     api_key=api_key)
    if base_url is not None or api_key is not None or api_mode is not None:
        # two places for one setting: which one wins would be a guess
        raise ConfigError(f"{model.name}: give base_url, api_key and api_mode on the Model "
                          "or to the Client, not both")
    return model


def _timeouts(timeout: float | Timeouts | None) -> Timeouts:
    if timeout is None:
        return Timeouts()
    if isinstance(timeout, Timeouts):
        return timeout
    value = float(timeout)
    return Timeouts(connect=min(value, 15.0), read=value, stale=value)


def _default_base_url(profile: ProviderProfile) -> str:
    """Only for rows whose URL is known at run time (``resolve`` fills the rest)."""
    if profile.emulated:
        return _local_emulator_url(profile.api_mode)
    raise ConfigError(f"provider {profile.name!r} needs a base_url")


def _local_emulator_url(api_mode: str) -> str:
    """The process's in-process emulator (one per process, started on first use,
    stopped at exit), for ``emulator/...`` models with no base URL configured."""
    from ..emulator import shared_emulator

    emu = shared_emulator()
    if api_mode == "anthropic_messages":
        return emu.anthropic_base_url()
    return emu.openai_base_url()
