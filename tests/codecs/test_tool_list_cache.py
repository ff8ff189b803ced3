"""Tool lists kept whole in the EncodeCache: every codec sends the same bytes (and logs the
same warnings, or raises the same error) with the cache cold, warm or absent."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs import Target, codec_for
from modelwire.codecs.cache import EncodeCache
from modelwire.codecs.tools import FOR_PROTOCOL, NAMESPACE_KEY
from modelwire.errors import MessageError
from modelwire.providers import get_profile
from modelwire.types import Request

KEY = "sk-" + "test-tools"
PROFILES = {
    "anthropic_messages": ["anthropic", "moonshot-anthropic"],
    "chat_completions": ["openai", "gemini", "moonshot"],
    "responses": ["openai-responses", "xai"],
}
CASES = [(mode, name) for mode, names in PROFILES.items() for name in names]
SHARED = EncodeCache(max_entries=48)  # across examples: warm, cold and evicted entries mix


def _profile(mode: str, name: str) -> Any:
    profile = get_profile(name)
    assert profile.api_mode == mode, (name, profile.api_mode)
    return profile


def _model(mode: str) -> str:
    return "claude-sonnet-4-5" if mode == "anthropic_messages" else "gpt-4.1"


@contextmanager
def _warnings() -> Iterator[list[str]]:
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                seen.append(record.getMessage())
    handler = Keep()
    logger = logging.getLogger("modelwire")
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def outcome(request: dict[str, Any], mode: str, profile: Any, cache: EncodeCache | None) -> tuple[Any, ...]:
    """What an encode sends (or raises) and what it logs."""
    with _warnings() as seen:
        try:
            sent: Any = codec_for(mode).encode_request(cast(Request, request), Target(profile, _model(mode), api_key=KEY, cache=cache)).body
        except MessageError as exc:
            sent = (type(exc).__name__, str(exc))
    return sent, seen


# ------------------------------------------------------------------ strategies
names = st.sampled_from(["read", "edit", "run", "grep", "ls_files"])
leaves = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=32),
                   st.text("ab é", max_size=4), st.sampled_from(["object", "string", "null", "integer"]))


def _schema_node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["type", "properties", "required", "items", "description", "anyOf",
                                         "format", "enum", "default", "additionalProperties"]), children, max_size=4),
        st.builds(lambda props: {"type": "object", "properties": props}, st.dictionaries(names, children, max_size=3)),
        st.builds(lambda x: {"anyOf": [x, {"type": "null"}], "description": "maybe"}, children),
    )


schemas = st.recursive(leaves, _schema_node, max_leaves=10)


@st.composite
def function_tool(draw: st.DrawFn) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": draw(names)}
    if draw(st.booleans()):
        fn["description"] = draw(st.text("xyz .", max_size=8))
    if draw(st.booleans()):
        fn["parameters"] = draw(schemas)
    if draw(st.booleans()):
        fn["strict"] = draw(st.one_of(st.booleans(), st.none()))
    spec: dict[str, Any] = {"type": "function", "function": fn}
    if draw(st.booleans()):
        spec["cache_control"] = {"type": "ephemeral"}
    if draw(st.integers(0, 3)) == 0:
        spec["eager_input_streaming"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        spec["defer_loading"] = True
    if draw(st.integers(0, 2)) == 0:
        ns = draw(st.sampled_from(["fs", "web"]))
        spec[NAMESPACE_KEY] = {"name": ns, "description": f"{ns} tools", "member": fn["name"].split("_")[0]}
    return spec


@st.composite
def native_tool(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": draw(st.sampled_from(["web_search_20250305", "custom", "web_search"])),
                            "name": draw(names)}
    if draw(st.booleans()):
        spec[FOR_PROTOCOL] = draw(st.sampled_from(list(PROFILES)))
    return spec


tool_lists = st.lists(st.one_of(function_tool(), function_tool(), native_tool()), min_size=1, max_size=6)


@st.composite
def requests(draw: st.DrawFn, mode: str) -> dict[str, Any]:
    request: dict[str, Any] = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}],
                               "tools": draw(tool_lists), "stream": draw(st.booleans())}
    source = draw(st.sampled_from([None, *PROFILES]))
    if source is not None:
        request["metadata"] = {"source_api": source}
    choice = draw(st.sampled_from([None, "auto", "none", "required"]))
    if choice is not None:
        request["tool_choice"] = choice
    return request


# ------------------------------------------------------------------ properties
@settings(max_examples=120, deadline=None)
@given(data=st.data(), case=st.sampled_from(CASES), shared=st.booleans())
def test_tool_lists_encode_to_the_same_bytes_and_warnings_cold_warm_and_uncached(data, case, shared):
    mode, name = case
    profile = _profile(mode, name)
    request = data.draw(requests(mode))
    cache = SHARED if shared else EncodeCache()
    uncached = outcome(request, mode, profile, None)
    assert outcome(request, mode, profile, cache) == uncached  # cold (or warm from other examples)
    assert outcome(request, mode, profile, cache) == uncached  # warm
    again = orjson.loads(orjson.dumps(request))  # new objects, as a gateway parses each request
    assert outcome(again, mode, profile, cache) == uncached


# ------------------------------------------------------------------ changes
BASE = [
    {"type": "function", "function": {"name": "read", "description": "Read a file from disk.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string", "description": "which file"},
                                         "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "required": ["path"]}}},
    {"type": "function", "function": {"name": "edit", "description": "Edit a file in place.", "strict": True,
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "grep", "description": "Search the files.",
                                      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}},
]

# each edit keeps the list's JSON the same length (or changes only what orjson writes)
EDITS = {
    "name": lambda t: t[1]["function"].update(name="edjt"),
    "description": lambda t: t[0]["function"].update(description="Read a file from disc."),
    "a schema's description": lambda t: t[0]["function"]["parameters"]["properties"]["path"].update(
        description="whose file"),
    "a schema's type": lambda t: t[2]["function"]["parameters"]["properties"]["q"].update(type="number"),
    "strict": lambda t: t[1]["function"].update(strict=False),
    "required": lambda t: t[0]["function"]["parameters"].update(required=["pbth"]),
    "key order": lambda t: t.__setitem__(0, {"function": t[0]["function"], "type": "function"}),
    "tool order": lambda t: t.reverse(),
    "cache_control": lambda t: t[2].update(cache_control={"type": "ephemeral"}),
    "the last byte's neighbour": lambda t: t[2]["function"]["parameters"]["properties"].update(
        q={"type": "strinh"}),
}

# what an encoder does not send on (the edit still must not find the old list's result)
IGNORED = {("key order", "anthropic_messages"), ("key order", "responses"), ("cache_control", "responses")}


@pytest.mark.parametrize("case", CASES, ids=[f"{m}-{n}" for m, n in CASES])
@pytest.mark.parametrize("edit", list(EDITS))
def test_a_tool_changed_in_any_field_is_converted_again(case, edit):
    mode, name = case
    profile = _profile(mode, name)
    cache = EncodeCache()
    request = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": BASE}
    before = outcome(request, mode, profile, cache)
    changed = json.loads(json.dumps(BASE))
    EDITS[edit](changed)
    request = {**request, "tools": changed}
    after = outcome(request, mode, profile, cache)
    assert after == outcome(request, mode, profile, None)
    if (edit, mode) not in IGNORED:
        assert after[0] != before[0]


def test_tool_lists_of_one_length_and_the_same_samples_are_told_apart():
    cache = EncodeCache()
    tag = cache.tag("test")
    a = b'["' + b"a" * 50 + b"x" + b"a" * 150 + b'"]'  # the x is in none of the samples
    b = a.replace(b"x", b"y")
    c = a.replace(b"x", b"z")
    cache.keep(tag, a, "A", 1)
    assert cache.find(tag, b) is None
    cache.keep(tag, b, "B", 1)
    assert (cache.find(tag, a), cache.find(tag, b)) == ("A", "B")  # both kept side by side
    cache.keep(tag, c, "C", 1)
    assert (cache.find(tag, a), cache.find(tag, b), cache.find(tag, c)) == ("A", "B", "C")
    assert len(cache) == 1  # under one short key
    assert cache.find(cache.tag("other"), a) is None


def _marked(n: int) -> list[dict[str, Any]]:
    return [{"type": "function", "cache_control": {"type": "ephemeral"},
             "function": {"name": f"t{i}", "parameters": {"type": "object", "properties": {}}}} for i in range(n)]


def test_a_kept_tool_list_is_never_changed_by_the_breakpoint_limit_that_edits_its_copy():
    profile = get_profile("anthropic")
    cache = EncodeCache()
    request = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}], "tools": _marked(6)}
    plain = outcome(request, "anthropic_messages", profile, None)
    first = outcome(request, "anthropic_messages", profile, cache)
    assert first == outcome(request, "anthropic_messages", profile, cache) == plain
    marks = [t for t in orjson.loads(first[0])["tools"] if "cache_control" in t]
    assert len(marks) == 4  # Anthropic's limit: the two earliest dropped
    assert [t["name"] for t in marks] == ["t2", "t3", "t4", "t5"]


def test_changing_the_callers_tools_after_an_encode_never_changes_the_kept_list():
    for mode, name in CASES:
        profile = _profile(mode, name)
        cache = EncodeCache()
        tools = json.loads(json.dumps(BASE))
        request = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": tools}
        before = outcome(request, mode, profile, cache)
        tools[0]["function"]["description"] = "changed in place"
        tools[0]["function"]["parameters"]["properties"]["path"]["type"] = "integer"
        changed = outcome(request, mode, profile, cache)
        assert changed == outcome(request, mode, profile, None) != before
        original = {**request, "tools": json.loads(json.dumps(BASE))}
        assert outcome(original, mode, profile, cache) == before


@pytest.mark.parametrize("mode", list(PROFILES))
def test_a_duplicate_tool_name_is_warned_about_on_every_encode(mode):
    profile = _profile(mode, PROFILES[mode][0])
    cache = EncodeCache()
    request = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}],
               "tools": [BASE[0], BASE[1], BASE[0]]}
    for _ in range(3):
        _, seen = outcome(request, mode, profile, cache)
        assert len(seen) == 1 and "duplicate tool name 'read'" in seen[0]


@pytest.mark.parametrize("mode", list(PROFILES))
def test_kept_tool_lists_count_in_the_caches_byte_bound(mode):
    profile = _profile(mode, PROFILES[mode][0])
    cache = EncodeCache(max_bytes=20_000)
    for i in range(60):
        tools = json.loads(json.dumps(BASE))
        tools[0]["function"]["description"] = f"version {i} " + "x" * 400
        outcome({"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": tools},
                mode, profile, cache)
        assert cache.size_bytes <= 20_000
    one = EncodeCache()
    request = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": BASE}
    outcome(request, mode, profile, one)  # seen once: only its key is kept
    sent = orjson.loads(outcome(request, mode, profile, one)[0])["tools"]
    # the list's key and its converted JSON, at least (schemas kept per tool come on top)
    assert one.size_bytes >= len(orjson.dumps(BASE)) + len(orjson.dumps(sent))


def test_a_list_changed_by_one_tool_converts_only_that_tools_schema():
    from dataclasses import dataclass, field

    from modelwire.providers.profile import ProviderProfile

    @dataclass(frozen=True, slots=True)
    class Counting(ProviderProfile):
        seen: list[Any] = field(default_factory=list, compare=False, hash=False)

        def sanitize_tool_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
            self.seen.append(schema)
            return schema

    profile = Counting("anthropic", api_mode="anthropic_messages")
    cache = EncodeCache()
    request = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}], "tools": BASE}
    outcome(request, "anthropic_messages", profile, cache)
    assert len(profile.seen) == 3
    added = {"type": "function", "function": {"name": "mcp_fetch", "parameters": {"type": "object"}}}
    outcome({**request, "tools": [*BASE, added]}, "anthropic_messages", profile, cache)
    assert len(profile.seen) == 4  # the new tool's schema only


def _alternating(mode: str, variants: list[tuple[Any, dict[str, Any]]]) -> None:
    """Each (profile, request) encoded twice, in turn, through one cache: the same as uncached."""
    cache = EncodeCache()
    plain = [outcome(r, mode, p, None) for p, r in variants]
    assert len({repr(o) for o in plain}) == len(plain), "the variants must differ"
    for _ in range(2):
        assert [outcome(r, mode, p, cache) for p, r in variants] == plain


@pytest.mark.parametrize("mode", list(PROFILES))
def test_the_same_tools_for_another_profile_are_converted_for_it(mode):
    request = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"type": "function", "function": {"name": "when", "parameters": {
                   "type": "object", "properties": {"at": {"type": ["string", "null"], "format": "date-time"}},
                   "additionalProperties": False}}}]}
    _alternating(mode, [(_profile(mode, name), request) for name in PROFILES[mode]])


@pytest.mark.parametrize("mode", list(PROFILES))
def test_the_same_native_tool_from_another_front_door_is_judged_again(mode):
    native = {"type": "web_search_20250305", "name": "web_search"}
    base = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": [BASE[0], native]}
    other = next(m for m in PROFILES if m != mode)
    profile = _profile(mode, PROFILES[mode][0])
    _alternating(mode, [(profile, base), (profile, {**base, "metadata": {"source_api": other}})])


def test_the_same_tools_streamed_and_not_are_converted_for_each():
    profile = get_profile("anthropic")
    assert profile.fine_grained_tool_streaming
    request = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}], "tools": BASE}
    _alternating("anthropic_messages", [(profile, request), (profile, {**request, "stream": True})])


@pytest.mark.parametrize("mode", list(PROFILES))
def test_a_kept_tool_lists_json_is_kept_as_it_is_not_copied(mode):
    # the gateway's door hands a KeptList with its JSON: the cache keeps those bytes, and
    # the same list on the next turn is found by identity instead of compared byte for byte
    import tracemalloc

    from modelwire.kept_json import KeptList

    profile = _profile(mode, PROFILES[mode][0])
    tools = [{**t, "function": {**t["function"], "description": t["function"]["description"] + " " + "x" * 20_000}}
             for t in BASE]
    raw = orjson.dumps(tools)

    def held(value: Any) -> tuple[int, bytes]:
        cache = EncodeCache()
        request = {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": value}
        outcome(request, mode, profile, cache)  # seen once
        tracemalloc.start()
        try:
            sent = outcome(request, mode, profile, cache)[0]  # kept
            grown = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert outcome(request, mode, profile, cache)[0] == sent  # found again
        return grown, sent

    plain, sent_plain = held(json.loads(raw))
    kept, sent_kept = held(KeptList(json.loads(raw), memoryview(raw).tobytes()))
    assert sent_kept == sent_plain
    assert plain - kept > 0.9 * len(raw), (plain, kept, len(raw))


def test_a_list_kept_from_plain_tools_takes_the_kept_lists_bytes_when_they_come():
    # the gateway's door hands plain lists on an agent's first turns, then its KeptList:
    # the cache's entry then holds the KeptList's own JSON (found by identity next time)
    import sys

    from modelwire.kept_json import KeptList

    mode = "anthropic_messages"
    profile = _profile(mode, PROFILES[mode][0])
    tools = [{**t, "function": {**t["function"], "description": "y" * 20_000}} for t in BASE]
    raw = orjson.dumps(tools)
    cache = EncodeCache()

    def request(value: Any) -> dict[str, Any]:
        return {"model": _model(mode), "messages": [{"role": "user", "content": "hi"}], "tools": value}
    first = outcome(request(json.loads(raw)), mode, profile, cache)[0]
    assert outcome(request(json.loads(raw)), mode, profile, cache)[0] == first  # kept from a plain list
    kept = KeptList(json.loads(raw), memoryview(raw).tobytes())
    size, refs = cache.size_bytes, sys.getrefcount(kept.json)
    assert outcome(request(kept), mode, profile, cache)[0] == first
    held = sys.getrefcount(kept.json) - refs  # outside the assert: pytest's rewriting holds references
    assert held == 1, "the cache holds the kept list's bytes"
    assert cache.size_bytes == size  # in place of its copy
    hits = cache.hits
    assert outcome(request(kept), mode, profile, cache)[0] == first
    held = sys.getrefcount(kept.json) - refs
    assert cache.hits == hits + 1 and held == 1
