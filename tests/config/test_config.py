"""modelwire.yaml: the documented schema loads into frozen values; every mistake names the
file, the key path and what was expected."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from modelwire.config import Config, config_from_dict, load_config
from modelwire.errors import ConfigError

DESIGN_EXAMPLE = """\
models:                       # what callers ask for, by name
  claude:   {provider: anthropic, model: claude-sonnet-4-6, thinking: medium}
  cheap:    {provider: openrouter, model: deepseek/deepseek-chat}
  local:    {provider: emulator, model: emulator-1}
  mine:     {provider: custom, model: my-model, api_mode: anthropic_messages,
             base_url: "http://127.0.0.1:9001", api_key_env: MY_KEY}
default_model: claude
fallback: [cheap]             # tried in order when the primary gives up
smart_routing: {enabled: true, cheap_model: cheap, max_simple_chars: 160, max_simple_words: 28}
credential_pool:
  store: "sqlite:///~/.local/share/modelwire/state.db"   # or redis://host:6379/0
  strategies: {openrouter: round_robin}                    # default fill_first
gateway:
  keys_env: MODELWIRE_GATEWAY_KEYS   # comma-separated; none set → loopback only
  aliases: {claude-sonnet-4-6: claude}   # ids clients send → model names above
"""


def _write(tmp_path, text: str):
    path = tmp_path / "modelwire.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def _error(tmp_path, text: str) -> str:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    return message


def test_the_design_example_loads(tmp_path):
    path = _write(tmp_path, DESIGN_EXAMPLE)
    config = load_config(path)
    assert config.path == str(path)
    assert list(config.models) == ["claude", "cheap", "local", "mine"]
    claude = config.models["claude"]
    assert (claude.provider, claude.model, claude.thinking) == ("anthropic", "claude-sonnet-4-6", "medium")
    mine = config.models["mine"]
    assert (mine.api_mode, mine.base_url, mine.api_key_env) == (
        "anthropic_messages", "http://127.0.0.1:9001", ("MY_KEY",))
    assert config.default_model == "claude" and config.fallback == ("cheap",)
    assert config.smart_routing.enabled and config.smart_routing.cheap_model == "cheap"
    assert config.credential_pool.strategy_for("openrouter") == "round_robin"
    assert config.credential_pool.strategy_for("anthropic") == "fill_first"
    assert config.gateway.aliases == {"claude-sonnet-4-6": "claude"}
    assert config.gateway.max_body_bytes == 32 * 1024 * 1024


def test_config_is_frozen(tmp_path):
    config = load_config(_write(tmp_path, DESIGN_EXAMPLE))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.default_model = "cheap"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.models["x"] = config.models["claude"]  # type: ignore[index]


def test_where_the_file_comes_from(tmp_path, monkeypatch):
    assert load_config() == Config()  # nothing configured: an empty config, no error
    user = tmp_path / "xdg" / "modelwire"
    user.mkdir(parents=True)
    (user / "modelwire.yaml").write_text("default_model: openai/gpt-5-mini\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert load_config().default_model == "openai/gpt-5-mini"
    env_file = _write(tmp_path, "default_model: groq/llama-3.3-70b-versatile\n")
    monkeypatch.setenv("MODELWIRE_CONFIG", str(env_file))
    assert load_config().default_model == "groq/llama-3.3-70b-versatile"
    explicit = tmp_path / "other.yaml"
    explicit.write_text("default_model: mistral/mistral-large-latest\n")
    assert load_config(explicit).default_model == "mistral/mistral-large-latest"


def test_missing_explicit_file_is_an_error(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    monkeypatch.setenv("MODELWIRE_CONFIG", str(tmp_path / "gone.yaml"))
    with pytest.raises(ConfigError, match="gone.yaml: config file not found"):
        load_config()


def test_invalid_yaml_names_the_line(tmp_path):
    message = _error(tmp_path, "models:\n  a: {provider: openai\n")
    assert "invalid YAML (line 3" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("models:\n  cheap: {provider: opnai, model: x}\n",
         "models.cheap.provider: unknown provider 'opnai' (did you mean 'openai'?); known providers: "),
        ("models:\n  cheap: {provider: openai}\n",
         "models.cheap.model: expected a non-empty string, got nothing"),
        ("models:\n  cheap: {provider: openai, modle: gpt-5}\n",
         "models.cheap.modle: unknown key (did you mean 'model'?); expected one of provider, model,"),
        ("modles: {}\n", "modles: unknown key (did you mean 'models'?)"),
        ("models:\n  openai/gpt-5: {provider: openrouter, model: openai/gpt-5}\n",
         ("models.openai/gpt-5: a model name cannot look like provider/model-id ('openai' is a "
         "provider)")),
        ("models:\n  c: {provider: openai, model: m, thinking: extreme}\n",
         "models.c.thinking: expected one of low, medium, high, xhigh, max, got 'extreme'"),
        ("models:\n  c: {provider: custom, model: m, api_mode: responses}\n",
         "models.c.base_url: required when provider is custom"),
        ("models:\n  c: {provider: custom, model: m, base_url: 'http://127.0.0.1:1'}\n",
         "models.c.api_mode: required when provider is custom"),
        ("models:\n  c: {provider: custom, model: m, base_url: 127.0.0.1, api_mode: responses}\n",
         "models.c.base_url: expected an http:// or https:// URL, got '127.0.0.1'"),
        ("models:\n  c: {provider: groq, model: m, api_mode: anthropic_messages}\n",
         "models.c.api_mode: provider 'groq' speaks chat_completions, not anthropic_messages"),
        ("models:\n  c: {provider: openai, model: m, api_mode: grpc}\n",
         "models.c.api_mode: expected one of chat_completions, anthropic_messages, responses"),
        ("models:\n  c: {provider: openai, model: m, api_key_env: 'my key'}\n",
         "models.c.api_key_env: expected an environment variable name such as MY_KEY"),
        ("models: [a, b]\n", "models: expected a mapping of names to models, got a list"),
        ("default_model: claud\nmodels:\n  claude: {provider: anthropic, model: m}\n",
         "default_model: 'claud' is not a model name (did you mean 'claude'?) nor provider/model-id"),
        ("fallback: [cheap, nope/x]\nmodels:\n  cheap: {provider: groq, model: m}\n",
         "fallback[1]: unknown provider 'nope'"),
        ("smart_routing: {enabled: true}\n",
         "smart_routing.cheap_model: required when smart_routing is enabled"),
        ("smart_routing: {enabled: yes please}\n",
         "smart_routing.enabled: expected true or false, got a string ('yes please')"),
        ("smart_routing: {max_simple_chars: -3}\n",
         "smart_routing.max_simple_chars: expected a positive integer, got a number (-3)"),
        ("smart_routing: {cheap_modle: x}\n",
         "smart_routing.cheap_modle: unknown key (did you mean 'cheap_model'?)"),
        ("credential_pool: {strategies: {openrouter: round-robin}}\n",
         "credential_pool.strategies.openrouter: expected one of fill_first, round_robin, random,"),
        ("credential_pool: {strategies: {openruter: round_robin}}\n",
         "credential_pool.strategies.openruter: unknown provider 'openruter' (did you mean 'openrouter'?)"),
        ("credential_pool: {store: 'postgres://x'}\n",
         "credential_pool.store: expected sqlite:///path or redis://host:port/db"),
        ("gateway: {aliases: {gpt-4o: missing}}\n",
         "gateway.aliases.gpt-4o: 'missing' is not a model name nor provider/model-id"),
        ("gateway: {max_body_bytes: lots}\n",
         "gateway.max_body_bytes: expected a positive integer, got a string ('lots')"),
        ("gateway: {keyz_env: X}\n", "gateway.keyz_env: unknown key (did you mean 'keys_env'?)"),
        ("- just\n- a list\n", "(top level): expected a mapping, got a list"),
    ],
    ids=lambda v: v.split(":")[0][:40] if isinstance(v, str) else None,
)
def test_errors_name_the_key_path_and_what_was_expected(tmp_path, text, expected):
    assert expected in _error(tmp_path, text)


def test_gateway_settings_and_defaults():
    gw = config_from_dict({"gateway": {"client_key_passthrough": True, "access_log": False,
                                       "seal_secret_env": "MY_SEAL", "max_body_bytes": 1024,
                                       "allow_provider_models": False, "max_retry_wait": 5}}).gateway
    assert (gw.client_key_passthrough, gw.access_log, gw.seal_secret_env, gw.max_body_bytes,
            gw.allow_provider_models, gw.keys_env, gw.max_retry_wait) == (
        True, False, "MY_SEAL", 1024, False, "MODELWIRE_GATEWAY_KEYS", 5)
    assert config_from_dict({}).gateway.max_retry_wait == 30


def test_provider_aliases_are_stored_canonical():
    config = config_from_dict({"models": {"k": {"provider": "Kimi", "model": "kimi-k2.6"}}})
    assert config.models["k"].provider == "moonshot"


def test_thinking_off_spellings_mean_asked_off_and_absent_means_unset():
    # "asked off" is kept apart from "not set": DeepSeek's flag then says disabled
    for value in (False, "none", "off"):
        entry = config_from_dict({"models": {"a": {"provider": "openai", "model": "m",
                                                   "thinking": value}}}).models["a"]
        assert entry.thinking == "none"
    entry = config_from_dict({"models": {"a": {"provider": "openai", "model": "m"}}}).models["a"]
    assert entry.thinking is None


def test_secrets_in_the_file_are_not_echoed_in_errors(tmp_path):
    tail = "abcdefghijklmnopqrstuvwxyz123456"  # a key-shaped value, built so no real-looking key is committed
    message = _error(tmp_path, "models:\n  a: {provider: openai, model: m, "
                               f"api_key_env: sk-{tail}}}\n")
    assert tail not in message


def test_config_values_survive_asdict_deepcopy_and_json():
    """Other parts read sections with dataclasses.asdict (the credential pool) or copy them."""
    import copy
    import json

    config = config_from_dict({"credential_pool": {"strategies": {"openrouter": "round_robin"}},
                               "gateway": {"aliases": {"gpt-4o": "openai/gpt-4o"}}})
    assert dataclasses.asdict(config.credential_pool) == {
        "store": None, "strategies": {"openrouter": "round_robin"},
        "prefix": "modelwire:", "max_concurrent": 1, "lease_ttl": 600}
    assert copy.deepcopy(config) == config
    assert json.loads(json.dumps(config.gateway.aliases)) == {"gpt-4o": "openai/gpt-4o"}


def test_credential_pool_tuning_keys_are_accepted_and_validated(tmp_path):
    from modelwire.config import load_config
    from modelwire.errors import ConfigError

    path = tmp_path / "modelwire.yaml"
    path.write_text("credential_pool: {store: 'redis://127.0.0.1:6379/0', prefix: 'team-a:', "
                    "max_concurrent: 4, lease_ttl: 120}\n")
    pool = load_config(str(path)).credential_pool
    assert (pool.prefix, pool.max_concurrent, pool.lease_ttl) == ("team-a:", 4, 120)
    path.write_text("credential_pool: {max_concurrent: 0}\n")
    with pytest.raises(ConfigError, match="credential_pool.max_concurrent"):
        load_config(str(path))
