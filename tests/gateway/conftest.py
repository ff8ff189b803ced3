from __future__ import annotations

import pytest

from modelwire.testing import emulator, emulator_clean  # noqa: F401

GATEWAY_KEY = "gw-test-key-0123456789"

CONFIG = """
models:
  emu-chat:      {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  emu-anthropic: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
  emu-responses: {{provider: emulator-responses, model: gpt-5-mini, base_url: "{openai}"}}
default_model: emu-chat
gateway:
  keys_env: TEST_GATEWAY_KEYS
  aliases: {{claude-sonnet-4-6: emu-anthropic, claude-haiku-4-5: emu-chat}}
  allow_provider_models: true
"""


@pytest.fixture(scope="session")
def gateway(emulator, tmp_path_factory):  # noqa: F811 - the imported fixture
    from modelwire.config import load_config
    from modelwire.gateway.testing import RunningGateway

    path = tmp_path_factory.mktemp("gw") / "modelwire.yaml"
    path.write_text(CONFIG.format(openai=emulator.openai_base_url(), anthropic=emulator.anthropic_base_url()))
    env = {"TEST_GATEWAY_KEYS": GATEWAY_KEY, "MODELWIRE_SEAL_SECRET": "seal-secret-for-tests-0123456789"}
    with RunningGateway(load_config(str(path)), environ=env) as gw:
        yield gw
