"""Embeddings over OpenAI's ``POST /embeddings`` shape: the sans-IO codec.

Bytes and dicts in, bytes and values out; no HTTP, no clock. The Client
(:meth:`modelwire.Client.embed`) and the gateway's ``/v1/embeddings`` stand on it:

* :func:`plan_batches` cuts the inputs into requests that keep under an endpoint's
  limits (:class:`~modelwire.providers.embedding.EmbeddingSpec`: inputs and tokens per
  request);
* :func:`encode_request` writes one request for a row (its field names for dimensions and
  input type), :func:`decode_response` reads the answer (JSON floats or base64 float32)
  back in input order;
* :func:`decode_request` / :func:`encode_response` are the gateway's side of the same shape.

Vectors are lists of floats; ``numpy=True`` asks for one ``float32`` array of shape
``(inputs, dimensions)`` instead (NumPy imported then, never on ``import modelwire``).
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict, cast

import orjson

from .codecs import EncodedRequest, Target
from .errors import MessageError, ProtocolError, UnsupportedContentError
from .providers.embedding import EmbeddingEncoding, EmbeddingSpec, InputType
from .types import JSONValue, json_list, json_object

__all__ = [
    "EmbeddingRequest",
    "EmbeddingUsage",
    "Embeddings",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "estimate_input_tokens",
    "plan_batches",
    "stack",
]

PATH = "/embeddings"
_LITTLE = sys.byteorder == "little"  # base64 vectors are little-endian float32 on the wire

# one input: text, or token ids (what OpenAI's own clients send after tokenizing)
Input = str | Sequence[int]


class EmbeddingUsage(TypedDict):
    prompt_tokens: int
    total_tokens: int


class EmbeddingRequest(TypedDict, total=False):
    """What the gateway's front door decoded: the Client's arguments."""

    model: Required[str]
    input: Required[list[Any]]
    dimensions: int
    input_type: InputType
    encoding_format: EmbeddingEncoding
    user: str


@dataclass(frozen=True, slots=True)
class Embeddings:
    """The vectors of one :meth:`~modelwire.Client.embed` call, in input order.

    ``vectors``: a list of lists of floats, or a NumPy ``float32`` array when asked for;
    ``model`` and ``provider``: who made them (every vector of one call comes from one
    model, also after a fallback); ``attempts``: each request's attempts, in order.
    """

    vectors: Any
    usage: EmbeddingUsage
    model: str
    provider: str
    attempts: tuple[Any, ...] = ()
    # AsyncClient.embed's time facts (a :class:`~modelwire.completion.Timing`; None from the sync Client)
    timing: Any = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.vectors)


# ------------------------------------------------------------------ batching
def estimate_input_tokens(item: Input) -> int:
    """Tokens one input may cost, on the high side: a token per 3 UTF-8 bytes (English
    runs near 4 bytes a token, CJK near 3), a token per id for token arrays."""
    if isinstance(item, str):
        return len(item.encode()) // 3 + 1
    return len(item)


def plan_batches(inputs: Sequence[Input], spec: EmbeddingSpec) -> list[tuple[int, int]]:
    """``(start, stop)`` slices of ``inputs``, in order, each within ``spec``'s inputs and
    tokens per request. An input alone above the token cap still gets its own request
    (the provider says whether it truncates or refuses)."""
    out: list[tuple[int, int]] = []
    cap = spec.max_request_tokens
    start, used = 0, 0
    for i, item in enumerate(inputs):
        cost = estimate_input_tokens(item) if cap is not None else 0
        full = i - start >= spec.max_inputs or (cap is not None and used + cost > cap)
        if full and i > start:
            out.append((start, i))
            start, used = i, 0
        used += cost
    if start < len(inputs):
        out.append((start, len(inputs)))
    return out


# ------------------------------------------------------------------ requests
def check_inputs(inputs: object) -> list[Input]:
    """The inputs as a list, or a :class:`MessageError` saying which one is wrong."""
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, Sequence) or not inputs:
        raise MessageError("embed() needs at least one input (a string or a list of strings)")
    out = list(cast("Sequence[Input]", inputs))
    for i, item in enumerate(out):
        if isinstance(item, str):
            if not item:
                raise MessageError(f"input[{i}] is an empty string: providers refuse it")
        elif isinstance(item, (bytes, bytearray)) or not (  # pyright: ignore[reportUnnecessaryIsInstance]
                isinstance(item, Sequence) and item and all(type(t) is int for t in item)):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise MessageError(f"input[{i}] must be a non-empty string or a list of token ids")
    return out


def encode_request(inputs: Sequence[Input], target: Target, spec: EmbeddingSpec, *,
                   dimensions: int | None = None, input_type: InputType | None = None,
                   encoding: EmbeddingEncoding = "float") -> EncodedRequest:
    """One ``POST /embeddings`` for ``target``, in its row's field names."""
    profile = target.profile
    body: dict[str, Any] = {"model": target.model, "input": list(inputs)}
    if encoding == "base64":
        body["encoding_format"] = "base64"
    if dimensions is not None:
        if spec.dimensions_field is None:
            raise UnsupportedContentError(
                f"{profile.name} cannot choose the size of its vectors (dimensions={dimensions}): "
                "leave dimensions out, or use a model and provider that take it")
        body[spec.dimensions_field] = dimensions
    if input_type is not None:
        value = spec.input_type_value(input_type) if spec.input_type_field else None
        if value is None:
            raise UnsupportedContentError(
                f"{profile.name} has no input type for its embeddings (input_type={input_type!r}): "
                "leave it out, or use a provider with Voyage-style input_type")
        body[spec.input_type_field] = value  # type: ignore[index]
    headers = {"content-type": "application/json"}
    headers.update(target.auth_headers())
    if profile.default_headers:
        headers.update({k.lower(): v for k, v in profile.default_headers})
    if target.headers:
        headers.update({k.lower(): v for k, v in target.headers})
    return EncodedRequest("POST", PATH, headers, orjson.dumps(body))


# ------------------------------------------------------------------ responses
def decode_response(body: bytes, count: int, *, raw: bool = False) -> tuple[list[Any], EmbeddingUsage, str]:
    """``(vectors, usage, model)`` of an answer to ``count`` inputs, in input order.

    ``raw=True`` keeps base64 vectors as their float32 bytes (for :func:`stack`, which
    makes one NumPy array without a detour through Python floats)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"embeddings answer is not JSON: {exc}") from exc
    answer = json_object(data) or {}
    items = json_list(answer.get("data"))
    if not isinstance(answer.get("data"), list) or len(items) != count:
        got = len(items) if isinstance(answer.get("data"), list) else "no"
        raise ProtocolError(f"embeddings answer has {got} vectors for {count} inputs")
    vectors: list[Any] = [None] * count
    for pos, entry in enumerate(items):
        item = json_object(entry)
        index = item.get("index", pos) if item is not None else None
        if type(index) is not int or not 0 <= index < count or vectors[index] is not None:
            raise ProtocolError(f"embeddings answer: data[{pos}] has a bad or repeated index")
        assert item is not None  # index would be None otherwise
        vectors[index] = _vector(item.get("embedding"), raw)
    return vectors, _usage(answer.get("usage")), str(answer.get("model") or "")


def _vector(value: JSONValue, raw: bool) -> Any:
    if isinstance(value, str):
        packed = base64.b64decode(value)
        if raw and _LITTLE:
            return packed
        floats = array("f")
        floats.frombytes(packed)
        if not _LITTLE:
            floats.byteswap()
        return floats if raw else floats.tolist()
    if isinstance(value, list):
        return cast("list[float]", value)
    raise ProtocolError("embeddings answer: an embedding is neither a list nor base64")


def _usage(value: JSONValue) -> EmbeddingUsage:
    raw = json_object(value) or {}
    prompt = int(raw.get("prompt_tokens") or raw.get("total_tokens") or 0)
    return {"prompt_tokens": prompt, "total_tokens": int(raw.get("total_tokens") or prompt)}


def stack(rows: list[Any]) -> Any:
    """One ``float32`` NumPy array from decoded rows (float32 bytes, arrays or lists)."""
    try:
        import numpy as np
    except ImportError as exc:  # asked for explicitly: say what is missing
        raise ImportError("embed(numpy=True) needs NumPy: pip install numpy") from exc
    if rows and all(type(r) is bytes for r in rows):
        return np.frombuffer(b"".join(rows), dtype="<f4").reshape(len(rows), -1)
    return np.asarray([r if isinstance(r, list) else r.tolist() for r in rows], dtype=np.float32)


# ------------------------------------------------------------------ the gateway's side
def decode_request(body: JSONValue) -> EmbeddingRequest:
    """An OpenAI-shaped embeddings request body (parsed JSON), checked: a
    :class:`MessageError` names what is wrong."""
    data = json_object(body)
    if data is None:
        raise MessageError("request body must be a JSON object")
    raw: JSONValue = data.get("input")
    tokens = json_list(raw)
    if tokens and all(type(t) is int for t in tokens):
        raw = [tokens]  # one input given as token ids
    model: Any = data.get("model")  # checked by the gateway's model table
    req: EmbeddingRequest = {"model": model, "input": check_inputs(raw)}
    fmt = data.get("encoding_format")
    if fmt is not None:
        if fmt not in ("float", "base64"):
            raise MessageError(f"encoding_format must be 'float' or 'base64', got {fmt!r}")
        req["encoding_format"] = fmt
    dims = data.get("dimensions")
    if dims is not None:
        if type(dims) is not int or dims < 1:
            raise MessageError(f"dimensions must be a positive integer, got {dims!r}")
        req["dimensions"] = dims
    kind = data.get("input_type")
    if kind is not None:
        if kind not in ("query", "document"):
            raise MessageError(f"input_type must be 'query' or 'document', got {kind!r}")
        req["input_type"] = kind
    return req


def encode_response(vectors: Sequence[Any], model: str, usage: EmbeddingUsage,
                    encoding: EmbeddingEncoding = "float") -> bytes:
    """An OpenAI-shaped embeddings answer (JSON bytes)."""
    if encoding == "base64":
        rows: list[Any] = [_b64(v) for v in vectors]
    else:
        rows = [v if isinstance(v, list) else list(v) for v in vectors]
    data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
    return orjson.dumps({"object": "list", "data": data, "model": model,
                         "usage": {"prompt_tokens": usage["prompt_tokens"],
                                   "total_tokens": usage["total_tokens"]}})


def _b64(vector: Any) -> str:
    packed = array("f", vector)
    if not _LITTLE:
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode()
