"""resolve(): config names first, provider/model split at the first slash, custom and
emulator endpoints, base URL conventions, and a broken config never breaking provider/model."""

from __future__ import annotations

import pytest

from modelwire.client.resolution import resolve
from modelwire.config import config_from_dict
from modelwire.errors import ConfigError
from modelwire.providers import CATALOG


def test_split_at_the_first_slash():
    r = resolve("openrouter/deepseek/deepseek-chat")
    assert (r.provider, r.model_id) == ("openrouter", "deepseek/deepseek-chat")
    assert r.base_url == "https://openrouter.ai/api/v1"
    assert r.api_key_env == ("OPENROUTER_API_KEY",)
    assert r.label == "openrouter/deepseek/deepseek-chat"


def test_aliases_resolve_to_their_rows():
    assert resolve("kimi/kimi-k2.6").profile is CATALOG["moonshot"]
    assert resolve("glm/glm-4.7").provider == "zai"


def test_config_names_are_looked_up_first():
    config = config_from_dict({"models": {
        "team/fast": {"provider": "anthropic", "model": "claude-sonnet-4-6", "thinking": "high"},
        "cheap": {"provider": "openrouter", "model": "deepseek/deepseek-chat",
                  "extra": {"provider": {"sort": "price"}}},
    }})
    r = resolve("team/fast", config=config)
    assert (r.name, r.provider, r.model_id, r.thinking) == (
        "team/fast", "anthropic", "claude-sonnet-4-6", "high")
    cheap = resolve("cheap", config=config)
    assert cheap.extra == {"provider": {"sort": "price"}}
    assert resolve("openai/gpt-5-mini", config=config).provider == "openai"


def test_custom_needs_base_url_and_api_mode():
    with pytest.raises(ConfigError, match="custom/my-model needs base_url and api_mode"):
        resolve("custom/my-model")
    with pytest.raises(ConfigError, match="needs api_mode"):
        resolve("custom/my-model", base_url="http://127.0.0.1:9001")
    r = resolve("custom/my-model", base_url="http://127.0.0.1:9001/v1/",
                api_mode="chat_completions")
    assert (r.model_id, r.base_url, r.profile.api_mode) == (
        "my-model", "http://127.0.0.1:9001/v1", "chat_completions")
    assert r.profile.issuer == "custom:http://127.0.0.1:9001/v1"
    assert r.profile.auth_style == "bearer"


@pytest.mark.parametrize(
    ("given", "expected"),
    [("http://127.0.0.1:9001", "http://127.0.0.1:9001"),
     ("http://127.0.0.1:9001/v1", "http://127.0.0.1:9001"),
     ("http://127.0.0.1:9001/v1/", "http://127.0.0.1:9001"),
     ("https://api.minimax.io/anthropic/v1", "https://api.minimax.io/anthropic")],
    ids=["bare", "trailing-v1", "trailing-v1-slash", "minimax-v1"],
)
def test_anthropic_bases_tolerate_a_trailing_v1(given, expected):
    r = resolve("custom/m", base_url=given, api_mode="anthropic_messages")
    assert r.base_url == expected
    assert r.profile.auth_style == "x-api-key"
    assert r.profile.url("/v1/messages", r.base_url) == expected + "/v1/messages"


def test_openai_style_bases_keep_v1():
    r = resolve("openai/gpt-5-mini", base_url="http://127.0.0.1:8000/v1/")
    assert r.base_url == "http://127.0.0.1:8000/v1"
    assert r.profile.url("/chat/completions", r.base_url) == \
        "http://127.0.0.1:8000/v1/chat/completions"


def test_emulator_protocol_by_prefix_or_api_mode():
    assert resolve("emulator/emulator-1").profile.api_mode == "chat_completions"
    assert resolve("emulator/emulator-1").base_url == ""  # the Client fills it
    assert resolve("emulator-anthropic/emulator-1").profile.api_mode == "anthropic_messages"
    assert resolve("emulator-responses/emulator-1").profile.api_mode == "responses"
    r = resolve("emulator/emulator-1", api_mode="responses")
    assert r.profile is CATALOG["emulator-responses"]
    assert resolve("emulator/e", base_url="http://127.0.0.1:5/v1").base_url == \
        "http://127.0.0.1:5/v1"


def test_a_fixed_provider_refuses_another_protocol():
    with pytest.raises(ConfigError, match="speaks chat_completions, not responses"):
        resolve("groq/llama-3.3-70b-versatile", api_mode="responses")
    with pytest.raises(ConfigError, match="api_mode must be one of"):
        resolve("openai/gpt-5", api_mode="grpc")


def test_azure_base_url_from_endpoint_variable(monkeypatch):
    with pytest.raises(ConfigError, match="AZURE_OPENAI_ENDPOINT"):
        resolve("azure/my-deployment")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com/")
    assert resolve("azure/my-deployment").base_url == "https://res.openai.azure.com/openai/v1"


def test_unknown_provider_and_plain_names_say_what_is_known():
    with pytest.raises(ConfigError) as err:
        resolve("antropic/claude")
    assert "unknown provider 'antropic' (did you mean 'anthropic'?)" in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve("claude")
    assert "no model names configured" in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve("cheap", config=config_from_dict({"models": {
            "fast": {"provider": "groq", "model": "llama-3.3-70b-versatile"}}}))
    assert "configured names: fast" in str(err.value)


def test_a_broken_user_config_never_breaks_provider_model(tmp_path, monkeypatch):
    bad = tmp_path / "modelwire.yaml"
    bad.write_text("models: [this is: not valid\n")
    monkeypatch.setenv("MODELWIRE_CONFIG", str(bad))
    assert resolve("anthropic/claude-sonnet-4-6").provider == "anthropic"
    assert resolve("custom/m", base_url="http://127.0.0.1:1/v1",
                   api_mode="chat_completions").model_id == "m"
    with pytest.raises(ConfigError) as err:
        resolve("claude")  # a config name: now the file is read, and its error names it
    assert str(bad) in str(err.value) and "invalid YAML" in str(err.value)


def test_config_names_come_from_the_user_config_file(tmp_path, monkeypatch):
    home = tmp_path / "xdg"
    (home / "modelwire").mkdir(parents=True)
    (home / "modelwire" / "modelwire.yaml").write_text(
        "models:\n  local: {provider: ollama, model: 'qwen3:8b'}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    r = resolve("local")
    assert (r.provider, r.model_id, r.base_url) == ("ollama", "qwen3:8b", "http://127.0.0.1:11434/v1")


def test_config_entry_settings_flow_into_the_resolution():
    config = config_from_dict({"models": {"mine": {
        "provider": "custom", "model": "my-model", "api_mode": "anthropic_messages",
        "base_url": "http://127.0.0.1:9001", "api_key_env": "MY_KEY", "auth_style": "bearer",
        "headers": {"x-team": "a"}}}})
    r = resolve("mine", config=config)
    assert (r.model_id, r.base_url, r.api_key_env) == ("my-model", "http://127.0.0.1:9001", ("MY_KEY",))
    assert r.profile.auth_style == "bearer" and r.headers == (("x-team", "a"),)
    assert resolve("mine", config=config, base_url="http://127.0.0.1:9002/v1").base_url == \
        "http://127.0.0.1:9002"


def test_slash_names_with_an_unknown_prefix_come_from_the_user_config(tmp_path, monkeypatch):
    path = tmp_path / "modelwire.yaml"
    path.write_text("models:\n  team/fast: {provider: groq, model: llama-3.3-70b-versatile}\n")
    monkeypatch.setenv("MODELWIRE_CONFIG", str(path))
    assert resolve("team/fast").provider == "groq"


def test_api_mode_picks_a_providers_other_protocol_row(monkeypatch):
    r = resolve("openai/gpt-5", api_mode="responses")
    assert (r.provider, r.profile.api_mode, r.base_url) == (
        "openai-responses", "responses", "https://api.openai.com/v1")
    assert r.api_key_env == ("OPENAI_API_KEY",) and r.profile.issuer == "openai"
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
    az = resolve("azure/dep", api_mode="responses")
    assert (az.provider, az.base_url) == ("azure-responses", "https://res.openai.azure.com/openai/v1")
    config = config_from_dict({"models": {"gpt": {"provider": "openai", "model": "gpt-5",
                                                  "api_mode": "responses"}}})
    assert resolve("gpt", config=config).provider == "openai-responses"


@pytest.mark.parametrize(
    ("path", "echo", "tool_ids", "unique"),
    [("/p/deepseek/v1", "required", "any", True), ("/p/kimi/v1", "required", "any", True),
     ("/p/mistral/v1", "none", "mistral9", False), ("/p/groq/v1", "none", "any", False),
     ("/v1", "reasoning_content", "any", False)],
    ids=["deepseek", "kimi", "mistral", "groq", "lenient"],
)
def test_an_emulator_under_p_name_is_treated_as_that_provider(path, echo, tool_ids, unique):
    r = resolve("emulator/m", base_url="http://127.0.0.1:9" + path)
    profile = r.profile
    assert (profile.reasoning_echo, profile.tool_id_format, profile.unique_tool_names) == (
        echo, tool_ids, unique)
    # still the emulator: its name, URL, protocol and signing issuer
    assert (profile.name, profile.issuer, profile.local, r.base_url) == (
        "emulator", "emulator", True, "http://127.0.0.1:9" + path)


def test_an_anthropic_emulator_playing_deepseek_takes_unsigned_thinking():
    assert resolve("emulator-anthropic/m",
                   base_url="http://127.0.0.1:9/p/deepseek").profile.unsigned_thinking_echo
    assert not resolve("emulator-anthropic/m",
                       base_url="http://127.0.0.1:9/p/anthropic").profile.unsigned_thinking_echo


def test_deepseek_over_the_anthropic_protocol():
    r = resolve("deepseek/deepseek-v4-pro", api_mode="anthropic_messages")
    assert (r.provider, r.base_url, r.profile.auth_style) == (
        "deepseek-anthropic", "https://api.deepseek.com/anthropic", "x-api-key")
    assert r.profile.unsigned_thinking_echo and r.profile.issuer == "deepseek"
    assert not r.profile.accepts_issuer("anthropic")  # Claude's signed thinking is not sent there
