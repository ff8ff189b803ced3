"""Smart routing through the gateway: simple turns to the cheap model, sticky per conversation
header, and the decision visible in x-modelwire-route."""

from __future__ import annotations

import openai
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway


@pytest.fixture(scope="module")
def rgw(emulator, tmp_path_factory):
    path = tmp_path_factory.mktemp("gwrt") / "modelwire.yaml"
    o = emulator.openai_base_url()
    path.write_text(
        "models:\n"
        f"  strong: {{provider: emulator, model: strong-model, base_url: \"{o}\"}}\n"
        f"  cheap: {{provider: emulator, model: cheap-model, base_url: \"{o}\"}}\n"
        "default_model: strong\n"
        "smart_routing: {enabled: true, cheap_model: cheap}\n"
    )
    with RunningGateway(load_config(str(path)), environ={}) as gw:
        yield gw


def _ask(gw, text, conversation=None):
    client = openai.OpenAI(base_url=gw.base_url + "/v1", api_key="k", max_retries=0)
    headers = {"x-modelwire-conversation-id": conversation} if conversation else {}
    return client.chat.completions.with_raw_response.create(
        model="strong", messages=[{"role": "user", "content": text}], extra_headers=headers)


def test_simple_turn_goes_cheap_and_complex_stays_primary(rgw):
    cheap = _ask(rgw, "What is 2 plus 2?")
    assert cheap.headers["x-modelwire-route"].startswith("cheap: simple:")
    assert cheap.headers["x-modelwire-model"].endswith("cheap-model")
    strong = _ask(rgw, "Please refactor this module for me")
    assert strong.headers["x-modelwire-route"] == "primary: keyword: refactor"
    assert strong.headers["x-modelwire-model"].endswith("strong-model")


def test_conversation_header_makes_escalation_sticky(rgw):
    assert _ask(rgw, "Please debug my code", "conv-7").headers["x-modelwire-model"].endswith("strong-model")
    later = _ask(rgw, "thanks!", "conv-7")
    assert later.headers["x-modelwire-model"].endswith("strong-model")
    assert later.headers["x-modelwire-route"].startswith("primary: sticky")
    assert _ask(rgw, "thanks!", "conv-8").headers["x-modelwire-model"].endswith("cheap-model")
