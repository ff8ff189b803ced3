"""The embeddings codec without a network: request fields per row, answers decoded in
input order from floats or base64, and malformed answers refused."""

from __future__ import annotations

import base64
from array import array

import orjson
import pytest

from modelwire import MessageError, ProtocolError, UnsupportedContentError
from modelwire.codecs import Target
from modelwire.embeddings import decode_request, decode_response, encode_request, encode_response
from modelwire.providers import CATALOG


def _b64(values):
    return base64.b64encode(array("f", values).tobytes()).decode()


def test_request_uses_the_rows_field_names_and_auth():
    nvidia = CATALOG["nvidia"]
    req = encode_request(["q"], Target(nvidia, "nvidia/nv-embedqa-e5-v5", "sk-fake-1234"),
                         nvidia.embeddings, dimensions=256, input_type="document")
    assert (req.method, req.path) == ("POST", "/embeddings")
    assert req.headers["authorization"] == "Bearer sk-fake-1234"
    assert orjson.loads(req.body) == {"model": "nvidia/nv-embedqa-e5-v5", "input": ["q"],
                                      "dimensions": 256, "input_type": "passage"}
    mistral = CATALOG["mistral"]
    body = orjson.loads(encode_request(["x"], Target(mistral, "codestral-embed", "k"), mistral.embeddings,
                                       dimensions=512, encoding="base64").body)
    assert body == {"model": "codestral-embed", "input": ["x"], "output_dimension": 512,
                    "encoding_format": "base64"}
    azure = CATALOG["azure"]
    headers = encode_request(["x"], Target(azure, "dep", "az-key"), azure.embeddings).headers
    assert headers["api-key"] == "az-key" and "authorization" not in headers


def test_a_field_the_row_lacks_is_refused():
    lm = CATALOG["lmstudio"]
    with pytest.raises(UnsupportedContentError, match="dimensions"):
        encode_request(["x"], Target(lm, "m"), lm.embeddings, dimensions=8)


def test_answers_come_back_in_input_order_from_either_encoding():
    body = orjson.dumps({"data": [{"index": 1, "embedding": _b64([0.5, -1.0])},
                                  {"index": 0, "embedding": [0.25, 2.0]}],
                         "model": "m", "usage": {"prompt_tokens": 3, "total_tokens": 3}})
    vectors, usage, model = decode_response(body, 2)
    assert vectors == [[0.25, 2.0], [0.5, -1.0]] and usage["total_tokens"] == 3 and model == "m"


@pytest.mark.parametrize("body", [
    b"not json",
    orjson.dumps({"data": [{"index": 0, "embedding": [1.0]}]}),  # one vector for two inputs
    orjson.dumps({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}),
    orjson.dumps({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": 3}]}),
], ids=["not-json", "too-few", "repeated-index", "not-a-vector"])
def test_malformed_answers_are_protocol_errors(body):
    with pytest.raises(ProtocolError):
        decode_response(body, 2)


def test_the_gateways_side_round_trips_and_checks_its_input():
    assert decode_request({"model": "m", "input": [1, 2]})["input"] == [[1, 2]]
    with pytest.raises(MessageError):
        decode_request({"model": "m", "input": "x", "dimensions": 0})
    out = orjson.loads(encode_response([[0.5, 1.5]], "m", {"prompt_tokens": 1, "total_tokens": 1}, "base64"))
    assert decode_response(orjson.dumps(out), 1)[0] == [[0.5, 1.5]]
