"""``Client.embed`` over real loopback HTTP against the emulator: vectors in input order,
batching to the limits, the chat ladder (retry, fallback), and errors before any request."""

from __future__ import annotations

import asyncio
import math

import pytest

from modelwire import (
    AsyncClient,
    Client,
    ConfigError,
    MessageError,
    ModelNotFoundError,
    UnsupportedContentError,
)
from modelwire.config import config_from_dict
from modelwire.emulator import Emulator
from modelwire.emulator.embeddings import MAX_REQUEST_TOKENS
from modelwire.resilience import RetryPolicy

KEY = "sk-test-embed-0123456789"
STEADY = RetryPolicy(jitter=0)


@pytest.fixture(scope="module")
def emu():
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def wire(emu):
    emu.clear_faults()
    start = emu.requests()["requests"]
    since = start[-1]["n"] if start else 0
    yield lambda: emu.requests(since=since, endpoint="embeddings")["requests"]
    emu.clear_faults()


def _client(emu, model="emulator-embed-1", **kw):
    kw.setdefault("retry", STEADY)
    kw.setdefault("sleep", lambda s: None)
    return Client(f"emulator/{model}", base_url=emu.openai_base_url(), api_key=KEY, **kw)


def _close(a, b, tol=1e-6):
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def test_vectors_come_back_in_input_order_unit_length_and_deterministic(emu, wire):
    with _client(emu) as c:
        texts = ["the cat sat on the mat", "stock markets fell today", "a cat sat down"]
        first = c.embed(texts)
        again = c.embed(list(reversed(texts)))
    assert len(first.vectors) == 3 and all(len(v) == 256 for v in first.vectors)
    assert all(abs(math.fsum(x * x for x in v) - 1.0) < 1e-5 for v in first.vectors)
    assert [_close(a, b) for a, b in zip(first.vectors, reversed(again.vectors))] == [True] * 3
    dot = [math.fsum(x * y for x, y in zip(first.vectors[0], v)) for v in first.vectors[1:]]
    assert dot[1] > dot[0]  # shared words point the same way
    # the emulator counts characters / 4, rounded up, per input
    assert first.usage == {"prompt_tokens": 6 + 6 + 4, "total_tokens": 16}
    assert (first.model, first.provider) == ("emulator-embed-1", "emulator")
    assert [a.outcome for a in first.attempts] == ["ok"]
    assert len(wire()) == 2


def test_base64_is_the_default_wire_encoding_and_decodes_to_the_float_answer(emu, wire):
    with _client(emu) as c:
        packed = c.embed("one text", dimensions=32)
        floats = c.embed("one text", dimensions=32, encoding="float")
    bodies = [r["body"] for r in wire()]
    assert bodies[0] == {"model": "emulator-embed-1", "input": ["one text"],
                         "encoding_format": "base64", "dimensions": 32}
    assert "encoding_format" not in bodies[1]
    assert len(packed.vectors[0]) == 32
    assert _close(packed.vectors[0], floats.vectors[0], tol=1e-6)  # float32 on the wire


def test_numpy_array_when_asked(emu, wire):
    np = pytest.importorskip("numpy")
    with _client(emu) as c:
        listed = c.embed(["a b", "c d"])
        array = c.embed(["a b", "c d"], numpy=True).vectors
    assert isinstance(array, np.ndarray) and array.shape == (2, 256) and array.dtype == np.float32
    assert _close(array[1].tolist(), listed.vectors[1], tol=1e-7)


def test_more_inputs_than_a_request_takes_are_split_and_kept_in_order(emu, wire):
    texts = [f"item {i}" for i in range(2050)]
    with _client(emu) as c:
        many = c.embed(texts, dimensions=8)
        last = c.embed(texts[-1], dimensions=8)
    sizes = [len(r["body"]["input"]) for r in wire()]
    assert sizes == [2048, 2, 1]
    assert all(r["status"] == 200 for r in wire())
    assert _close(many.vectors[-1], last.vectors[0])
    assert many.usage["prompt_tokens"] == sum(math.ceil(len(t) / 4) for t in texts)
    assert [a.outcome for a in many.attempts] == ["ok", "ok"]


def test_inputs_are_split_to_stay_under_the_tokens_per_request(emu, wire):
    # 400 inputs of 1,000 emulator tokens: one request would be 400,000 > 300,000
    texts = [f"{i:04d}" + "x" * 3996 for i in range(400)]
    with _client(emu) as c:
        done = c.embed(texts, dimensions=4)
    requests = wire()
    assert len(requests) >= 2 and all(r["status"] == 200 for r in requests)
    assert all(sum(math.ceil(len(t) / 4) for t in r["body"]["input"]) <= MAX_REQUEST_TOKENS
               for r in requests)
    assert len(done.vectors) == 400


def test_a_rate_limited_batch_is_retried_after_the_hint(emu, wire):
    emu.set_faults([{"fault": "rate_limit", "endpoint": "embeddings", "requests": [1],
                     "retry_after": 2}])
    sleeps = []
    with _client(emu, sleep=sleeps.append) as c:
        done = c.embed(["hello"])
    assert [r["status"] for r in wire()] == [429, 200]
    assert sleeps == [2.0]
    assert [a.outcome for a in done.attempts] == ["retried", "ok"]


def test_a_fallback_mid_call_sends_every_batch_to_the_fallback_model(emu, wire, monkeypatch):
    monkeypatch.setenv("EMBED_TEST_KEY", KEY)
    # the primary answers the first batch, then runs out of quota: the fallback model
    # embeds every input, the first batch again (two models' vectors do not mix)
    emu.set_faults([{"fault": "quota", "endpoint": "embeddings", "model": "text-embedding-3-small",
                     "requests": [2]}])
    texts = [f"doc {i}" for i in range(2050)]
    entry = {"provider": "emulator", "base_url": emu.openai_base_url(), "api_key_env": "EMBED_TEST_KEY"}
    config = config_from_dict({"models": {
        "primary": {**entry, "model": "text-embedding-3-small"},
        "backup": {**entry, "model": "emulator-embed-1"}}, "fallback": ["backup"]})
    with Client("primary", config=config, retry=STEADY, sleep=lambda s: None) as c:
        done = c.embed(texts)
        models = [(r["body"]["model"], len(r["body"]["input"]), r["status"]) for r in wire()]
        later = c.embed("the next call")  # sticky: starts at the model that served
    assert [a.outcome for a in later.attempts] == ["skipped", "ok"]
    assert [r["body"]["model"] for r in wire()][len(models):] == ["emulator-embed-1"]
    assert models == [("text-embedding-3-small", 2048, 200), ("text-embedding-3-small", 2, 402),
                      ("emulator-embed-1", 2, 200), ("emulator-embed-1", 2048, 200)]
    assert done.model == "emulator-embed-1" and {len(v) for v in done.vectors} == {256}
    assert [a.outcome for a in done.attempts] == ["ok", "fell_back", "ok", "ok"]
    with _client(emu) as direct:
        assert _close(direct.embed(texts[0]).vectors[0], done.vectors[0])


def test_async_client_embeds_the_same_vectors(emu, wire):
    async def run():
        async with AsyncClient("emulator/emulator-embed-1", base_url=emu.openai_base_url(),
                               api_key=KEY) as c:
            return await c.embed(["async text", "second"], dimensions=16)

    got = asyncio.run(run())
    with _client(emu) as c:
        want = c.embed(["async text", "second"], dimensions=16)
    assert [_close(a, b) for a, b in zip(got.vectors, want.vectors)] == [True, True]
    assert got.usage == want.usage


def test_input_type_reaches_the_wire_and_changes_the_vector(emu, wire):
    with _client(emu) as c:
        query = c.embed("what is a cat", input_type="query")
        doc = c.embed("what is a cat", input_type="document")
    assert [r["body"].get("input_type") for r in wire()] == ["query", "document"]
    assert not _close(query.vectors[0], doc.vectors[0])


def test_unknown_model_is_model_not_found(emu, wire):
    with _client(emu, "no-such-embedder") as c, pytest.raises(ModelNotFoundError):
        c.embed("x")


@pytest.mark.parametrize("bad", [[], "", ["ok", ""], [["a"]], [b"ab"]],
                         ids=["none", "empty", "one-empty", "not-text", "bytes"])
def test_bad_inputs_fail_before_any_request(emu, wire, bad):
    with _client(emu) as c, pytest.raises(MessageError):
        c.embed(bad)
    assert wire() == []


def test_settings_a_provider_cannot_express_are_refused_not_dropped(emu, wire):
    together = Client("together/BAAI/bge-large-en-v1.5", base_url=emu.openai_base_url(), api_key=KEY)
    openai = Client("openai/text-embedding-3-small", base_url=emu.openai_base_url(), api_key=KEY)
    with pytest.raises(UnsupportedContentError, match="dimensions"):
        together.embed("x", dimensions=64)
    with pytest.raises(UnsupportedContentError, match="input_type"):
        openai.embed("x", input_type="query")
    assert wire() == []


def test_a_provider_without_embeddings_is_refused_by_name(emu):
    with pytest.raises(ConfigError, match="anthropic"):
        Client("anthropic/claude-sonnet-4-6", api_key=KEY).embed("x")


def test_a_revoked_key_rotates_to_the_next_one_in_the_pool(emu, wire, monkeypatch):
    from modelwire.credentials import CredentialPool

    env_key, manual_key = "sk-env-embed-aaaaaaaa1111", "sk-manual-embed-bbbbbb2222"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    pool = CredentialPool.for_provider("openai")
    pool.add(manual_key, label="manual")  # manual entries come first
    emu.set_faults([{"fault": "unauthorized", "endpoint": "embeddings", "requests": [1]}])
    with Client("openai/emulator-embed-1", base_url=emu.openai_base_url(), retry=STEADY,
                sleep=lambda s: None) as c:
        done = c.embed(["rotate me"])
    assert [r["headers"]["authorization"][-4:] for r in wire()] == ["2222", "1111"]
    assert [(a.outcome, a.credential) for a in done.attempts] == [("rotated", "manual"), ("ok", "OPENAI_API_KEY")]
