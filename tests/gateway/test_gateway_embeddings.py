"""``POST /v1/embeddings`` through the gateway: the official openai SDK -> gateway ->
emulator over loopback, with aliases, keys, the body limit, batching and the access log."""

from __future__ import annotations

import logging
import time

import httpx
import openai
import pytest

from modelwire import Client
from modelwire.emulator import Emulator

GATEWAY_KEY = "gw-embed-key-0123456789"
KEY = "sk-test-embed-upstream-0123"

CONFIG = """
models:
  embed:       {{provider: emulator, model: emulator-embed-1, base_url: "{url}", api_key_env: EMBED_UPSTREAM_KEY}}
  embed-large: {{provider: emulator, model: text-embedding-3-large, base_url: "{url}", api_key_env: EMBED_UPSTREAM_KEY}}
  chat:        {{provider: anthropic, model: claude-sonnet-4-6, api_key_env: EMBED_UPSTREAM_KEY}}
gateway:
  keys_env: EMBED_GATEWAY_KEYS
  aliases: {{text-embedding-3-small: embed}}
  allow_provider_models: false
  max_body_bytes: 300000
"""


@pytest.fixture(scope="module")
def emu():
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(scope="module")
def gateway(emu, tmp_path_factory):
    import os

    from modelwire.config import load_config
    from modelwire.gateway.testing import RunningGateway

    path = tmp_path_factory.mktemp("gw-embed") / "modelwire.yaml"
    path.write_text(CONFIG.format(url=emu.openai_base_url()))
    os.environ["EMBED_UPSTREAM_KEY"] = KEY  # the Client reads upstream keys from the process
    env = {"EMBED_GATEWAY_KEYS": GATEWAY_KEY}
    with RunningGateway(load_config(str(path)), environ=env) as gw:
        yield gw
    os.environ.pop("EMBED_UPSTREAM_KEY", None)


@pytest.fixture
def sdk(gateway):
    with openai.OpenAI(base_url=gateway.base_url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        yield client


def _since(emu):
    log = emu.requests()["requests"]
    return log[-1]["n"] if log else 0


def _direct(emu, texts, model="emulator-embed-1", **kw):
    with Client(f"emulator/{model}", base_url=emu.openai_base_url(), api_key=KEY) as c:
        return c.embed(texts, **kw)


def test_sdk_default_base64_decodes_to_the_upstream_vectors(sdk, emu):
    texts = ["the gateway embeds", "through an alias"]
    got = sdk.embeddings.create(model="text-embedding-3-small", input=texts)
    want = _direct(emu, texts)
    assert [len(d.embedding) for d in got.data] == [256, 256]
    for d, w in zip(got.data, want.vectors, strict=True):
        assert max(abs(a - b) for a, b in zip(d.embedding, w, strict=True)) < 1e-6
    assert got.model == "emulator-embed-1"
    assert (got.usage.prompt_tokens, got.usage.total_tokens) == (want.usage["prompt_tokens"],) * 2


def test_float_encoding_and_dimensions_pass_through(sdk, emu, gateway):
    got = sdk.embeddings.with_raw_response.create(model="embed-large", input="one", dimensions=8,
                                                  encoding_format="float")
    body = got.http_response.json()
    assert body["object"] == "list" and body["data"][0]["object"] == "embedding"
    assert isinstance(body["data"][0]["embedding"], list) and len(body["data"][0]["embedding"]) == 8
    assert got.headers["x-modelwire-model"] == "emulator/text-embedding-3-large"
    assert got.headers["x-modelwire-attempts"] == "1"


def test_more_inputs_than_the_upstream_takes_are_batched_behind_the_door(gateway, emu):
    since = _since(emu)
    texts = [f"t{i}" for i in range(2100)]
    resp = httpx.post(gateway.base_url + "/v1/embeddings", timeout=30,
                      headers={"authorization": f"Bearer {GATEWAY_KEY}"},
                      json={"model": "embed", "input": texts, "dimensions": 2})
    assert resp.status_code == 200
    assert [d["index"] for d in resp.json()["data"]] == list(range(2100))
    sizes = [len(r["body"]["input"]) for r in emu.requests(since=since, endpoint="embeddings")["requests"]]
    assert sizes == [2048, 52]


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"model": "nope", "input": "x"}, 404, "model_not_found"),
    ({"model": "embed", "input": ""}, 400, "invalid_conversation"),
    ({"model": "embed", "input": []}, 400, "invalid_conversation"),
    ({"model": "embed", "input": "x", "encoding_format": "int8"}, 400, "invalid_conversation"),
    ({"model": "chat", "input": "x"}, 404, "model_not_found"),  # a model without embeddings
    ({"model": "embed", "input": "x" * 400_000}, 413, "body_too_large"),
], ids=["unknown-model", "empty-string", "empty-list", "bad-encoding", "chat-model", "too-large"])
def test_bad_requests_get_openai_shaped_errors(gateway, body, status, code):
    resp = httpx.post(gateway.base_url + "/v1/embeddings", json=body, timeout=10,
                      headers={"authorization": f"Bearer {GATEWAY_KEY}"})
    assert resp.status_code == status
    err = resp.json()["error"]
    assert err["code"] == code and isinstance(err["message"], str) and err["message"]


def test_the_gateway_key_is_required(gateway):
    with openai.OpenAI(base_url=gateway.base_url + "/v1", api_key="wrong-key", max_retries=0) as c, \
            pytest.raises(openai.AuthenticationError):
        c.embeddings.create(model="embed", input="x")


def test_each_request_writes_one_access_line(sdk, caplog):
    caplog.set_level(logging.INFO, logger="modelwire.gateway.access")
    sdk.embeddings.create(model="text-embedding-3-small", input="logged")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not [r for r in caplog.records if "embeddings" in r.getMessage()]:
        time.sleep(0.01)
    lines = [r.getMessage() for r in caplog.records if r.name == "modelwire.gateway.access"]
    assert any(" embeddings model=embed upstream=emulator/emulator-embed-1 status=200 " in line
               for line in lines), lines
