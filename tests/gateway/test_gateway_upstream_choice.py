"""Which upstreams a client may name as provider/model: never a local server the
config does not use; a list narrows it; refused ids are a 404 before any client exists."""

from __future__ import annotations

import httpx
import pytest

from modelwire.config import config_from_dict
from modelwire.errors import ConfigError
from modelwire.gateway.errors import GatewayError
from modelwire.gateway.models import ModelTable
from modelwire.gateway.testing import RunningGateway


def _table(allow: object, models: dict | None = None) -> ModelTable:
    return ModelTable.from_config(config_from_dict({"models": models or {},
                                                    "gateway": {"allow_provider_models": allow}}))


@pytest.mark.parametrize("model", ["ollama/x", "llamacpp/x", "lmstudio/x", "vllm/x", "custom/x",
                                   "llama.cpp/x", "nosuchprovider/x"])
def test_local_servers_and_unknown_providers_are_not_open_by_default(model: str) -> None:
    with pytest.raises(GatewayError) as info:
        _table(True).resolve(model)
    assert info.value.http.status == 404 and "allow_provider_models" in info.value.http.message


def test_cloud_providers_and_the_emulators_are_open_by_default() -> None:
    table = _table(True)
    for model in ("openai/gpt-5", "anthropic/claude-sonnet-4-6", "openrouter/deepseek/deepseek-chat",
                  "emulator/e", "emulator-anthropic/e"):
        assert table.resolve(model) == model


def test_a_local_server_a_configured_model_uses_is_open() -> None:
    table = _table(True, {"mine": {"provider": "ollama", "model": "llama3"}})
    assert table.resolve("ollama/qwen3") == "ollama/qwen3"
    with pytest.raises(GatewayError):
        table.resolve("lmstudio/x")


def test_a_list_opens_only_the_providers_it_names() -> None:
    table = _table(["openrouter", "ollama"])
    assert table.resolve("openrouter/x") == "openrouter/x" and table.resolve("ollama/x") == "ollama/x"
    for model in ("openai/gpt-5", "emulator/e"):
        with pytest.raises(GatewayError):
            table.resolve(model)
    with pytest.raises(GatewayError):
        _table(False).resolve("openai/gpt-5")


def test_an_unknown_provider_in_the_list_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="allow_provider_models"):
        _table(["openai", "nosuch"])


@pytest.mark.parametrize("door,path", [("chat", "/v1/chat/completions"), ("anthropic", "/v1/messages")])
def test_a_refused_model_is_a_404_in_the_doors_shape_with_no_upstream_client(door: str, path: str) -> None:
    with RunningGateway(config_from_dict({}), environ={}) as gw:
        before = set(gw.gateway._clients)
        r = httpx.post(gw.base_url + path, json={"model": "ollama/x", "max_tokens": 5,
                                                 "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 404
        body = r.json()
        if door == "anthropic":
            assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
        else:
            assert body["error"]["type"] == "not_found_error"
        assert set(gw.gateway._clients) == before  # nothing built: nothing sent upstream
