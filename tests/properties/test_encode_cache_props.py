"""Whatever the tools, an encode is the same bytes (or the same error) with no cache, a cold
one or a warm one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelwire.codecs import Target, anthropic_messages
from modelwire.codecs.cache import EncodeCache
from modelwire.errors import MessageError
from modelwire.providers import get_profile

PROFILES = [get_profile("anthropic"), get_profile("moonshot-anthropic")]
SHARED = EncodeCache(max_entries=64)  # across examples: warm, cold and evicted entries mix

names = st.text("abcdefghij_", min_size=1, max_size=6)
leaves = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                   st.text(max_size=6), st.sampled_from(["object", "string", "null", "array"]))


def _node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    union = st.lists(st.one_of(children, st.just({"type": "null"})), max_size=3)
    return st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["type", "properties", "required", "items", "description",
                                         "anyOf", "oneOf", "format", "enum", "default", "x"]),
                        children, max_size=4),
        st.builds(lambda u, extra: {"anyOf": u, **extra}, union, st.dictionaries(names, children, max_size=2)),
        st.builds(lambda props: {"type": "object", "properties": props}, st.dictionaries(names, children, max_size=3)),
    )


schemas = st.recursive(leaves, _node, max_leaves=12)


@st.composite
def tool_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    tools = []
    for name in draw(st.lists(names, max_size=5, unique=True)):
        fn: dict[str, Any] = {"name": name, "parameters": draw(schemas)}
        if draw(st.booleans()):
            fn["description"] = draw(st.text(max_size=10))
        tools.append({"type": "function", "function": fn})
    return tools


@settings(max_examples=300, deadline=None)
@given(tools=tool_lists(), profile=st.sampled_from(PROFILES), shared=st.booleans(), stream=st.booleans())
def test_cold_and_warm_encodes_are_byte_for_byte_equal(tools, profile, shared, stream):
    request = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}],
               "tools": tools, "stream": stream}
    cache = SHARED if shared else EncodeCache()

    def outcome(c: EncodeCache | None) -> tuple[str, bytes | str]:
        try:
            return "body", anthropic_messages.encode_request(request, Target(profile, "claude-sonnet-4-5", cache=c)).body
        except MessageError as exc:  # a schema no converter takes: the same error either way
            return "error", str(exc)

    uncached = outcome(None)
    assert outcome(cache) == uncached  # cold (or warm from other examples)
    assert outcome(cache) == uncached  # warm
