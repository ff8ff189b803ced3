from __future__ import annotations

import pytest

from modelwire.testing import emulator, emulator_clean  # noqa: F401

ENV_KEY = "gw-test-key-" + "0123456789"
ADMIN_KEY = "adm-test-key-" + "0123456789"

CONFIG = """
models:
  emu-chat:      {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  emu-anthropic: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
  emu-free:      {{provider: emulator, model: emulator-free, base_url: "{openai}"}}
  claude:        {{provider: anthropic, model: claude-sonnet-4-5, base_url: "{lane}", api_key_env: TEAMS_ANTHROPIC_KEY}}
default_model: emu-chat
gateway:
  keys_env: TEST_GATEWAY_KEYS
  admin_keys_env: TEST_ADMIN_KEYS
teams:
  enabled: true
  store: "sqlite:///{store}"
  key_cache_ttl: 0.2
  spend_flush_s: 0.05
prices:
  emulator/emulator-1: {{input: 1000, output: 2000}}
  emulator-anthropic/claude-sonnet-4-6: {{input: 3, output: 15}}
  anthropic/claude-sonnet-4-5: {{input: 3, output: 15}}
"""


@pytest.fixture
def teams_config(emulator, tmp_path, monkeypatch):  # noqa: F811 - the imported fixture
    from modelwire.config import load_config

    monkeypatch.setenv("TEAMS_ANTHROPIC_KEY", "sk-" + "ant-teams-test")
    path = tmp_path / "modelwire.yaml"
    path.write_text(CONFIG.format(openai=emulator.openai_base_url(),
                                  anthropic=emulator.anthropic_base_url(),
                                  lane=emulator.anthropic_base_url("anthropic"),
                                  store=tmp_path / "state.db"))
    return load_config(str(path))


@pytest.fixture
def teams_gateway(teams_config):
    from modelwire.gateway.testing import RunningGateway

    env = {"TEST_GATEWAY_KEYS": ENV_KEY, "TEST_ADMIN_KEYS": ADMIN_KEY}
    with RunningGateway(teams_config, environ=env) as gw:
        yield gw


@pytest.fixture
def admin(teams_config):
    from modelwire.teams.admin import KeyAdmin
    from modelwire.teams.backends import open_store, store_url

    store = open_store(store_url(teams_config))
    yield KeyAdmin(store)
    store.close()
