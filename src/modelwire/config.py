"""``modelwire.yaml``: one file, validated into frozen values, errors that name the key.

Where it is read from: ``load_config(path)``; else ``MODELWIRE_CONFIG``; else
``$XDG_CONFIG_HOME/modelwire/modelwire.yaml`` (``~/.config/...``) if present;
else an empty :class:`Config`. Every error is a
:class:`~modelwire.errors.ConfigError` that names the file, the key path
(``models.cheap.provider``) and what was expected; unknown keys are rejected
with a did-you-mean. YAML is imported only when a file is actually read.

Secrets never live here unless the user writes them: entries name the
environment variables that hold keys (``api_key_env``).
"""

from __future__ import annotations

import difflib
import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from .errors import ConfigError
from .types import JSONValue
from .wire.api import API_MODES

__all__ = [
    "API_MODES",
    "THINKING_LEVELS",
    "CaptureConfig",
    "Config",
    "CredentialPoolConfig",
    "FrozenDict",
    "GatewayConfig",
    "MetricsConfig",
    "ModelEntry",
    "SmartRoutingConfig",
    "TeamsConfig",
    "TracingConfig",
    "UnsupportedTools",
    "config_from_dict",
    "default_config_path",
    "load_config",
]

THINKING_LEVELS = ("low", "medium", "high", "xhigh", "max")
AUTH_STYLES = ("bearer", "x-api-key", "api-key", "none")
STRATEGIES = ("fill_first", "round_robin", "random", "least_used")
MIB = 1024 * 1024


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict that refuses changes: config values stay frozen, yet ``dataclasses.asdict``,
    ``copy.deepcopy`` and ``json.dumps`` work (a ``MappingProxyType`` breaks all three)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("config values are read-only; use dataclasses.replace")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> Any:  # deepcopy/pickle rebuild through the constructor
        return (type(self), (dict(self),))


def _frozen() -> FrozenDict:
    return FrozenDict()


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One named model under ``models:``."""

    name: str
    provider: str
    model: str
    api_mode: str | None = None
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    thinking: str | None = None
    auth_style: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    extra: Mapping[str, JSONValue] = field(default_factory=_frozen)
    speed: str | None = None  # "fast": Anthropic's fast mode, opt-in (a premium tier)


@dataclass(frozen=True, slots=True)
class SmartRoutingConfig:
    """``smart_routing:``: simple turns go to ``cheap_model`` (see :mod:`modelwire.routing`)."""

    enabled: bool = False
    cheap_model: str | None = None
    max_simple_chars: int = 160
    max_simple_words: int = 28


@dataclass(frozen=True, slots=True)
class CredentialPoolConfig:
    """``credential_pool:``: where pool state lives and the per-provider strategy."""

    store: str | None = None  # None: the default SQLite file in the user data dir
    strategies: Mapping[str, str] = field(default_factory=_frozen)
    prefix: str = "modelwire:"  # Redis key prefix (several deployments on one Redis)
    max_concurrent: int = 1  # leases per credential before sharing the least-leased one
    lease_ttl: int = 600  # seconds; long streams renew, a crashed process's leases expire

    def strategy_for(self, provider: str) -> str:
        return self.strategies.get(provider, "fill_first")


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    """``gateway.metrics:``: Prometheus metrics at ``/metrics`` (docs/guides/observability.md)."""

    # None: on when the gateway is bound to loopback or keys_env holds keys; off otherwise
    enabled: bool | None = None
    # comma-separated keys a scraper presents (Bearer); unset or empty: the gateway's own keys
    keys_env: str = "MODELWIRE_METRICS_KEYS"


@dataclass(frozen=True, slots=True)
class CaptureConfig:
    """``gateway.capture:``: the upstream exchanges of chosen requests written to ``dir``
    for debugging, redacted, until ``for_s`` after start (docs/guides/observability.md,
    "Request capture"). A request is chosen when its model is in ``models`` or its client
    key in ``keys``. Off while ``dir`` is unset or both lists are empty."""

    dir: str | None = None
    models: tuple[str, ...] = ()  # configured names or upstream model ids; globs allowed
    keys: tuple[str, ...] = ()  # virtual key names or keys_env fingerprints (env-...); globs allowed
    failing_only: bool = True  # only requests whose upstream answered an error
    for_s: float = 3600.0  # how long after the gateway starts it captures (at most a week)
    max_bytes: int = 10_000_000  # per file before it rotates
    files: int = 5  # rotated files kept
    redact: tuple[str, ...] = ()  # body field names replaced wherever they appear


@dataclass(frozen=True, slots=True)
class TracingConfig:
    """``gateway.tracing:``: OpenTelemetry spans per request, Client call and attempt."""

    enabled: bool = False
    # OTLP/HTTP traces URL (http://collector:4318/v1/traces); unset: the process's global
    # tracer provider (what opentelemetry-instrument or the embedding program set up)
    otlp_endpoint: str | None = None
    service_name: str = "modelwire"
    # model names whose upstreams get the W3C traceparent header (never a third party's)
    internal_models: tuple[str, ...] = ()
    content: bool = False  # record the messages and answers on the spans


# what the gateway does with a hosted tool (web_search...) the upstream cannot run
UnsupportedTools: TypeAlias = Literal["drop", "refuse", "map"]
_UNSUPPORTED_TOOLS: tuple[UnsupportedTools, ...] = ("drop", "refuse", "map")


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """``gateway:``: who may call ``modelwire serve`` and which ids map to which names."""

    keys_env: str = "MODELWIRE_GATEWAY_KEYS"  # comma-separated; none set -> loopback only
    # comma-separated keys for /admin/* (teams' keys, teams and spend); none set: no admin API
    admin_keys_env: str = "MODELWIRE_ADMIN_KEYS"
    aliases: Mapping[str, str] = field(default_factory=_frozen)
    # clients may ask for provider/model ids directly: true (cloud providers with a key,
    # and the emulators), false (none), or a tuple of the provider names allowed
    allow_provider_models: bool | tuple[str, ...] = True
    client_key_passthrough: bool = False  # forward the client's own provider key upstream
    max_body_bytes: int = 32 * MIB
    access_log: bool = True
    seal_secret_env: str = "MODELWIRE_SEAL_SECRET"
    # the longest server-requested wait (Retry-After, every key cooling) a request is held
    # for; longer: the client gets the 429 with Retry-After at once (its SDK retries)
    max_retry_wait: int = 30
    # drop: left out, named in x-modelwire-dropped-tools; refuse: a 400; map: the upstream's
    # own (paid) equivalent where one exists, else left out (docs/guides/codex.md)
    unsupported_tools: UnsupportedTools = "drop"
    # limits (docs/reference/limits.md): each bounds what one client can make the gateway hold
    max_connections: int | None = None  # None: from the open-file limit (gateway.limits)
    header_timeout: float = 10.0  # seconds for a request's whole head
    body_timeout: float = 30.0  # seconds without a byte of a request's body
    keep_alive_timeout: float = 5.0  # seconds an idle kept-alive connection stays open
    max_adhoc_clients: int = 256  # clients for unconfigured models and client keys (LRU)
    max_concurrent_per_model: int | None = None  # upstream requests per model; None: no cap
    queue_timeout: float = 10.0  # seconds a request waits for a model's slot, then 429
    max_json_depth: int = 128  # nesting levels of a request body
    max_schema_depth: int = 64  # nesting levels of one tool's parameter schema
    # PEM certificate chain: `modelwire serve` answers HTTPS, TLS 1.2+ (relative to this
    # file; the --ssl-certfile flag wins)
    ssl_certfile: str | None = None
    # the certificate's PEM private key (unset: inside ssl_certfile; --ssl-keyfile wins)
    ssl_keyfile: str | None = None
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    tracing: TracingConfig = field(default_factory=TracingConfig)


@dataclass(frozen=True, slots=True)
class TeamsConfig:
    """``teams:``: virtual keys, teams, budgets, rate limits and spend (the guide
    "Running the gateway for a team")."""

    # the gateway asks every request for a key (an env key or a virtual key) and meters it
    enabled: bool = False
    # sqlite:///path (unset: the credential store's SQLite file) or postgresql://...
    store: str | None = None
    # unset: in the gateway process (--workers 1) or the store's SQLite file (--workers N);
    # sqlite: that file always (several serves on one machine); redis://host:port/db
    limiter: str | None = None
    key_cache_ttl: float = 0.5  # seconds a key record is cached: a revocation takes this long
    default_max_tokens: int = 4096  # the reserved answer size of a request without max_tokens
    spend_flush_s: float = 0.5  # seconds between writes of the spend record (in batches)
    spend_queue: int = 100_000  # spend rows held while the store is slow; more are dropped


@dataclass(frozen=True, slots=True)
class Config:
    """The whole validated file. ``path`` is None for the empty default config."""

    path: str | None = None
    models: Mapping[str, ModelEntry] = field(default_factory=_frozen)
    default_model: str | None = None
    fallback: tuple[str, ...] = ()
    # seconds later calls stay on a fallback that served before one probes the
    # primary (0: every call starts at the primary); see resilience.StickyFallback
    fallback_stick_s: float = 300.0
    smart_routing: SmartRoutingConfig = field(default_factory=SmartRoutingConfig)
    credential_pool: CredentialPoolConfig = field(default_factory=CredentialPoolConfig)
    gateway: GatewayConfig = field(default_factory=GatewayConfig)
    teams: TeamsConfig = field(default_factory=TeamsConfig)
    # price rows ("provider/model-id" -> providers.prices.Price) over the built-in table
    prices: Mapping[str, Any] = field(default_factory=_frozen)


# ------------------------------------------------------------------ loading


def default_config_path() -> pathlib.Path:
    """``$XDG_CONFIG_HOME/modelwire/modelwire.yaml`` (``~/.config`` when unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return pathlib.Path(base) / "modelwire" / "modelwire.yaml"


def load_config(path: str | os.PathLike[str] | Config | None = None) -> Config:
    """Read and validate the config file (see the module docstring for where from)."""
    if isinstance(path, Config):
        return path
    if path is None:
        env = os.environ.get("MODELWIRE_CONFIG")
        if env:
            path = env
        else:
            default = default_config_path()
            if not default.is_file():
                return Config()
            path = default
    file = pathlib.Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config file: {exc.strerror or exc}") from None
    return config_from_dict(_parse_yaml(text, str(file)), path=str(file))


def _parse_yaml(text: str, where: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: invalid YAML{at}: {problem}") from None


def config_from_dict(data: object, *, path: str | None = None) -> Config:
    """Validate already-parsed data (a dict as YAML would give) into a :class:`Config`."""
    return _Validator(path).config(data)


# ------------------------------------------------------------------ validation

_TOP = ("models", "default_model", "fallback", "fallback_stick_s", "smart_routing",
        "credential_pool", "gateway", "teams", "prices")
_ENTRY = ("provider", "model", "api_mode", "base_url", "api_key_env", "thinking", "auth_style",
          "headers", "extra", "speed")
SPEEDS = ("fast",)
_ROUTING = ("enabled", "cheap_model", "max_simple_chars", "max_simple_words")
_POOL = ("store", "strategies", "prefix", "max_concurrent", "lease_ttl")
_TEAMS = ("enabled", "store", "limiter", "key_cache_ttl", "default_max_tokens",
          "spend_flush_s", "spend_queue")
_GATEWAY = ("keys_env", "admin_keys_env", "aliases", "allow_provider_models", "client_key_passthrough",
            "max_body_bytes", "access_log", "seal_secret_env", "max_retry_wait",
            "max_connections", "header_timeout", "body_timeout", "keep_alive_timeout",
            "max_adhoc_clients", "max_concurrent_per_model", "queue_timeout", "max_json_depth",
            "max_schema_depth", "unsupported_tools", "ssl_certfile", "ssl_keyfile", "metrics",
            "tracing", "capture")
_METRICS = ("enabled", "keys_env")
_CAPTURE = ("dir", "models", "keys", "failing_only", "for", "max_bytes", "files", "redact")
_TRACING = ("enabled", "otlp_endpoint", "service_name", "internal_models", "content")


class _Validator:
    def __init__(self, path: str | None) -> None:
        self.where = path or "<config>"

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: {key}: {message}")

    def mapping(self, value: object, key: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key or "(top level)", f"expected a mapping, got {_kind(value)}")
        table = cast("dict[object, Any]", value)
        for name in table:
            if not isinstance(name, str) or name not in allowed:
                close = difflib.get_close_matches(str(name), allowed, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                path = f"{key}.{name}" if key else str(name)
                raise self.fail(path, f"unknown key{hint}; expected one of {', '.join(allowed)}")
        return cast("dict[str, Any]", table)

    def string(self, value: object, key: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {_kind(value)}")
        return value.strip()

    def path(self, value: object, key: str) -> str | None:
        """A file path; a relative one is relative to the config file's folder."""
        text = self.string(value, key, optional=True)
        if text is None:
            return None
        text = os.path.expanduser(text)
        if not os.path.isabs(text) and self.where != "<config>":
            text = os.path.join(os.path.dirname(os.path.abspath(self.where)), text)
        return text

    def boolean(self, value: object, key: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {_kind(value)}")
        return value

    def integer(self, value: object, key: str, default: int) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.fail(key, f"expected a positive integer, got {_kind(value)}")
        return value

    def seconds(self, value: object, key: str, default: float) -> float:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
            raise self.fail(key, f"expected a number of seconds (0 or more), got {_kind(value)}")
        return float(value)

    def positive_seconds(self, value: object, key: str, default: float) -> float:
        """A timeout: above 0 (0 would refuse every request), at most a day."""
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 86400:
            raise self.fail(key, f"expected a number of seconds above 0 (at most 86400), got {_kind(value)}")
        return float(value)

    def optional_integer(self, value: object, key: str) -> int | None:
        return None if value is None else self.integer(value, key, 0)

    def providers_allowed(self, value: object, key: str) -> bool | tuple[str, ...]:
        """``allow_provider_models``: a boolean, or a list of provider names."""
        if value is None:
            return True
        if isinstance(value, bool):
            return value
        if not isinstance(value, list):
            raise self.fail(key, f"expected true, false or a list of provider names, got {_kind(value)}")
        return tuple(self.provider(name, f"{key}[{i}]") for i, name in enumerate(cast("list[object]", value)))

    def choice(self, value: object, key: str, choices: tuple[str, ...]) -> str | None:
        if value is None:
            return None
        if value not in choices:
            raise self.fail(key, f"expected one of {', '.join(choices)}, got {value!r}")
        return str(value)

    def str_map(self, value: object, key: str) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {_kind(value)}")
        table = cast("dict[object, object]", value)
        return {str(k): self.string(v, f"{key}.{k}") or "" for k, v in table.items()}

    # -------------------------------------------------------------- sections
    def config(self, data: object) -> Config:
        top = self.mapping(data, "", _TOP)
        models = self.models(top.get("models"))
        default = self.string(top.get("default_model"), "default_model", optional=True)
        if default is not None:
            self.model_ref(default, "default_model", models)
        fallback = self.fallback(top.get("fallback"), models)
        return Config(
            path=None if self.where == "<config>" else self.where,
            models=FrozenDict(models),
            default_model=default,
            fallback=fallback,
            fallback_stick_s=self.seconds(top.get("fallback_stick_s"), "fallback_stick_s", 300.0),
            smart_routing=self.smart_routing(top.get("smart_routing"), models),
            credential_pool=self.credential_pool(top.get("credential_pool")),
            gateway=self.gateway(top.get("gateway"), models),
            teams=self.teams(top.get("teams")),
            prices=FrozenDict(self.prices(top.get("prices"))),
        )

    def prices(self, value: object) -> dict[str, Any]:
        from .providers.prices import price_from_dict

        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail("prices", f"expected a mapping, got {_kind(value)}")
        rows = cast("dict[object, object]", value)
        out: dict[str, Any] = {}
        for key, spec in rows.items():
            if not isinstance(key, str) or "/" not in key:
                raise self.fail("prices", f"keys are provider/model-id, got {key!r}")
            if not isinstance(spec, dict):
                raise self.fail(f"prices.{key}", f"a mapping of prices, got {_kind(spec)}")
            try:
                out[key] = price_from_dict(key, cast("dict[str, Any]", spec))
            except ValueError as exc:
                raise self.fail(f"prices.{key}", str(exc)) from None
        return out

    def models(self, value: object) -> dict[str, ModelEntry]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail("models", f"expected a mapping of names to models, got {_kind(value)}")
        table = cast("dict[object, object]", value)
        return {str(name): self.entry(str(name), spec) for name, spec in table.items()}

    def entry(self, name: str, spec: object) -> ModelEntry:
        key = f"models.{name}"
        if not name.strip() or any(c.isspace() for c in name):
            raise self.fail(key, "model names must be non-empty and contain no spaces")
        self.not_a_provider_string(name, key)
        fields = self.mapping(spec, key, _ENTRY)
        if not fields:
            raise self.fail(key, "expected a mapping with at least provider and model")
        provider = self.provider(fields.get("provider"), f"{key}.provider")
        model = self.string(fields.get("model"), f"{key}.model") or ""
        api_mode = self.choice(fields.get("api_mode"), f"{key}.api_mode", API_MODES)
        base_url = self.string(fields.get("base_url"), f"{key}.base_url", optional=True)
        if base_url is not None and not base_url.startswith(("http://", "https://")):
            raise self.fail(f"{key}.base_url", f"expected an http:// or https:// URL, got {base_url!r}")
        if provider == "custom":
            for needed, val in (("base_url", base_url), ("api_mode", api_mode)):
                if val is None:
                    raise self.fail(f"{key}.{needed}", "required when provider is custom")
        elif api_mode is not None:
            from .providers.catalog import CATALOG, variant

            speaks = CATALOG[provider].api_mode
            if variant(provider, api_mode) is None:
                raise self.fail(f"{key}.api_mode", f"provider {provider!r} speaks {speaks}, not "
                                f"{api_mode}; use provider: custom for another endpoint")
        thinking = fields.get("thinking")
        if thinking is False or thinking in ("none", "off"):
            thinking = "none"  # asked off: kept, so DeepSeek's flag says disabled
        return ModelEntry(
            name=name, provider=provider, model=model, api_mode=api_mode, base_url=base_url,
            api_key_env=self.env_names(fields.get("api_key_env"), f"{key}.api_key_env"),
            thinking=thinking if thinking == "none" else self.choice(thinking, f"{key}.thinking", THINKING_LEVELS),
            auth_style=self.choice(fields.get("auth_style"), f"{key}.auth_style", AUTH_STYLES),
            headers=tuple(self.str_map(fields.get("headers"), f"{key}.headers").items()),
            extra=FrozenDict(self.extra(fields.get("extra"), f"{key}.extra")),
            speed=self.choice(fields.get("speed"), f"{key}.speed", SPEEDS),
        )

    def not_a_provider_string(self, name: str, key: str) -> None:
        # A name such as "openai/gpt-5" would shadow that provider/model string, and
        # provider/model strings never read the user's config file (so a broken file
        # cannot break them): the two must not collide. Ids clients send go through
        # gateway.aliases instead.
        from .providers.catalog import ALIASES, CATALOG

        prefix, sep, _ = name.partition("/")
        if sep and ALIASES.get(prefix.lower(), prefix.lower()) in CATALOG:
            raise self.fail(key, f"a model name cannot look like provider/model-id ({prefix!r} "
                                 "is a provider); pick another name, or map client ids with "
                                 "gateway.aliases")

    def provider(self, value: object, key: str) -> str:
        from .providers.catalog import ALIASES, CATALOG  # lazy: providers imports config

        name = self.string(value, key) or ""
        canonical = ALIASES.get(name.lower(), name.lower())
        if canonical not in CATALOG:
            close = difflib.get_close_matches(name.lower(), [*CATALOG, *ALIASES], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.fail(key, f"unknown provider {name!r}{hint}; known providers: "
                                 f"{', '.join(sorted(CATALOG))}")
        return canonical

    def env_names(self, value: object, key: str) -> tuple[str, ...]:
        if value is None:
            return ()
        given = [value] if isinstance(value, str) else value
        if not isinstance(given, list) or not all(isinstance(n, str) for n in cast("list[object]", given)):
            raise self.fail(key, f"expected a variable name or a list of them, got {_kind(value)}")
        names = cast("list[str]", given)
        for n in names:
            if not n or not all(c.isalnum() or c == "_" for c in n) or n[0].isdigit():
                raise self.fail(key, f"expected an environment variable name such as MY_KEY, got {n!r}")
        return tuple(names)

    def env_name(self, value: object, key: str, default: str) -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(key, f"expected an environment variable name, got {_kind(value)}")
        return self.env_names(value, key)[0]

    def extra(self, value: object, key: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping of body fields, got {_kind(value)}")
        return dict(cast("dict[str, Any]", value))

    def model_ref(self, ref: str, key: str, models: dict[str, ModelEntry]) -> None:
        """A reference is a configured name or a provider/model-id string."""
        if ref in models:
            return
        provider, sep, model_id = ref.partition("/")
        if sep and model_id:
            self.provider(provider, key)
            return
        close = difflib.get_close_matches(ref, list(models), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        known = ", ".join(sorted(models)) or "none"
        raise self.fail(key, f"{ref!r} is not a model name{hint} nor provider/model-id; "
                             f"configured names: {known}")

    def fallback(self, value: object, models: dict[str, ModelEntry]) -> tuple[str, ...]:
        if value is None:
            return ()
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise self.fail("fallback", f"expected a list of model names, got {_kind(value)}")
        out: list[str] = []
        for i, item in enumerate(cast("list[object]", items)):
            ref = self.string(item, f"fallback[{i}]") or ""
            self.model_ref(ref, f"fallback[{i}]", models)
            out.append(ref)
        return tuple(out)

    def smart_routing(self, value: object, models: dict[str, ModelEntry]) -> SmartRoutingConfig:
        spec = self.mapping(value, "smart_routing", _ROUTING)
        enabled = self.boolean(spec.get("enabled"), "smart_routing.enabled", False)
        cheap = self.string(spec.get("cheap_model"), "smart_routing.cheap_model", optional=True)
        if cheap is not None:
            self.model_ref(cheap, "smart_routing.cheap_model", models)
        elif enabled:
            raise self.fail("smart_routing.cheap_model", "required when smart_routing is enabled")
        return SmartRoutingConfig(
            enabled=enabled, cheap_model=cheap,
            max_simple_chars=self.integer(spec.get("max_simple_chars"),
                                          "smart_routing.max_simple_chars", 160),
            max_simple_words=self.integer(spec.get("max_simple_words"),
                                          "smart_routing.max_simple_words", 28),
        )

    def credential_pool(self, value: object) -> CredentialPoolConfig:
        spec = self.mapping(value, "credential_pool", _POOL)
        store = self.string(spec.get("store"), "credential_pool.store", optional=True)
        if store is not None and not store.startswith(("sqlite://", "redis://", "rediss://")):
            raise self.fail("credential_pool.store",
                            f"expected sqlite:///path or redis://host:port/db, got {store!r}")
        strategies = self.str_map(spec.get("strategies"), "credential_pool.strategies")
        for provider, strategy in strategies.items():
            key = f"credential_pool.strategies.{provider}"
            self.provider(provider, key)
            self.choice(strategy, key, STRATEGIES)
        prefix = self.string(spec.get("prefix"), "credential_pool.prefix", optional=True)
        return CredentialPoolConfig(
            store=store, strategies=FrozenDict(strategies),
            prefix=prefix if prefix is not None else "modelwire:",
            max_concurrent=self.integer(spec.get("max_concurrent"), "credential_pool.max_concurrent", 1),
            lease_ttl=self.integer(spec.get("lease_ttl"), "credential_pool.lease_ttl", 600),
        )

    def gateway(self, value: object, models: dict[str, ModelEntry]) -> GatewayConfig:
        spec = self.mapping(value, "gateway", _GATEWAY)
        aliases = self.str_map(spec.get("aliases"), "gateway.aliases")
        for alias, target in aliases.items():
            self.model_ref(target, f"gateway.aliases.{alias}", models)
        defaults = GatewayConfig()
        return GatewayConfig(
            keys_env=self.env_name(spec.get("keys_env"), "gateway.keys_env", defaults.keys_env),
            admin_keys_env=self.env_name(spec.get("admin_keys_env"), "gateway.admin_keys_env",
                                         defaults.admin_keys_env),
            aliases=FrozenDict(aliases),
            allow_provider_models=self.providers_allowed(spec.get("allow_provider_models"),
                                                         "gateway.allow_provider_models"),
            client_key_passthrough=self.boolean(spec.get("client_key_passthrough"),
                                                "gateway.client_key_passthrough",
                                                defaults.client_key_passthrough),
            max_body_bytes=self.integer(spec.get("max_body_bytes"), "gateway.max_body_bytes",
                                        defaults.max_body_bytes),
            access_log=self.boolean(spec.get("access_log"), "gateway.access_log",
                                    defaults.access_log),
            seal_secret_env=self.env_name(spec.get("seal_secret_env"), "gateway.seal_secret_env",
                                          defaults.seal_secret_env),
            max_retry_wait=self.integer(spec.get("max_retry_wait"), "gateway.max_retry_wait",
                                        defaults.max_retry_wait),
            unsupported_tools=cast(UnsupportedTools, self.choice(
                spec.get("unsupported_tools"), "gateway.unsupported_tools", _UNSUPPORTED_TOOLS)
                or defaults.unsupported_tools),
            ssl_certfile=self.path(spec.get("ssl_certfile"), "gateway.ssl_certfile"),
            ssl_keyfile=self.path(spec.get("ssl_keyfile"), "gateway.ssl_keyfile"),
            metrics=self.metrics(spec.get("metrics")),
            tracing=self.tracing(spec.get("tracing"), models),
            capture=self.capture(spec.get("capture")),
            **self.gateway_limits(spec, defaults),
        )

    def metrics(self, value: Any) -> MetricsConfig:
        spec = self.mapping(value, "gateway.metrics", _METRICS)
        enabled = spec.get("enabled")
        if enabled is not None and not isinstance(enabled, bool):
            raise self.fail("gateway.metrics.enabled", f"expected true or false, got {_kind(enabled)}")
        return MetricsConfig(
            enabled=enabled,
            keys_env=self.env_name(spec.get("keys_env"), "gateway.metrics.keys_env",
                                   "MODELWIRE_METRICS_KEYS"))

    def capture(self, value: object) -> CaptureConfig:
        spec = self.mapping(value, "gateway.capture", _CAPTURE)
        defaults = CaptureConfig()
        seconds = spec.get("for")
        if seconds is None:
            for_s = defaults.for_s
        elif isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
                or not 0 < seconds <= 7 * 86400:
            raise self.fail("gateway.capture.for",
                            f"expected seconds above 0, at most a week (604800), got {seconds!r}")
        else:
            for_s = float(seconds)
        return CaptureConfig(
            dir=self.path(spec.get("dir"), "gateway.capture.dir"),
            models=self.name_list(spec.get("models"), "gateway.capture.models"),
            keys=self.name_list(spec.get("keys"), "gateway.capture.keys", "key names"),
            failing_only=self.boolean(spec.get("failing_only"), "gateway.capture.failing_only", True),
            for_s=for_s,
            max_bytes=self.integer(spec.get("max_bytes"), "gateway.capture.max_bytes", defaults.max_bytes),
            files=self.integer(spec.get("files"), "gateway.capture.files", defaults.files),
            redact=self.name_list(spec.get("redact"), "gateway.capture.redact", "field names"),
        )

    def tracing(self, value: Any, models: dict[str, ModelEntry]) -> TracingConfig:
        spec = self.mapping(value, "gateway.tracing", _TRACING)
        endpoint = self.string(spec.get("otlp_endpoint"), "gateway.tracing.otlp_endpoint", optional=True)
        if endpoint is not None and not endpoint.startswith(("http://", "https://")):
            raise self.fail("gateway.tracing.otlp_endpoint",
                            f"expected an http:// or https:// URL, got {endpoint!r}")
        internal = self.name_list(spec.get("internal_models"), "gateway.tracing.internal_models")
        for i, name in enumerate(internal):
            self.model_ref(name, f"gateway.tracing.internal_models[{i}]", models)
        return TracingConfig(
            enabled=self.boolean(spec.get("enabled"), "gateway.tracing.enabled", False),
            otlp_endpoint=endpoint,
            service_name=self.string(spec.get("service_name"), "gateway.tracing.service_name",
                                     optional=True) or "modelwire",
            internal_models=internal,
            content=self.boolean(spec.get("content"), "gateway.tracing.content", False),
        )

    def name_list(self, value: object, key: str, what: str = "model names") -> tuple[str, ...]:
        """A list of names (or one name)."""
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list):
            items = cast("list[object]", value)
            names = [i for i in items if isinstance(i, str) and i]
            if len(names) == len(items):
                return tuple(names)
        raise self.fail(key, f"expected a list of {what}, got {_kind(cast(object, value))}")

    def teams(self, value: Any) -> TeamsConfig:
        spec = self.mapping(value, "teams", _TEAMS)
        defaults = TeamsConfig()
        store = self.string(spec.get("store"), "teams.store", optional=True)
        if store is not None and not store.startswith(("sqlite://", "postgresql://", "postgres://")):
            raise self.fail("teams.store",
                            f"expected sqlite:///path or postgresql://host/db, got {store!r}")
        limiter = self.string(spec.get("limiter"), "teams.limiter", optional=True)
        if limiter is not None and limiter != "sqlite" and \
                not limiter.startswith(("redis://", "rediss://")):
            raise self.fail("teams.limiter", "expected redis://host:port/db, sqlite (the "
                            f"store's file) or leave it unset, got {limiter!r}")
        if limiter == "sqlite" and store is not None and not store.startswith("sqlite://"):
            raise self.fail("teams.limiter", "sqlite keeps the counters in the store's SQLite "
                            f"file, but teams.store is {store.split('@')[-1]!r}: use redis://")
        return TeamsConfig(
            enabled=self.boolean(spec.get("enabled"), "teams.enabled", defaults.enabled),
            store=store, limiter=limiter,
            key_cache_ttl=self.positive_seconds(spec.get("key_cache_ttl"), "teams.key_cache_ttl",
                                                defaults.key_cache_ttl),
            default_max_tokens=self.integer(spec.get("default_max_tokens"),
                                            "teams.default_max_tokens", defaults.default_max_tokens),
            spend_flush_s=self.positive_seconds(spec.get("spend_flush_s"), "teams.spend_flush_s",
                                                defaults.spend_flush_s),
            spend_queue=self.integer(spec.get("spend_queue"), "teams.spend_queue",
                                     defaults.spend_queue),
        )

    def gateway_limits(self, spec: dict[str, Any], defaults: GatewayConfig) -> dict[str, Any]:
        """The ``gateway:`` keys that bound resources (docs/reference/limits.md)."""
        out: dict[str, Any] = {}
        for name in ("header_timeout", "body_timeout", "keep_alive_timeout", "queue_timeout"):
            out[name] = self.positive_seconds(spec.get(name), f"gateway.{name}", getattr(defaults, name))
        for name in ("max_adhoc_clients", "max_json_depth", "max_schema_depth"):
            out[name] = self.integer(spec.get(name), f"gateway.{name}", getattr(defaults, name))
        for name in ("max_connections", "max_concurrent_per_model"):
            out[name] = self.optional_integer(spec.get(name), f"gateway.{name}")
        return out


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
