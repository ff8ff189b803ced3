"""The emulator's ``POST /v1/embeddings``: deterministic vectors under OpenAI's rules.

Same text, same vector, in every process: each word has a fixed pseudo-random vector
(SHAKE-256 of the word), a text's vector is the sum of its words' (so texts that share
words point the same way, which makes similarity examples meaningful), cut to
``dimensions`` and scaled to unit length, as OpenAI's ``text-embedding-3`` models do.
``input_type`` (Voyage-style; NIM's ``passage`` is a document) adds one marker word, so a query and a document of the same
text differ a little. ``encoding_format: base64`` answers little-endian float32.

The rules are OpenAI's (see :data:`MAX_INPUTS` and friends): too many inputs, too many
tokens, an empty input, an unknown model, ``dimensions`` on a model without it: each
is the 400 or 404 the real API answers, in its shape.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import sys
from array import array
from dataclasses import dataclass
from typing import Any

from ..embeddings import encode_response
from ..types import JSONValue
from .wire import ApiError, tokens

__all__ = ["EMBEDDING_MODELS", "MAX_INPUTS", "MAX_INPUT_TOKENS", "MAX_REQUEST_TOKENS", "serve"]

# OpenAI's limits (platform.openai.com/docs/api-reference/embeddings/create, 2026-12-01)
MAX_INPUTS = 2048
MAX_REQUEST_TOKENS = 300_000
MAX_INPUT_TOKENS = 8192


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    dimensions: int
    flexible: bool  # takes `dimensions`


EMBEDDING_MODELS: dict[str, EmbeddingModel] = {
    "emulator-embed-1": EmbeddingModel(256, True),
    "text-embedding-3-small": EmbeddingModel(1536, True),
    "text-embedding-3-large": EmbeddingModel(3072, True),
    "text-embedding-ada-002": EmbeddingModel(1536, False),
}

_WORD = re.compile(r"\w+")
# input_type values: Voyage's (query, document) and NVIDIA NIM's (query, passage)
_KINDS = {None: None, "query": "query", "document": "document", "passage": "document"}
_INVALID_INPUT = ("'$.input' is invalid. Please check the API reference: "
                  "https://platform.openai.com/docs/api-reference.")


def serve(body: JSONValue) -> bytes:
    """The answer to one request body (parsed JSON), or an :class:`ApiError`."""
    if not isinstance(body, dict):
        raise ApiError(400, "We could not parse the JSON body of your request.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "you must provide a model parameter", param="model")
    spec = EMBEDDING_MODELS.get(model)
    if spec is None:
        raise ApiError(404, f"The model `{model}` does not exist or you do not have access to it.",
                       code="model_not_found")
    inputs = _inputs(body.get("input"))
    dims = _dimensions(body.get("dimensions"), spec)
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise ApiError(400, f"Invalid value for 'encoding_format': {fmt!r}. Supported values are: "
                       "'float' and 'base64'.", param="encoding_format", code="invalid_value")
    kind = _KINDS.get(body.get("input_type"), "?")
    if kind == "?":
        raise ApiError(400, f"Invalid value for 'input_type': {body.get('input_type')!r}.",
                       param="input_type")
    counts = [_tokens(item) for item in inputs]
    for i, n in enumerate(counts):
        if n > MAX_INPUT_TOKENS:
            raise ApiError(400, f"input[{i}]: this model's maximum input length is "
                           f"{MAX_INPUT_TOKENS} tokens, however you requested {n} tokens.",
                           param="input", code="context_length_exceeded")
    total = sum(counts)
    if total > MAX_REQUEST_TOKENS:
        raise ApiError(400, f"Requested {total} tokens, max {MAX_REQUEST_TOKENS} tokens per request",
                       param="input", code="max_tokens_per_request")
    marker = f"__{kind}__" if kind else None
    vectors = [embed_text(_words(item, marker), spec.dimensions, dims) for item in inputs]
    return encode_response(vectors, model, {"prompt_tokens": total, "total_tokens": total}, fmt)


def _inputs(raw: JSONValue) -> list[Any]:
    if isinstance(raw, str):
        raw = [raw]
    elif isinstance(raw, list) and raw and all(type(t) is int for t in raw):
        raw = [raw]  # one input as token ids
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, _INVALID_INPUT, param="input")
    if len(raw) > MAX_INPUTS:
        raise ApiError(400, f"Too many inputs: {len(raw)}. The maximum number of inputs in one "
                       f"request is {MAX_INPUTS}.", param="input")
    for item in raw:
        ok = (isinstance(item, str) and item) or (
            isinstance(item, list) and item and all(type(t) is int for t in item))
        if not ok:
            raise ApiError(400, _INVALID_INPUT, param="input")
    return raw


def _dimensions(raw: JSONValue, spec: EmbeddingModel) -> int:
    if raw is None:
        return spec.dimensions
    if not spec.flexible:
        raise ApiError(400, "This model does not support specifying dimensions.", param="dimensions")
    if type(raw) is not int or not 1 <= raw <= spec.dimensions:
        raise ApiError(400, f"Invalid value for 'dimensions' = {raw}. Must be between 1 and "
                       f"{spec.dimensions}.", param="dimensions", code="invalid_value")
    return raw


def _tokens(item: JSONValue) -> int:
    return tokens(len(item)) if isinstance(item, str) else len(item)


def _words(item: JSONValue, marker: str | None) -> list[str]:
    words = _WORD.findall(item.lower()) if isinstance(item, str) else [f"#{t}" for t in item]
    if not words:  # punctuation only: the text itself is its one word
        words = [item if isinstance(item, str) else "#"]
    if marker:
        words.append(marker)
    return words


def embed_text(words: list[str], native: int, dims: int) -> list[float]:
    """The unit vector of ``words`` (native width cut to ``dims``)."""
    acc = list(_word_vector(words[0], native))
    for word in words[1:]:
        acc = [a + b for a, b in zip(acc, _word_vector(word, native), strict=True)]
    cut = acc[:dims]
    norm = math.sqrt(math.fsum(v * v for v in cut)) or 1.0
    return [v / norm for v in cut]


@functools.lru_cache(maxsize=8192)
def _word_vector(word: str, native: int) -> array:  # type: ignore[type-arg]
    raw = array("h")
    raw.frombytes(hashlib.shake_256(word.encode()).digest(2 * native))
    if sys.byteorder == "big":  # the same vectors on every machine
        raw.byteswap()
    return raw
