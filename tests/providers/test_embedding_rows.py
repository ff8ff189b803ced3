"""Every catalog row that offers embeddings: its limits are cited, and the request it
writes (path, auth header, field names) reaches a loopback server as the row says."""

from __future__ import annotations

import re

import pytest

from modelwire import Client
from modelwire.embeddings import plan_batches
from modelwire.emulator import Emulator
from modelwire.providers import CATALOG
from modelwire.providers.embedding import EmbeddingSpec

KEY = "sk-test-rows-0123456789"
ROWS = sorted(name for name, p in CATALOG.items() if p.embeddings is not None)
_AUTH = {"bearer": "authorization", "api-key": "api-key", "x-api-key": "x-api-key"}


def test_the_rows_the_issue_names_offer_embeddings():
    wanted = {"openai", "azure", "mistral", "nvidia", "gemini", "together", "fireworks",
              "deepinfra", "ollama", "vllm", "lmstudio", "llamacpp"}
    assert wanted <= set(ROWS)
    assert CATALOG["anthropic"].embeddings is None and CATALOG["groq"].embeddings is None


@pytest.mark.parametrize("name", [r for r in ROWS if not r.startswith(("emulator", "custom"))])
def test_each_rows_limits_cite_a_page_and_the_day_it_was_read(name):
    spec = CATALOG[name].embeddings
    assert re.fullmatch(r"https://\S+ \(\d{4}-\d{2}-\d{2}\)", spec.source), spec.source
    assert spec.max_inputs >= 1
    assert spec.max_request_tokens is None or spec.max_request_tokens > 1000


def test_batches_keep_under_both_the_input_and_the_token_caps():
    spec = EmbeddingSpec(max_inputs=3, max_request_tokens=10)
    texts = ["a" * 12, "b", "c", "d", "e" * 30, "f"]  # estimates 5, 1, 1, 1, 11, 1
    assert plan_batches(texts, spec) == [(0, 3), (3, 4), (4, 5), (5, 6)]
    assert plan_batches(["x"] * 7, EmbeddingSpec(max_inputs=3)) == [(0, 3), (3, 6), (6, 7)]


@pytest.fixture(scope="module")
def emu():
    with Emulator() as emulator:
        yield emulator


@pytest.mark.parametrize("name", ROWS)
def test_row_request_shape_over_loopback(emu, name):
    profile = CATALOG[name]
    spec = profile.embeddings
    kwargs = {}
    if spec.dimensions_field:
        kwargs["dimensions"] = 16
    if spec.input_type_field:
        kwargs["input_type"] = "document"
    since = (emu.requests()["requests"] or [{"n": 0}])[-1]["n"]
    mode = {"api_mode": "chat_completions"} if name == "custom" else {}
    with Client(f"{name}/emulator-embed-1", base_url=emu.openai_base_url(), api_key=KEY, **mode) as c:
        done = c.embed(["first text", "second text"], **kwargs)
    (request,) = emu.requests(since=since, endpoint="embeddings")["requests"]
    assert request["path"] == "/v1/embeddings" and request["status"] == 200
    body = request["body"]
    assert body["model"] == "emulator-embed-1" and body["input"] == ["first text", "second text"]
    assert body.get("encoding_format") == ("base64" if spec.base64 else None)
    if spec.dimensions_field:
        assert body[spec.dimensions_field] == 16
        assert spec.dimensions_field == "dimensions" or "dimensions" not in body
    if spec.input_type_field:
        assert body[spec.input_type_field] == spec.input_type_value("document")
    assert _AUTH[profile.auth_style] in request["headers"]
    assert len(done.vectors) == 2 and done.provider == name
