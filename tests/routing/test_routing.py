"""Smart routing: the seed's thresholds and keywords, exact reasons, stickiness."""

from __future__ import annotations

import logging

import pytest

from modelwire.config import config_from_dict
from modelwire.errors import ConfigError
from modelwire.routing import KEYWORDS, RoutingMemory, choose_route, simple_turn_reason

CONFIG = config_from_dict({
    "models": {
        "claude": {"provider": "anthropic", "model": "claude-sonnet-4-6"},
        "cheap": {"provider": "openrouter", "model": "deepseek/deepseek-chat"},
    },
    "default_model": "claude",
    "smart_routing": {"enabled": True, "cheap_model": "cheap"},
})

SEED_KEYWORDS = {
    "debug", "debugging", "implement", "implementation", "refactor", "patch", "traceback",
    "stacktrace", "exception", "error", "analyze", "analysis", "investigate", "architecture",
    "design", "compare", "benchmark", "optimize", "optimise", "review", "terminal", "shell",
    "tool", "tools", "pytest", "test", "tests", "plan", "planning", "delegate", "subagent",
    "cron", "docker", "kubernetes",
}


def test_keyword_list_is_the_seeds():
    assert KEYWORDS == SEED_KEYWORDS


@pytest.mark.parametrize(
    ("text", "kind", "reason"),
    [
        ("what's the capital of France?", "cheap", "simple: 5 words, no keywords"),
        ("hi", "cheap", "simple: 1 words, no keywords"),
        ("a" * 160, "cheap", "simple: 1 words, no keywords"),
        ("a" * 161, "primary", "too long: 161 chars"),
        ("  padded  ", "cheap", "simple: 1 words, no keywords"),
        (" ".join(["w"] * 28), "cheap", "simple: 28 words, no keywords"),
        (" ".join(["w"] * 29), "primary", "too long: 29 words"),
        ("one\ntwo", "cheap", "simple: 2 words, no keywords"),
        ("one\ntwo\nthree", "primary", "multi-line: 2 newlines"),
        ("what does `ls` print", "primary", "code: backticks"),
        ("read https://example.com", "primary", "url"),
        ("open www.example.com please", "primary", "url"),
        ("can you debug this", "primary", "keyword: debug"),
        ("Debugging, again!", "primary", "keyword: debugging"),
        ("why the (error)?", "primary", "keyword: error"),
        ("please optimise it", "primary", "keyword: optimise"),
        ("is debugger a word", "cheap", "simple: 4 words, no keywords"),
        ("", "primary", "empty message"),
        ("   \n ", "primary", "empty message"),
    ],
    ids=lambda v: v[:24] if isinstance(v, str) else None,
)
def test_seed_rules(text, kind, reason):
    route = choose_route(text, CONFIG)
    assert (route.kind, route.reason) == (kind, reason)


@pytest.mark.parametrize("keyword", sorted(SEED_KEYWORDS))
def test_every_keyword_routes_to_primary(keyword):
    route = choose_route(f"quick {keyword.upper()}?", CONFIG)
    assert (route.kind, route.reason) == ("primary", f"keyword: {keyword}")


def test_limits_come_from_config():
    config = config_from_dict({
        "models": {"claude": {"provider": "anthropic", "model": "m"},
                   "cheap": {"provider": "groq", "model": "small"}},
        "default_model": "claude",
        "smart_routing": {"enabled": True, "cheap_model": "cheap",
                          "max_simple_chars": 10, "max_simple_words": 2},
    })
    assert choose_route("one two", config).kind == "cheap"
    assert choose_route("a b c", config).reason == "too long: 3 words"
    assert choose_route("eleven char", config).reason == "too long: 11 chars"


def test_route_carries_resolution_label_and_signature():
    cheap = choose_route("hello there", CONFIG)
    assert (cheap.model_name, cheap.provider, cheap.model) == (
        "cheap", "openrouter", "deepseek/deepseek-chat")
    assert cheap.label == "smart route → deepseek/deepseek-chat (openrouter)"
    primary = choose_route("debug it", CONFIG)
    assert (primary.model_name, primary.provider, primary.model, primary.label) == (
        "claude", "anthropic", "claude-sonnet-4-6", None)
    assert cheap.signature != primary.signature
    assert choose_route("hi again", CONFIG).signature == cheap.signature


def test_disabled_or_unconfigured_routing_always_uses_primary():
    off = config_from_dict({"models": {"claude": {"provider": "anthropic", "model": "m"}},
                            "default_model": "claude"})
    route = choose_route("hi", off)
    assert (route.kind, route.reason, route.model_name) == ("primary", "smart routing disabled", "claude")
    assert choose_route("hi", off, primary="openai/gpt-5-mini").model == "gpt-5-mini"
    with pytest.raises(ConfigError, match="default_model"):
        choose_route("hi", config_from_dict({}))


def test_images_and_tool_results_are_not_routed():
    assert choose_route("hi", CONFIG, has_images=True).reason == "images: no routing"
    route = choose_route("hi", CONFIG, has_tool_results=True)
    assert (route.kind, route.reason) == ("primary", "tool results: no routing")


def test_sticky_once_primary_stays_primary():
    memory = RoutingMemory()
    state = memory.state("conv-1")
    assert choose_route("hi", CONFIG, sticky_state=state).kind == "cheap"
    assert choose_route("please refactor this", CONFIG, sticky_state=state).kind == "primary"
    later = choose_route("thanks!", CONFIG, sticky_state=state)
    assert (later.kind, later.reason) == (
        "primary", "sticky: earlier turn needed primary (keyword: refactor)")
    # another conversation is independent
    assert choose_route("thanks!", CONFIG, sticky_state=memory.state("conv-2")).kind == "cheap"
    assert memory.state("conv-1") is state


def test_tool_loop_stays_on_the_model_that_started_it():
    state = RoutingMemory().state("c")
    choose_route("what time is it", CONFIG, sticky_state=state)
    route = choose_route("", CONFIG, has_tool_results=True, sticky_state=state)
    assert route.kind == "cheap" and route.reason == "tool results: no routing, stays on cheap"
    assert not state.escalated


def test_images_escalate_the_conversation():
    state = RoutingMemory().state("c")
    choose_route("look", CONFIG, has_images=True, sticky_state=state)
    assert choose_route("ok", CONFIG, sticky_state=state).kind == "primary"


def test_memory_is_bounded():
    memory = RoutingMemory(max_conversations=3)
    first = memory.state("a")
    for cid in ("b", "c", "d"):
        memory.state(cid)
    assert len(memory) == 3 and memory.state("a") is not first


def test_broken_cheap_model_falls_back_to_primary_with_reason():
    config = config_from_dict({
        "models": {"claude": {"provider": "anthropic", "model": "m"},
                   "cheap": {"provider": "azure", "model": "dep"}},  # no endpoint set
        "default_model": "claude",
        "smart_routing": {"enabled": True, "cheap_model": "cheap"},
    })
    route = choose_route("hi", config)
    assert route.kind == "primary" and route.reason.startswith("cheap model unavailable: ")


def test_every_decision_is_logged_with_its_reason(caplog):
    with caplog.at_level(logging.INFO, logger="modelwire.routing"):
        choose_route("please debug", CONFIG)
    assert "keyword: debug" in caplog.text and "claude" in caplog.text


def test_simple_turn_reason_is_usable_alone():
    assert simple_turn_reason("hello world") == (True, "simple: 2 words, no keywords")
    assert simple_turn_reason("x" * 212) == (False, "too long: 212 chars")


def test_route_messages_reads_the_turn_from_a_conversation():
    from modelwire.routing import route_messages, turn_facts

    convo = [{"role": "system", "content": "be brief"},
             {"role": "user", "content": "what time is it"}]
    assert turn_facts(convo) == ("what time is it", False, False)
    assert route_messages(convo, CONFIG).kind == "cheap"
    with_image = [{"role": "user", "content": [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]
    assert turn_facts(with_image) == ("what is this", False, True)
    assert route_messages(with_image, CONFIG).reason == "images: no routing"
    loop = [*convo,
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "12:00"}]
    assert turn_facts(loop) == ("what time is it", True, False)
    assert route_messages(loop, CONFIG).reason == "tool results: no routing"
    assert turn_facts([]) == ("", False, False)


@pytest.mark.parametrize("image", [
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
], ids=["anthropic-image", "responses-input-image", "chat-image-url"])
def test_a_turn_with_an_image_in_any_protocols_shape_goes_to_the_primary(image):
    from modelwire.routing import route_messages

    convo = [{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}]
    route = route_messages(convo, CONFIG)
    assert (route.kind, route.reason) == ("primary", "images: no routing")


def test_text_only_parts_are_joined_and_routed_by_their_text():
    from modelwire.routing import route_messages, turn_facts

    simple = [{"role": "user", "content": [{"type": "text", "text": "what time"},
                                           {"type": "text", "text": "is it"}]}]
    assert turn_facts(simple) == ("what time\nis it", False, False)
    assert route_messages(simple, CONFIG).kind == "cheap"
    hard = [{"role": "user", "content": [{"type": "text", "text": "hello"},
                                         {"type": "text", "text": "please refactor"}]}]
    assert route_messages(hard, CONFIG).reason == "keyword: refactor"


def test_the_last_user_message_decides_not_an_earlier_one():
    from modelwire.routing import turn_facts

    convo = [{"role": "user", "content": "please refactor"},
             {"role": "assistant", "content": "done"},
             {"role": "user", "content": "thanks"}]
    assert turn_facts(convo) == ("thanks", False, False)


def test_a_first_turn_that_carries_tool_results_is_not_routed():
    from modelwire.routing import route_messages, turn_facts

    convo = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "12:00"}]
    assert turn_facts(convo) == ("hi", True, False)
    state = RoutingMemory().state("fresh")  # nothing routed yet in this conversation
    route = route_messages(convo, CONFIG, sticky_state=state)
    assert (route.kind, route.reason) == ("primary", "tool results: no routing")
    assert not state.escalated  # a tool loop does not pin the conversation to the primary


def test_a_conversation_without_a_user_message_has_no_text():
    from modelwire.routing import turn_facts

    assert turn_facts([]) == ("", False, False)
    assert turn_facts([{"role": "system", "content": "x"}]) == ("", False, False)


def test_tool_results_after_an_escalation_stay_on_the_primary():
    state = RoutingMemory().state("c")
    choose_route("please refactor", CONFIG, sticky_state=state)
    route = choose_route("", CONFIG, has_tool_results=True, sticky_state=state)
    assert (route.kind, route.reason) == ("primary", "tool results: no routing")


def test_memory_drops_the_least_recently_used_conversation():
    memory = RoutingMemory(max_conversations=2)
    a = memory.state("a")
    memory.state("b")
    assert memory.state("a") is a  # touched: now the most recent
    memory.state("c")  # evicts b, not a
    assert memory.state("a") is a and len(memory) == 2


@pytest.mark.parametrize(("text", "reason"), [
    ("   ", "empty message"),
    ("one\ntwo", "simple: 2 words, no keywords"),
    ("one\ntwo\nthree", "multi-line: 2 newlines"),
    ("see www.example.com", "url"),
    ("(Debug)!", "keyword: debug"),
], ids=["blank", "one-newline", "two-newlines", "www", "punctuated-keyword"])
def test_seed_rule_edges(text, reason):
    assert simple_turn_reason(text)[1] == reason


def test_what_is_not_a_message_or_a_part_is_skipped():
    from modelwire.routing import turn_facts

    assert turn_facts([{"role": "user", "content": "hi"}, "stray"]) == ("hi", False, False)
    parts = ["stray", {"type": "text", "text": "hi"}]
    assert turn_facts([{"role": "user", "content": parts}]) == ("hi", False, False)


def test_a_text_part_without_text_adds_no_words():
    from modelwire.routing import route_messages

    convo = [{"role": "user", "content": [{"type": "text"}, {"type": "text", "text": "hi"}]}]
    assert route_messages(convo, CONFIG).reason == "simple: 1 words, no keywords"


def test_route_messages_passes_on_the_sticky_state_and_the_primary():
    from modelwire.routing import route_messages

    state = RoutingMemory().state("c")
    route = route_messages([{"role": "user", "content": "please refactor"}], CONFIG,
                           sticky_state=state, primary="openai/gpt-5-mini")
    assert (route.kind, route.model) == ("primary", "gpt-5-mini")
    assert state.escalated_because == "keyword: refactor" and state.last is route


def test_missing_primary_error_names_the_config_file():
    no_default: dict = {}
    with pytest.raises(ConfigError) as exc:
        choose_route("hi", config_from_dict(no_default, path="/etc/mw.yaml"))
    assert str(exc.value).startswith("/etc/mw.yaml: default_model: smart routing needs")
    with pytest.raises(ConfigError) as exc:
        choose_route("hi", config_from_dict(no_default))
    assert str(exc.value).startswith("default_model: smart routing needs")


def test_memory_keeps_ten_thousand_conversations_by_default():
    memory = RoutingMemory()
    first = memory.state("c0")
    for n in range(1, 10_000):
        memory.state(f"c{n}")
    assert len(memory) == 10_000 and memory.state("c0") is first
    memory.state("one more")  # evicts c1, the least recently used
    assert len(memory) == 10_000 and memory.state("c0") is first
