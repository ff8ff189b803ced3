"""Per-provider tool-schema sanitizers: the shapes each provider rejects never reach it,
and the caller's schema is never changed."""

from __future__ import annotations

import copy

import pytest

from modelwire.codecs import Target
from modelwire.providers import CATALOG

MCP_LIKE = {
    "type": "object",
    "$schema": "http://json-schema.org/draft-07/schema#",
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string", "pattern": "^/", "format": "uri-reference"},
        "mode": {"enum": ["text", "raw"]},
        "db": {"anyOf": [{"enum": ["mysql", "postgres", None, ""]}, {"type": "null"}]},
        "limit": {"type": ["integer", "null"], "exclusiveMinimum": 0},
        "kind": {"const": "file"},
        "model": {"type": "string", "enum": ["openai/gpt-5", "anthropic/claude"]},
        "when": {"type": "string", "format": "date-time"},
        "opts": {"type": "object", "anyOf": [{"properties": {"a": {"type": "string"}}},
                                             {"properties": {"b": {"type": "integer"}}}]},
        "ref": {"$ref": "#/$defs/Point"},
        "note": {"description": "free text"},
    },
    "required": ["path", "ghost"],
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
}


def _nodes(schema):
    """Every schema-position node (properties values, items, union branches)."""
    yield schema
    for value in (schema.get("properties") or {}).values():
        yield from _nodes(value)
    if isinstance(schema.get("items"), dict):
        yield from _nodes(schema["items"])
    for union in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(union) or ():
            yield from _nodes(branch)


@pytest.mark.parametrize("name", ["moonshot", "xai", "gemini"])
def test_sanitizers_never_touch_the_callers_schema(name):
    original = copy.deepcopy(MCP_LIKE)
    out = CATALOG[name].sanitize_tool_schema(MCP_LIKE)
    assert MCP_LIKE == original
    assert out is not MCP_LIKE and out != MCP_LIKE


def test_moonshot_every_node_has_a_type_and_unions_carry_it_in_branches():
    out = CATALOG["moonshot"].sanitize_tool_schema(MCP_LIKE)
    for node in _nodes(out):
        if "anyOf" in node or "oneOf" in node:
            assert "type" not in node, node  # "type should be defined in anyOf items"
            assert all("type" in b for b in node.get("anyOf", node.get("oneOf")))
        elif "allOf" not in node:
            assert isinstance(node.get("type"), str), node
        assert "nullable" not in node
    props = out["properties"]
    assert props["mode"] == {"enum": ["text", "raw"], "type": "string"}
    # anyOf [enum-with-null, null] collapses to the enum, without null or ""
    assert props["db"] == {"enum": ["mysql", "postgres"], "type": "string"}
    assert props["limit"]["type"] == "integer"
    assert props["note"]["type"] == "string"
    assert [b["type"] for b in props["opts"]["anyOf"]] == ["object", "object"]


def test_moonshot_drops_unions_of_empty_objects_and_fixes_the_root():
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {
        "anyOf": [{"type": "object", "properties": {}, "required": []}, {}]}}}}
    out = CATALOG["moonshot"].sanitize_tool_schema(schema)
    assert out["properties"]["items"]["items"] == {"type": "object"}
    root = {"type": "object", "anyOf": [{"properties": {"a": {}}, "required": ["a"]},
                                        {"properties": {"b": {}}, "required": ["b"]}]}
    fixed = CATALOG["moonshot"].sanitize_tool_schema(root)
    assert "type" not in fixed
    assert [b["type"] for b in fixed["anyOf"]] == ["object", "object"]
    assert fixed["anyOf"][0]["properties"]["a"] == {"type": "string"}


def test_xai_strips_pattern_format_and_slash_enums():
    out = CATALOG["xai"].sanitize_tool_schema(MCP_LIKE)
    for node in _nodes(out):
        assert "pattern" not in node and "format" not in node
        assert not any("/" in str(v) for v in node.get("enum", ()))
    assert out["properties"]["model"]["type"] == "string"
    assert "openai/gpt-5" in out["properties"]["model"]["description"]
    assert out["properties"]["mode"]["enum"] == ["text", "raw"]  # no slash: kept


GEMINI_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems",
                 "minItems", "properties", "required", "minProperties", "maxProperties",
                 "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
                 "default", "items", "minimum", "maximum"}


def test_gemini_keeps_only_its_schema_subset():
    out = CATALOG["gemini"].sanitize_tool_schema(MCP_LIKE)
    for node in _nodes(out):
        assert set(node) <= GEMINI_FIELDS, set(node) - GEMINI_FIELDS
        assert not isinstance(node.get("type"), list)
    props = out["properties"]
    assert props["limit"] == {"type": "integer", "nullable": True}
    assert props["kind"] == {"enum": ["file"], "type": "string"}
    assert props["when"]["format"] == "date-time"  # a format Gemini documents: kept
    assert "format" not in props["path"]  # uri-reference is not one
    assert props["ref"] == {"type": "object", "properties": {"x": {"type": "number"}}}
    assert props["db"]["nullable"] is True
    assert out["required"] == ["path"]  # names outside properties are dropped


def test_gemini_inlines_recursive_refs_only_to_a_bounded_depth():
    schema = {"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
              "$defs": {"Node": {"type": "object",
                                 "properties": {"child": {"$ref": "#/$defs/Node"}}}}}
    out = CATALOG["gemini"].sanitize_tool_schema(schema)
    depth, node = 0, out["properties"]["node"]
    while "properties" in node:
        node, depth = node["properties"]["child"], depth + 1
    assert 1 <= depth <= 9 and node == {"type": "object"}


@pytest.mark.parametrize(
    ("model", "body", "expected"),
    [
        ("deepseek-v4-flash", {}, {"thinking": {"type": "enabled"}}),
        ("deepseek-flash", {}, {"thinking": {"type": "enabled"}}),
        ("deepseek-v4-pro", {"thinking": {"type": "disabled"}}, {"thinking": {"type": "disabled"}}),
        ("deepseek-v4-flash", {"reasoning_effort": "xhigh"},
         {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
        ("deepseek-chat", {}, {}),
        ("deepseek-reasoner", {}, {}),
        ("deepseek-v3", {}, {}),
    ],
    ids=["v4-default-on", "flash-default-on", "v4-explicit-off-kept", "v4-xhigh-is-max", "chat", "reasoner", "v3"],
)
def test_deepseek_v4_family_gets_an_explicit_thinking_flag(model, body, expected):
    profile = CATALOG["deepseek"]
    before = copy.deepcopy(body)
    assert profile.patch_body(body, Target(profile, model)) == expected
    assert body == before


def test_kimi_never_sends_thinking_and_reasoning_effort_together():
    profile = CATALOG["moonshot"]
    body = {"model": "kimi-k2.6", "thinking": {"type": "enabled"}, "reasoning_effort": "high"}
    assert profile.patch_body(body, Target(profile, "kimi-k2.6")) == {
        "model": "kimi-k2.6", "thinking": {"type": "enabled"}}
    only = {"reasoning_effort": "high"}
    assert profile.patch_body(only, Target(profile, "kimi-k2.6")) == only


def test_plain_profiles_pass_schemas_through():
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "x"}}}
    assert CATALOG["openai"].sanitize_tool_schema(schema) == schema


def test_llamacpp_grammar_retry_helpers():
    from modelwire.providers.llamacpp import is_grammar_error, strip_grammar_keywords

    assert is_grammar_error("Error parsing grammar: unexpected end of input")
    assert is_grammar_error("json-schema-to-grammar: unsupported pattern")
    assert not is_grammar_error("context length exceeded")
    schema = {"type": "object", "properties": {
        "pattern": {"type": "string", "pattern": "^a+$", "format": "email"}}}
    out = strip_grammar_keywords(schema)
    assert out == {"type": "object", "properties": {"pattern": {"type": "string"}}}
    assert schema["properties"]["pattern"]["pattern"] == "^a+$"  # the caller's copy is intact


def test_resolving_a_provider_model_imports_no_yaml():
    import json
    import subprocess
    import sys

    code = ("import sys, json; from modelwire.providers import resolve; "
            "resolve('openai/gpt-5-mini'); print(json.dumps('yaml' in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) is False


@pytest.mark.parametrize(
    ("model", "kept"),
    [("grok-3-mini", True), ("grok-3-mini-fast", True), ("grok-4", False),
     ("grok-4-fast", False), ("grok-code-fast-1", False), ("grok-3", False)],
)
def test_xai_sends_reasoning_effort_only_to_models_that_take_it(model, kept):
    profile = CATALOG["xai"]
    body = {"model": model, "reasoning": {"effort": "high", "summary": "auto"},
            "include": ["reasoning.encrypted_content"], "service_tier": "default"}
    out = profile.patch_body(body, Target(profile, model))
    assert ("reasoning" in out) is kept
    assert out["include"] == ["reasoning.encrypted_content"]
    assert "service_tier" not in out
    assert "service_tier" in body  # the caller's body is not changed


def test_codex_models_go_to_the_responses_api_with_an_openai_key():
    from modelwire.providers import resolve

    resolved = resolve("codex/gpt-5.1-codex-max")
    assert resolved.profile.name == "openai-responses"
    assert resolved.base_url == "https://api.openai.com/v1"
    assert resolved.api_key_env == ("OPENAI_API_KEY",)
    # the API's rules, not the ChatGPT backend's: it may stream or not, caps output
    assert not resolved.profile.stream_only
    body = {"model": "gpt-5.1-codex-max", "max_output_tokens": 4096, "input": []}
    assert resolved.profile.patch_body(body, Target(resolved.profile, "gpt-5.1-codex-max")) == body


@pytest.mark.parametrize(("thinking", "sent"), [
    (None, {"type": "enabled"}), ("high", {"type": "enabled"}), ("none", {"type": "disabled"}),
], ids=["unset", "high", "off"])
def test_deepseek_thinking_flag_follows_the_thinking_setting(thinking, sent):
    import orjson

    from modelwire.codecs import Target
    from modelwire.codecs import chat_completions as cc
    from modelwire.providers.catalog import CATALOG

    request = {"model": "deepseek-v4-pro", "messages": [{"role": "user", "content": "hi"}]}
    if thinking is not None:
        request["thinking"] = thinking
    target = Target(CATALOG["deepseek"], "deepseek-v4-pro", "sk-test-key", CATALOG["deepseek"].base_url, ())
    assert orjson.loads(cc.encode_request(request, target).body)["thinking"] == sent


def test_kimis_anthropic_endpoint_gets_no_thinking_request_and_its_own_limit():
    import orjson

    from modelwire.codecs import anthropic_messages as am
    from modelwire.providers import resolve

    resolved = resolve("kimi/kimi-k2.6", api_mode="anthropic_messages")
    assert resolved.profile.name == "moonshot-anthropic"
    target = Target(resolved.profile, "kimi-k2.6", "sk-test-key", resolved.base_url, ())
    request = {"messages": [{"role": "user", "content": "hi"}], "thinking": "high",
               "response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}}
    body = orjson.loads(am.encode_request(request, target).body)
    # Kimi drives reasoning server-side: no thinking, no effort; structured output stays
    assert "thinking" not in body and "effort" not in body.get("output_config", {})
    assert "temperature" not in body  # budget thinking's forced 1 goes with it
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["max_tokens"] == 262_144
