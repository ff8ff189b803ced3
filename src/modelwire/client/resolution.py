"""From a model string to one upstream: :func:`resolve`.

Rules, in order:

1. A model name from the config file is looked up first (``cheap``,
   ``claude``, ``team/fast``...). Names cannot take the form of a
   ``provider/model`` string (config validation refuses ``openai/x`` as a
   name), so a config name and a provider string never collide.
2. Otherwise ``provider/model-id``, split at the first ``/``:
   ``openrouter/deepseek/deepseek-chat`` sends ``deepseek/deepseek-chat`` to
   OpenRouter. Provider aliases (``kimi``, ``glm``, ``google``...) work too.
3. ``custom/<model-id>`` targets any endpoint; it needs ``base_url`` and
   ``api_mode`` (arguments, or the config entry).
4. ``emulator/<model>`` speaks Chat Completions; ``emulator-anthropic/<model>``
   and ``emulator-responses/<model>`` (or ``api_mode=``) pick the other two
   protocols. Their base URL stays empty: the Client fills it.
5. ``api_mode=`` on a provider that serves several protocols picks that row
   (``openai/gpt-5`` + ``responses`` -> ``openai-responses``; see
   ``catalog.VARIANTS``); any other mismatch is a ConfigError.

Base URLs follow each SDK's convention: OpenAI-style ones include ``/v1``,
Anthropic-style ones do not; a trailing ``/v1`` on an Anthropic base is
tolerated and stripped (the codec appends ``/v1/messages``).

The user config file is read only when the string is not a ``provider/model``
form, so a broken config file never breaks a ``provider/model`` client.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..providers import ProviderProfile, get_profile
from ..providers.catalog import ALIASES, CATALOG, RUNTIME_BASE_URL, variant
from ..providers.emulator import emulator_profile
from ..wire.api import API_MODES

if TYPE_CHECKING:
    from ..config import Config, ModelEntry

__all__ = ["ResolvedModel", "resolve"]



@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """One upstream, ready for a Client: the profile, the id sent upstream, and settings.

    ``name`` is what the caller asked for (a config name or the model string);
    ``base_url`` is the effective one ("" for emulator rows: the Client fills it);
    ``api_key_env`` the variables to read the key from, in priority order;
    ``extra`` body fields from the config entry (merged into every request).
    """

    name: str
    profile: ProviderProfile
    model_id: str
    thinking: str | None = None
    base_url: str = ""
    api_key_env: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    headers: tuple[tuple[str, str], ...] = ()
    speed: str | None = None  # the config entry's "fast" (Anthropic fast mode), opt-in

    @property
    def provider(self) -> str:
        return self.profile.name

    @property
    def label(self) -> str:
        """``provider/model-id``, the way people write it."""
        return f"{self.profile.name}/{self.model_id}"

    @property
    def signature(self) -> tuple[str, str, str, str]:
        """What makes two resolutions the same upstream (model, provider, URL, protocol)."""
        return (self.model_id, self.profile.name, self.base_url, self.profile.api_mode)


def resolve(
    model: str,
    *,
    config: Config | str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    api_mode: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedModel:
    """Resolve a model string (see the module docstring for the rules)."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigError("model must be a non-empty string such as 'openai/gpt-5-mini' "
                          "or a model name from modelwire.yaml")
    model = model.strip()
    env = os.environ if environ is None else environ
    if api_mode is not None and api_mode not in API_MODES:
        raise ConfigError(f"api_mode must be one of {', '.join(API_MODES)}, got {api_mode!r}")
    loaded = _config_for(model, config)
    if loaded is not None and model in loaded.models:
        return _from_entry(model, loaded.models[model], base_url, api_mode, env)
    provider, sep, model_id = model.partition("/")
    if not sep or not model_id:
        known = sorted(loaded.models) if loaded is not None else []
        where = f" in {loaded.path}" if loaded is not None and loaded.path else ""
        names = f"; configured names{where}: {', '.join(known)}" if known else \
            f"; no model names configured{where}"
        raise ConfigError(f"model {model!r} is neither provider/model-id "
                          f"(e.g. 'anthropic/claude-sonnet-4-6') nor a configured name{names}")
    return _build(model, get_profile(provider), model_id, base_url=base_url, api_mode=api_mode,
                  environ=env)


def _config_for(model: str, config: Config | str | os.PathLike[str] | None) -> Config | None:
    if config is None:
        provider, sep, _ = model.partition("/")
        key = provider.strip().lower()
        if sep and (ALIASES.get(key, key) in CATALOG):
            # a provider/model string: never touch the user's config file, nor import
            # the config module
            return None
    from ..config import Config, load_config

    if isinstance(config, Config):
        return config
    return load_config(config)


def _from_entry(
    name: str, entry: ModelEntry, base_url: str | None, api_mode: str | None,
    environ: Mapping[str, str],
) -> ResolvedModel:
    resolved = _build(
        name, get_profile(entry.provider), entry.model,
        base_url=base_url or entry.base_url, api_mode=api_mode or entry.api_mode,
        thinking=entry.thinking, api_key_env=entry.api_key_env, extra=dict(entry.extra),
        headers=entry.headers, environ=environ,
    )
    if entry.auth_style is not None:  # e.g. an Anthropic-style endpoint that wants Bearer
        profile = dataclasses.replace(resolved.profile, auth_style=entry.auth_style)
        resolved = dataclasses.replace(resolved, profile=profile)
    if getattr(entry, "speed", None):
        resolved = dataclasses.replace(resolved, speed=entry.speed)
    return resolved


def _build(
    name: str, profile: ProviderProfile, model_id: str, *, base_url: str | None,
    api_mode: str | None, environ: Mapping[str, str], thinking: str | None = None,
    api_key_env: tuple[str, ...] = (), extra: dict[str, Any] | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> ResolvedModel:
    if profile.name == "custom":
        profile = _custom_profile(model_id, base_url, api_mode, profile)
    elif api_mode and api_mode != profile.api_mode:
        other = variant(profile.name, api_mode)
        if other is None:
            raise ConfigError(
                f"provider {profile.name!r} speaks {profile.api_mode}, not {api_mode}; "
                "use custom/<model-id> with base_url and api_mode for another endpoint")
        profile = CATALOG[other]
    url = base_url or profile.default_base_url(environ)
    url = normalize_base_url(url, profile.api_mode) if url else ""
    if profile.emulated and url:
        profile = emulator_profile(profile, url)
    if not url and profile.name not in RUNTIME_BASE_URL:
        raise ConfigError(f"provider {profile.name!r} has no base URL: pass base_url"
                          + _endpoint_hint(profile))
    return ResolvedModel(
        name=name, profile=profile, model_id=model_id, thinking=thinking, base_url=url,
        api_key_env=api_key_env or profile.key_env, extra=extra or {}, headers=headers,
    )


def _custom_profile(
    model_id: str, base_url: str | None, api_mode: str | None, template: ProviderProfile
) -> ProviderProfile:
    missing = [n for n, v in (("base_url", base_url), ("api_mode", api_mode)) if not v]
    if missing:
        raise ConfigError(
            f"custom/{model_id} needs {' and '.join(missing)}: e.g. "
            "Client('custom/my-model', base_url='http://127.0.0.1:8000/v1', "
            f"api_mode='chat_completions'); api_mode is one of {', '.join(API_MODES)}"
        )
    assert base_url is not None and api_mode is not None
    url = normalize_base_url(base_url, api_mode)
    anthropic = api_mode == "anthropic_messages"
    return dataclasses.replace(
        template, base_url=url, api_mode=api_mode,  # type: ignore[arg-type]
        # the SDK conventions: Anthropic-style endpoints take x-api-key
        auth_style="x-api-key" if anthropic else "bearer",
        anthropic_version="2023-06-01" if anthropic else None,
        # reasoning blocks from an unknown endpoint verify only on that endpoint
        issuer=f"custom:{url}",
    )


def normalize_base_url(url: str, api_mode: str) -> str:
    """Strip trailing slashes; for Anthropic-style bases also a trailing ``/v1``."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"base_url must start with http:// or https://, got {url!r}")
    if api_mode == "anthropic_messages" and url.endswith("/v1"):
        url = url[: -len("/v1")]  # the codec adds /v1/messages itself
    return url


def _endpoint_hint(profile: ProviderProfile) -> str:
    names = getattr(profile, "endpoint_env", ())
    return f" or set {' or '.join(names)}" if names else ""


