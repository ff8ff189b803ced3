"""Any valid internal conversation encodes to an Anthropic request that obeys Anthropic's
rules (tests/codecs/anthropic_rules.py), for every kind of endpoint and model family.

Conversations are generated with system prompts, users with text and images,
assistants with text, tool calls (ids other providers mint, malformed arguments) and
thinking from various issuers (signed, unsigned, redacted), tool results (with
images), empty contents, random same-role neighbours and cache_control marks.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

from hypothesis import given
from hypothesis import strategies as st

from modelwire.codecs import Target
from modelwire.codecs import anthropic_messages as am
from modelwire.codecs.anthropic_messages._models import family_for
from modelwire.errors import MessageError
from modelwire.providers.profile import ProviderProfile

_spec = importlib.util.spec_from_file_location(
    "anthropic_rules", pathlib.Path(__file__).resolve().parents[1] / "codecs" / "anthropic_rules.py"
)
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)

PROFILES = [
    ProviderProfile(name="anthropic", api_mode="anthropic_messages", auth_style="x-api-key",
                    issuer="anthropic", anthropic_version="2026-10-21"),
    ProviderProfile(name="anthropic-2023", api_mode="anthropic_messages", auth_style="x-api-key",
                    issuer="anthropic", anthropic_version="2023-06-01", drop_earlier_thinking=True),
    ProviderProfile(name="bedrock", api_mode="anthropic_messages", auth_style="none",
                    issuer="bedrock", accepts_issuers=frozenset({"anthropic"}),
                    anthropic_version="bedrock-2023-05-31"),
    ProviderProfile(name="minimax", api_mode="anthropic_messages", auth_style="bearer",
                    issuer="minimax", anthropic_version="2023-06-01", fine_grained_tool_streaming=False),
    ProviderProfile(name="deepseek", api_mode="anthropic_messages", auth_style="x-api-key",
                    issuer="deepseek", anthropic_version="2023-06-01", unsigned_thinking_echo=True),
]
MODELS = [
    "claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-3-5-haiku-20241022",
    "anthropic/claude-opus-4.7", "claude-opus-9", "MiniMax-M2", "deepseek-chat",
]
ISSUERS = ["anthropic", "minimax", "deepseek", "openai", "openrouter"]

texts = st.sampled_from(["", " ", "\n", "hi", "Hello there.", "naïve ☃", "x" * 30])
ids = st.text(alphabet="abcXYZ019_-.:|", min_size=1, max_size=10)
cache = st.sampled_from([None, {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}])


def _with_cache(part: dict, cc) -> dict:
    return {**part, "cache_control": cc} if cc else part


@st.composite
def parts(draw, images=True):
    kind = draw(st.sampled_from(["text", "text", "image", "url"] if images else ["text"]))
    if kind == "text":
        part = {"type": "text", "text": draw(texts)}
    elif kind == "image":
        part = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    else:
        part = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    return _with_cache(part, draw(cache))


def contents(images=True):
    return st.one_of(texts, st.lists(parts(images), max_size=3))


@st.composite
def reasoning(draw):
    details = []
    for _ in range(draw(st.integers(0, 2))):
        issuer = draw(st.sampled_from(ISSUERS))
        kind = draw(st.sampled_from(["signed", "unsigned", "redacted"]))
        if kind == "redacted":
            block = {"type": "redacted_thinking", "data": "EqkECkYIBxgC"}
        else:
            block = {"type": "thinking", "thinking": draw(texts)}
            if kind == "signed":
                block["signature"] = "EpIECm4IDhgC+/="
        details.append({"issuer": issuer, "block": block})
    out = {"reasoning_details": details} if details else {}
    if draw(st.booleans()):
        out["reasoning_content"] = draw(texts)
    return out


@st.composite
def conversations(draw):
    msgs: list[dict] = []
    for _ in range(draw(st.integers(0, 2))):
        msgs.append({"role": draw(st.sampled_from(["system", "developer"])),
                     "content": draw(st.one_of(texts, st.lists(parts(images=False), max_size=2)))})
    msgs.append({"role": "user", "content": draw(contents())})
    used: set[str] = set()
    for _ in range(draw(st.integers(0, 5))):
        step = draw(st.sampled_from(["user", "assistant", "tools", "user_user", "assistant_assistant"]))
        if step in ("user", "user_user"):
            msgs.append({"role": "user", "content": draw(contents())})
            if step == "user_user":
                msgs.append({"role": "user", "content": draw(contents())})
            continue
        if step == "assistant_assistant":
            msgs.append({"role": "assistant", "content": draw(texts), **draw(reasoning())})
        msg: dict = {"role": "assistant", "content": draw(st.one_of(st.none(), texts,
                                                                    st.lists(parts(images=False), max_size=2)))}
        msg.update(draw(reasoning()))
        if step == "tools":
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                cid = draw(ids.filter(lambda x: x not in used))
                used.add(cid)
                args = draw(st.sampled_from(['{"city": "Paris"}', "", "not json", "[1, 2]", "{}"]))
                calls.append({"id": cid, "type": "function",
                              "function": {"name": draw(st.sampled_from(["get_weather", "search"])),
                                           "arguments": args}})
            msg["tool_calls"] = calls
            if msg["content"] is None and draw(st.booleans()):
                msg["cache_control"] = {"type": "ephemeral"}
            msgs.append(msg)
            for call in calls:
                msgs.append({"role": "tool", "tool_call_id": call["id"], "content": draw(contents()),
                             **({"cache_control": {"type": "ephemeral"}} if draw(st.booleans()) else {})})
        else:
            msgs.append(msg)
        if draw(st.booleans()) and msgs[-1]["role"] == "assistant":
            msgs.append({"role": "user", "content": draw(contents())})
    if msgs[-1]["role"] == "assistant":
        msgs.append({"role": "user", "content": draw(contents())})
    return msgs


TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "anyOf": [{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
                  {"type": "object", "properties": {"url": {"type": "string"}}}]}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "noop"}, "cache_control": {"type": "ephemeral"}},
]


@st.composite
def requests(draw):
    req = {"messages": draw(conversations()), "tools": TOOLS}
    req["thinking"] = draw(st.sampled_from([None, "low", "medium", "high", "xhigh", "max"]))
    choice = draw(st.sampled_from([None, "auto", "none", "required", "named"]))
    if choice == "named":
        req["tool_choice"] = {"type": "function", "function": {"name": "search"}}
    elif choice:
        req["tool_choice"] = choice
    for key, strat in [("parallel_tool_calls", st.booleans()), ("temperature", st.sampled_from([0.0, 0.7, 1.0])),
                       ("top_p", st.sampled_from([0.5, 0.95])), ("max_tokens", st.sampled_from([1, 1500, 4096, 300000])),
                       ("stream", st.booleans())]:
        if draw(st.booleans()):
            req[key] = draw(strat)
    return req


@given(requests(), st.sampled_from(PROFILES), st.sampled_from(MODELS))
def test_any_valid_conversation_encodes_to_a_request_anthropic_accepts(request, profile, model):
    encoded = am.encode_request(request, Target(profile, model, api_key="sk-ant-api03-fake"))
    body = json.loads(encoded.body)
    found = rules.violations(
        body,
        version=profile.anthropic_version,
        prefill=family_for(model).prefill,
        unsigned_thinking=profile.unsigned_thinking_echo,
    )
    assert found == [], found


@given(conversations(), st.sampled_from(PROFILES))
def test_foreign_thinking_never_reaches_an_endpoint(messages, profile):
    body = json.loads(am.encode_request({"messages": messages}, Target(profile, "claude-sonnet-4-5")).body)
    sent = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") in ("thinking", "redacted_thinking")]
    accepted = [d["block"] for m in messages if m["role"] == "assistant"
                for d in m.get("reasoning_details", []) if profile.accepts_issuer(d["issuer"])]
    for block in sent:
        assert block in accepted or (profile.unsigned_thinking_echo and "signature" not in block)


@given(conversations())
def test_a_conversation_ending_in_an_assistant_turn_is_refused_by_claude_4_6(messages):
    messages = [*messages, {"role": "assistant", "content": "Sure,"}]
    try:
        am.encode_request({"messages": messages}, Target(PROFILES[0], "claude-opus-4-6"))
    except MessageError as exc:
        assert "prefill" in str(exc)
    else:
        raise AssertionError("prefill accepted for claude-opus-4-6")
