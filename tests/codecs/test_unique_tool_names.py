"""Duplicate tool names are removed for every target (first definition wins) with a
warning naming the duplicate: endpoints that reject them answer 400 for the whole request."""

from __future__ import annotations

import logging

import orjson
import pytest

from modelwire.codecs import Target, codec_for
from modelwire.providers.catalog import CATALOG


def _fn(name: str, description: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": {"type": "object", "properties": {}}}}


TOOLS = [_fn("read_file", "first"), _fn("grep", "search"), _fn("read_file", "second")]


def _names_and_descriptions(body: dict) -> list[tuple[str, str]]:
    out = []
    for tool in body["tools"]:
        fn = tool.get("function", tool)  # chat nests; Responses and Anthropic are flat
        out.append((fn["name"], fn["description"]))
    return out


@pytest.mark.parametrize("row", ["custom", "openai", "openai-responses", "anthropic", "emulator"])
def test_duplicates_are_dropped_first_wins_with_a_warning(row, caplog):
    caplog.set_level(logging.WARNING)
    profile = CATALOG[row]
    base = profile.base_url or "http://127.0.0.1:9/v1"
    target = Target(profile, "some-model", "sk-test-key", base, ())
    request = {"model": "some-model", "messages": [{"role": "user", "content": "hi"}],
               "tools": TOOLS, "max_tokens": 16}
    body = orjson.loads(codec_for(profile.api_mode).encode_request(request, target).body)
    assert _names_and_descriptions(body) == [("read_file", "first"), ("grep", "search")]
    warned = [r.getMessage() for r in caplog.records if "duplicate tool name" in r.getMessage()]
    assert len(warned) == 1 and "'read_file'" in warned[0]
