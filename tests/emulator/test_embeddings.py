"""The emulator's ``POST /v1/embeddings`` over HTTP: deterministic vectors, dimensions,
base64, and OpenAI's limits and errors in OpenAI's shape."""

from __future__ import annotations

import base64
import math
from array import array

import httpx
import pytest

from modelwire.emulator import Emulator
from modelwire.emulator.embeddings import MAX_INPUTS, MAX_REQUEST_TOKENS

KEY = "sk-test-emu-embed-0123456789"


@pytest.fixture(scope="module")
def post(emulator_url):
    with httpx.Client(base_url=emulator_url, headers={"authorization": f"Bearer {KEY}"},
                      timeout=30) as http:
        yield lambda body, **kw: http.post("/v1/embeddings", json=body, **kw)


@pytest.fixture(scope="module")
def emulator_url():
    with Emulator() as emu:
        yield emu.openai_base_url().removesuffix("/v1")


def _vectors(resp):
    assert resp.status_code == 200, resp.text
    return [d["embedding"] for d in resp.json()["data"]]


def test_same_text_same_vector_unit_length_and_openai_shape(post):
    first = post({"model": "text-embedding-3-small", "input": ["alpha beta", "gamma"]})
    again = post({"model": "text-embedding-3-small", "input": "alpha beta"})
    body = first.json()
    assert body["object"] == "list" and body["model"] == "text-embedding-3-small"
    assert [(d["object"], d["index"]) for d in body["data"]] == [("embedding", 0), ("embedding", 1)]
    assert body["usage"] == {"prompt_tokens": 3 + 2, "total_tokens": 5}
    a, b = _vectors(first)
    assert len(a) == 1536 and a == _vectors(again)[0] and a != b
    assert abs(math.fsum(x * x for x in a) - 1.0) < 1e-9


def test_dimensions_cut_and_renormalize_the_same_direction(post):
    full = _vectors(post({"model": "text-embedding-3-large", "input": "cut me"}))[0]
    short = _vectors(post({"model": "text-embedding-3-large", "input": "cut me", "dimensions": 64}))[0]
    norm = math.sqrt(math.fsum(x * x for x in full[:64]))
    assert len(short) == 64 and all(abs(s - f / norm) < 1e-12 for s, f in zip(short, full, strict=False))


def test_base64_is_little_endian_float32_of_the_float_answer(post):
    floats = _vectors(post({"model": "emulator-embed-1", "input": "pack me"}))[0]
    packed = _vectors(post({"model": "emulator-embed-1", "input": "pack me", "encoding_format": "base64"}))[0]
    unpacked = array("f")
    unpacked.frombytes(base64.b64decode(packed))
    assert len(unpacked) == 256 and all(abs(u - f) < 1e-6 for u, f in zip(unpacked, floats, strict=True))


def test_token_id_inputs_are_taken(post):
    (one,) = _vectors(post({"model": "emulator-embed-1", "input": [1, 2, 3]}))
    two = _vectors(post({"model": "emulator-embed-1", "input": [[1, 2, 3], [4]]}))
    assert one == two[0] and len(two) == 2


@pytest.mark.parametrize(("body", "status", "param", "code"), [
    ({"model": "gpt-4o", "input": "x"}, 404, None, "model_not_found"),
    ({"input": "x"}, 400, "model", None),
    ({"model": "emulator-embed-1", "input": ""}, 400, "input", None),
    ({"model": "emulator-embed-1", "input": []}, 400, "input", None),
    ({"model": "emulator-embed-1", "input": ["ok", ""]}, 400, "input", None),
    ({"model": "emulator-embed-1", "input": ["x"] * (MAX_INPUTS + 1)}, 400, "input", None),
    ({"model": "emulator-embed-1", "input": ["x" * 4000] * 301}, 400, "input", "max_tokens_per_request"),
    ({"model": "emulator-embed-1", "input": "x" * 40_000}, 400, "input", "context_length_exceeded"),
    ({"model": "text-embedding-ada-002", "input": "x", "dimensions": 8}, 400, "dimensions", None),
    ({"model": "emulator-embed-1", "input": "x", "dimensions": 257}, 400, "dimensions", "invalid_value"),
    ({"model": "emulator-embed-1", "input": "x", "encoding_format": "int8"}, 400, "encoding_format", "invalid_value"),
], ids=["unknown-model", "no-model", "empty-string", "empty-list", "one-empty", "too-many-inputs",
        "too-many-tokens", "input-too-long", "ada-dimensions", "too-wide", "bad-encoding"])
def test_real_limits_and_errors(post, body, status, param, code):
    resp = post(body)
    assert resp.status_code == status
    err = resp.json()["error"]
    assert (err["param"], err["code"], err["type"]) == (param, code, "invalid_request_error")


def test_the_limits_themselves_pass(post):
    at_inputs = post({"model": "emulator-embed-1", "input": ["x"] * MAX_INPUTS, "dimensions": 1})
    at_tokens = post({"model": "emulator-embed-1", "input": ["x" * 4000] * (MAX_REQUEST_TOKENS // 1000),
                      "dimensions": 1})
    assert (at_inputs.status_code, at_tokens.status_code) == (200, 200)


def test_faults_and_keys_apply_as_on_the_other_endpoints(post):
    limited = post({"model": "emulator-embed-1", "input": "x"}, headers={"x-emulator-fault": "rate_limit"})
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limit_exceeded"
    anonymous = httpx.post(limited.request.url, json={"model": "emulator-embed-1", "input": "x"})
    assert anonymous.status_code == 401
