"""The Anthropic protocol makes max_tokens mandatory: without one from the caller, the
encoder sends the model's real output limit, from the catalog row (non-Claude models)
or the Claude family (with the sources beside the values in the code)."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.providers.catalog import CATALOG

# every Anthropic-protocol row: (a model it serves, the max_tokens sent by default)
ROWS = {
    "anthropic": ("claude-sonnet-4-6", 128_000),
    "minimax": ("MiniMax-M2.7", 131_072),
    "minimax-cn": ("MiniMax-M2.7", 131_072),
    "deepseek-anthropic": ("deepseek-v4-pro", 393_216),
    "moonshot-anthropic": ("kimi-k2.6", 262_144),
    # endpoints the catalog knows nothing about: the modest default for non-Claude ids
    "emulator-anthropic": ("emulator-1", 8_192),
}

FAMILIES = [
    ("claude-opus-4-6", 128_000), ("anthropic/claude-opus-4.6", 128_000),
    ("claude-sonnet-4-5-20250929", 64_000), ("claude-haiku-4-5", 64_000),
    ("claude-opus-4-1", 32_000), ("claude-sonnet-4-0", 64_000), ("claude-3-5-sonnet-latest", 8_192),
    ("claude-3-opus-20240229", 4_096), ("claude-opus-4-8", 128_000), ("claude-fable-5-1", 128_000),
]


def _sent(profile, model: str) -> int:
    target = Target(profile, model, "sk-test-key", profile.base_url or "http://127.0.0.1:9", ())
    enc = am.encode_request({"messages": [{"role": "user", "content": "hi"}]}, target)
    return int(orjson.loads(enc.body)["max_tokens"])


def test_every_anthropic_protocol_row_is_listed():
    rows = {name for name, p in CATALOG.items() if p.api_mode == "anthropic_messages"}
    assert rows == set(ROWS)


@pytest.mark.parametrize(("row", "model", "limit"), [(r, m, n) for r, (m, n) in ROWS.items()], ids=list(ROWS))
def test_default_max_tokens_is_the_rows_output_limit(row, model, limit):
    assert _sent(CATALOG[row], model) == limit


@pytest.mark.parametrize(("model", "limit"), FAMILIES, ids=[m for m, _ in FAMILIES])
def test_claude_families_default_to_their_own_limit_on_any_row(model, limit):
    assert _sent(CATALOG["anthropic"], model) == limit
    assert _sent(CATALOG["minimax"], model) == limit  # a Claude id keeps its family's limit


def test_a_custom_endpoints_limit_is_the_profiles_when_set():
    profile = dataclasses.replace(CATALOG["emulator-anthropic"], max_output=50_000)
    assert _sent(profile, "my-model") == 50_000
    target = Target(profile, "my-model", "sk-test-key", "http://127.0.0.1:9", ())
    body = orjson.loads(am.encode_request({"messages": [{"role": "user", "content": "hi"}],
                                           "max_tokens": 70_000}, target).body)
    assert body["max_tokens"] == 70_000  # a non-Claude limit is a default, never a clamp
