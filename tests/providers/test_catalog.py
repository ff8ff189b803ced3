"""Every catalog row is a usable endpoint description: URL, auth, protocol, keys, issuers."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from modelwire.codecs import Target
from modelwire.errors import ConfigError
from modelwire.providers import ALIASES, CATALOG, get_profile
from modelwire.providers.catalog import RUNTIME_BASE_URL

ROWS = sorted(CATALOG.values(), key=lambda p: p.name)
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
AUTH_HEADER = {"bearer": "authorization", "x-api-key": "x-api-key", "api-key": "api-key"}


def test_catalog_covers_the_required_providers():
    required = {
        "openai", "anthropic", "openrouter", "deepseek", "moonshot", "dashscope", "zai",
        "minimax", "xiaomi", "groq", "together", "fireworks", "mistral", "gemini", "xai",
        "perplexity", "cerebras", "sambanova", "deepinfra", "novita", "siliconflow",
        "volcengine", "qianfan", "stepfun", "azure", "nous", "huggingface", "nvidia", "github",
        "ollama", "lmstudio", "vllm", "llamacpp", "openai-responses", "custom", "emulator",
    }
    assert required <= set(CATALOG)
    assert len(CATALOG) >= 30


@pytest.mark.parametrize("profile", ROWS, ids=lambda p: p.name)
def test_row_is_a_sane_endpoint(profile):
    assert profile.api_mode in ("chat_completions", "anthropic_messages", "responses")
    if profile.name in RUNTIME_BASE_URL:
        assert profile.base_url == ""
    else:
        parts = urlsplit(profile.base_url.replace("{resource}", "resource"))
        assert parts.scheme == ("http" if profile.local else "https"), profile.base_url
        assert parts.hostname and "." in parts.hostname
        assert not profile.base_url.endswith("/")
        assert not parts.query and not parts.fragment
        if profile.local:
            assert parts.hostname == "127.0.0.1"
        if profile.api_mode == "anthropic_messages":
            # Anthropic-style bases exclude /v1: the codec appends /v1/messages
            assert not profile.base_url.endswith("/v1")
    for name in profile.key_env:
        assert ENV_NAME.match(name), name
    assert profile.key_env or profile.local or profile.name in RUNTIME_BASE_URL \
        or profile.extra.get("oauth"), "a hosted provider needs a key variable or OAuth"


@pytest.mark.parametrize("profile", ROWS, ids=lambda p: p.name)
def test_auth_header_shape(profile):
    headers = Target(profile, "m", api_key="sk-test-123456").auth_headers()
    if profile.auth_style == "none":
        assert headers == {}
        return
    name = AUTH_HEADER[profile.auth_style]
    value = "Bearer sk-test-123456" if profile.auth_style == "bearer" else "sk-test-123456"
    assert headers == {name: value}
    assert Target(profile, "m").auth_headers() == {}


@pytest.mark.parametrize("profile", ROWS, ids=lambda p: p.name)
def test_reasoning_blocks_have_an_issuer(profile):
    assert profile.issuer, "blocks from this endpoint must be tagged with who can verify them"
    assert profile.accepts_issuer(profile.issuer)
    if profile.reasoning_echo != "none":
        assert profile.issuer


def test_capabilities_that_users_rely_on():
    assert CATALOG["openai"].max_tokens_field == "max_completion_tokens"
    assert CATALOG["azure"].max_tokens_field == "max_completion_tokens"
    for name in ("deepseek", "moonshot", "xiaomi"):
        assert CATALOG[name].reasoning_echo == "required", name
        assert CATALOG[name].unique_tool_names, name
    assert CATALOG["openrouter"].reasoning_echo == "reasoning_details"
    for name in ("mistral", "groq", "cerebras", "sambanova", "openai"):
        assert CATALOG[name].reasoning_echo == "none", name
    assert CATALOG["mistral"].tool_id_format == "mistral9"
    assert CATALOG["anthropic"].accepts_issuer("bedrock")
    assert CATALOG["anthropic"].accepts_issuer("vertex")
    assert not CATALOG["anthropic"].accepts_issuer("openrouter")
    assert not CATALOG["deepseek"].accepts_issuer("moonshot")
    minimax = CATALOG["minimax"]
    assert (minimax.api_mode, minimax.auth_style) == ("anthropic_messages", "bearer")
    assert minimax.fine_grained_tool_streaming is False
    assert CATALOG["xai"].api_mode == "responses"
    # no ChatGPT-backend row: Codex models are the API's (an OpenAI key), never a login
    # borrowed from another program's credential files
    assert "openai-codex" not in CATALOG
    assert not any("chatgpt.com" in p.base_url for p in CATALOG.values())
    assert "required" not in CATALOG["gemini"].tool_choice_values
    assert CATALOG["anthropic"].auth_style == "x-api-key"
    assert CATALOG["azure"].auth_style == "api-key"


# Recorded routes that are other products on the same host: Hugging Face's
# provider-pinned routes (/novita/..., /together/...) and Z.AI's coding plan.
_OTHER_ROUTES = ("/novita/", "/nebius/", "/together/", "/api/coding/")


def test_corpus_hosts_match_catalog_rows(corpus):
    """Recorded real traffic went to the hosts the catalog names (where both exist)."""
    host_of = {p.name: urlsplit(p.base_url).hostname for p in ROWS if p.base_url and not p.local}
    corpus_to_row = {"openai": "openai", "anthropic": "anthropic", "openrouter": "openrouter",
                     "deepseek": "deepseek", "groq": "groq", "mistral": "mistral",
                     "cerebras": "cerebras", "xai": "xai", "zai": "zai",
                     "huggingface": "huggingface", "google_openai_compat": "gemini"}
    checked = 0
    for _stem, item in corpus:
        row = corpus_to_row.get(item["provider"])
        host = item["request"]["host"]
        if row is None or host == "api.openai.com" and row != "openai":
            continue  # simonw/llm rewrote some OpenRouter URIs to api.openai.com (INDEX.md)
        if item["api"] != CATALOG[row].api_mode and row != "xai":
            continue
        assert host == host_of[row], (item["provider"], host)
        path = item["request"]["path"].split("?")[0]
        if path.startswith(_OTHER_ROUTES):
            continue
        suffix = {"chat_completions": "/chat/completions", "responses": "/responses",
                  "anthropic_messages": "/v1/messages"}[item["api"]]
        assert path == urlsplit(CATALOG[row].base_url).path + suffix, (row, path)
        checked += 1
    assert checked >= 40


def test_get_profile_accepts_aliases_and_names_known_ones():
    assert get_profile("kimi") is CATALOG["moonshot"]
    assert get_profile("Google") is CATALOG["gemini"]
    for alias, target in ALIASES.items():
        assert target in CATALOG, alias
    with pytest.raises(ConfigError) as err:
        get_profile("opnai")
    assert "did you mean 'openai'" in str(err.value)
    assert "anthropic" in str(err.value) and "openrouter" in str(err.value)


def test_azure_url_needs_its_resource():
    azure = CATALOG["azure"]
    with pytest.raises(ConfigError, match="AZURE_OPENAI_ENDPOINT"):
        azure.url("/chat/completions")
    assert azure.default_base_url({"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/"}) \
        == "https://res.openai.azure.com/openai/v1"
    assert azure.url("/chat/completions", "https://res.openai.azure.com/openai/v1") \
        == "https://res.openai.azure.com/openai/v1/chat/completions"


# corpus provider label -> catalog row, for endpoints the catalog describes
_CORPUS_ROW = {"openai": "openai", "anthropic": "anthropic", "openrouter": "openrouter",
               "deepseek": "deepseek", "groq": "groq", "mistral": "mistral",
               "cerebras": "cerebras", "zai": "zai", "huggingface": "huggingface",
               "google_openai_compat": "gemini", "azure_openai": "azure", "ollama": "ollama",
               "llamacpp": "llamacpp", "together": "together"}


def test_capabilities_never_contradict_recorded_traffic(corpus):
    """What a provider accepted with a 200 must be allowed by its row."""
    checked = 0
    for stem, item in corpus:
        row = _CORPUS_ROW.get(item["provider"])
        body = item["request"].get("body")
        if (row is None or item["api"] != "chat_completions" or item["response"]["status"] != 200
                or not isinstance(body, dict) or item["request"]["host"] == "api.openai.com"
                and row != "openai"):
            continue
        profile = CATALOG[row]
        choice = body.get("tool_choice")
        if isinstance(choice, str):
            assert choice in profile.tool_choice_values, (stem, choice)
        elif isinstance(choice, dict):
            assert "function" in profile.tool_choice_values, stem
        if "stream_options" in body:
            assert profile.stream_usage, (stem, "accepted stream_options")
        for message in body.get("messages") or ():
            if message.get("role") == "assistant" and "reasoning_content" in message:
                assert profile.reasoning_echo != "none", (stem, "accepted reasoning_content")
        checked += 1
    assert checked >= 40
