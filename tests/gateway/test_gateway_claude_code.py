"""What Claude Code sends by default reaches every upstream with its meaning: mid-conversation
system messages at their place, interleaved thinking in its order (signatures intact), glob
model ids, the HEAD / preflight; a custom Anthropic upstream takes the same-protocol lane."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from modelwire.config import load_config
from modelwire.emulator import Emulator
from modelwire.gateway.models import ModelTable
from modelwire.gateway.testing import RunningGateway

BETAS = "claude-code-20250219,interleaved-thinking-2025-05-14,mid-conversation-system-2026-04-07"
HEADERS = {"x-api-key": "sk-ant-fake-0123456789", "anthropic-version": "2023-06-01", "anthropic-beta": BETAS}
REMINDER = "Available agent types: general-purpose."


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator(profile="lenient") as e:
        yield e


@pytest.fixture(scope="module")
def gw(emu: Emulator, tmp_path_factory) -> Iterator[RunningGateway]:
    path = tmp_path_factory.mktemp("cc") / "modelwire.yaml"
    a, o = emu.anthropic_base_url(), emu.openai_base_url()
    path.write_text(
        "models:\n"
        f"  opus48: {{provider: emulator-anthropic, model: claude-opus-4-8, base_url: \"{a}\"}}\n"
        f"  sonnet45: {{provider: emulator-anthropic, model: claude-sonnet-4-5, base_url: \"{a}\"}}\n"
        f"  chat: {{provider: emulator, model: emulator-1, base_url: \"{o}\"}}\n"
        f"  resp: {{provider: emulator-responses, model: emulator-1, base_url: \"{o}\"}}\n"
        f"  mine: {{provider: custom, api_mode: anthropic_messages, model: claude-opus-4-8, base_url: \"{a}\", api_key_env: MINE_KEY}}\n"
        "gateway:\n"
        "  aliases: {claude-opus-4-8: opus48, \"claude-sonnet-*\": sonnet45, \"claude-*\": chat}\n"
    )
    mp = pytest.MonkeyPatch()
    mp.setenv("MINE_KEY", "sk-ant-mine-0123456789")
    try:
        with RunningGateway(load_config(str(path)), environ={}) as g:
            yield g
    finally:
        mp.undo()


def _claude_code_body(model: str, **over) -> dict:
    """The shape of Claude Code's first request: a user turn, then a system message."""
    body = {
        "model": model, "max_tokens": 4096, "stream": False,
        "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "say hi", "cache_control": {"type": "ephemeral"}}]},
            {"role": "system", "content": REMINDER},
        ],
        "metadata": {"user_id": "user-0123"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    }
    body.update(over)
    return body


def _text(content) -> str:
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _last(emu: Emulator) -> dict:
    return emu.requests()["requests"][-1]


def _post(gw: RunningGateway, body: dict, **kw) -> httpx.Response:
    return httpx.post(f"{gw.base_url}/v1/messages?beta=true", json=body, headers=HEADERS, timeout=30, **kw)


def test_mid_conversation_system_goes_as_it_came_to_a_model_that_takes_it(gw, emu):
    resp = _post(gw, _claude_code_body("claude-opus-4-8"))
    assert resp.status_code == 200, resp.text
    sent = _last(emu)
    assert [m["role"] for m in sent["body"]["messages"]] == ["user", "system"]
    assert sent["body"]["messages"][1]["content"] == [{"type": "text", "text": REMINDER}]
    assert "mid-conversation-system-2026-04-07" in sent["headers"]["anthropic-beta"]


def test_mid_conversation_system_becomes_a_reminder_in_the_user_turn_for_older_claude(gw, emu):
    resp = _post(gw, _claude_code_body("claude-sonnet-4-5-20250929"))
    assert resp.status_code == 200, resp.text
    messages = _last(emu)["body"]["messages"]
    assert [m["role"] for m in messages] == ["user"]  # merged: Anthropic wants alternation
    assert [b["text"] for b in messages[0]["content"]] == [
        "say hi", f"<system-reminder>\n{REMINDER}\n</system-reminder>"]


def test_mid_conversation_system_is_a_system_message_at_its_place_toward_chat_completions(gw, emu):
    resp = _post(gw, _claude_code_body("claude-haiku-4-5"))  # the claude-* glob: chat
    assert resp.status_code == 200, resp.text
    sent = _last(emu)
    assert sent["path"].endswith("/chat/completions")
    assert [(m["role"], _text(m["content"])) for m in sent["body"]["messages"]] == [
        ("system", "You are a coding agent."), ("user", "say hi"), ("system", REMINDER)]
    for field in ("metadata", "context_management"):  # Anthropic-only fields: left out
        assert field not in sent["body"]


def test_mid_conversation_system_is_an_input_item_at_its_place_toward_responses(gw, emu):
    resp = _post(gw, _claude_code_body("resp"))
    assert resp.status_code == 200, resp.text
    body = _last(emu)["body"]
    assert body["instructions"] == "You are a coding agent."
    roles = [item.get("role") for item in body["input"]]
    assert roles == ["user", "system"] or roles == ["user", "developer"]
    assert "context_management" not in body and "metadata" not in body


def test_a_system_message_where_anthropic_allows_none_becomes_a_reminder(gw, emu):
    # after an assistant turn (not a user turn): no native place, so a user-turn reminder
    body = _claude_code_body("claude-opus-4-8", messages=[
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
        {"role": "system", "content": REMINDER}, {"role": "user", "content": "go on"}])
    resp = _post(gw, body)
    assert resp.status_code == 200, resp.text
    messages = _last(emu)["body"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content"][0]["text"].startswith("<system-reminder>")


def _interleaved_answer(gw, emu, stream: bool) -> list[dict]:
    emu.set_script([{"reasoning": "First the clock.", "tool_calls": [
        {"name": "clock", "arguments": {"tz": "UTC"}}, {"name": "weather", "arguments": {"city": "Paris"}}]}])
    try:
        body = _claude_code_body("claude-opus-4-8", stream=stream, thinking={"type": "adaptive"}, tools=TOOLS)
        if not stream:
            resp = _post(gw, body)
            assert resp.status_code == 200, resp.text
            return resp.json()["content"]
        import anthropic

        client = anthropic.Anthropic(base_url=gw.base_url, api_key="sk-ant-fake-0123456789")
        args = {k: v for k, v in body.items() if k not in ("stream", "context_management")}
        with client.messages.stream(**args, extra_body={"context_management": body["context_management"]}) as s:
            return [b.model_dump(exclude_none=True) for b in s.get_final_message().content]
    finally:
        emu.set_script(None)


TOOLS = [{"name": n, "description": f"the {n}", "input_schema": {"type": "object", "properties": {
    "tz": {"type": "string"}, "city": {"type": "string"}}}} for n in ("clock", "weather")]


@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
def test_interleaved_thinking_keeps_its_order_and_signatures_on_the_next_turn(gw, emu, stream):
    blocks = _interleaved_answer(gw, emu, stream)
    kinds = [b["type"] for b in blocks]
    assert kinds == ["thinking", "tool_use", "thinking", "tool_use"]
    results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "ok"} for b in blocks if b["type"] == "tool_use"]
    body = _claude_code_body("claude-opus-4-8", thinking={"type": "adaptive"}, tools=TOOLS)
    body["messages"] = [*body["messages"][:1], {"role": "assistant", "content": blocks},
                        {"role": "user", "content": results}]
    resp = _post(gw, body)  # the emulator checks each signature at its place
    assert resp.status_code == 200, resp.text
    sent = _last(emu)["body"]["messages"][1]["content"]
    assert [b["type"] for b in sent] == kinds
    # the client held sealed copies (the emulator is a foreign issuer at this door); the
    # upstream got its own signatures back, each at its place (else it answers 400)
    assert all(b["signature"].startswith("TVdF") for b in sent if b["type"] == "thinking")


def test_glob_aliases_come_after_exact_ids_and_the_first_match_wins():
    table = ModelTable(names=("opus", "sonnet", "chat"), allow_provider_models=False,
                       aliases={"claude-opus-4-8": "opus", "claude-sonnet-*": "sonnet", "claude-*": "chat", "chat": "opus"})
    assert table.resolve("claude-opus-4-8") == "opus"  # exact alias
    assert table.resolve("claude-sonnet-4-5-20250929") == "sonnet"  # first matching glob
    assert table.resolve("claude-opus-4-7") == "chat"
    assert table.resolve("chat") == "opus"  # an exact alias wins over a name
    assert table.resolve("sonnet") == "sonnet"
    with pytest.raises(Exception, match="unknown model 'gpt-5'"):
        table.resolve("gpt-5")
    ids = [m["id"] for m in table.listing(anthropic=True)["data"]]
    assert "claude-*" not in ids and "claude-opus-4-8" in ids


def test_get_and_head_root_answer_a_short_identity_without_a_key(gw):
    got = httpx.get(f"{gw.base_url}/", timeout=10)
    assert got.status_code == 200
    assert got.json()["name"] == "modelwire" and "/v1/messages" in got.json()["doors"]
    head = httpx.head(f"{gw.base_url}/", timeout=10)
    assert head.status_code == 200 and head.content == b""


def test_a_model_id_matching_a_glob_is_served_and_listed_by_id(gw):
    one = httpx.get(f"{gw.base_url}/v1/models/claude-opus-4-7", headers=HEADERS, timeout=10)
    assert one.status_code == 200 and one.json()["id"] == "claude-opus-4-7"


def test_a_custom_anthropic_upstream_takes_the_same_protocol_lane(gw, emu):
    body = _claude_code_body("mine", messages=_claude_code_body("x")["messages"][:1])
    resp = _post(gw, body)
    assert resp.status_code == 200, resp.text
    assert resp.headers.get("x-modelwire-lane") == "passthrough"
    sent = _last(emu)
    assert sent["body"]["messages"] == body["messages"]  # the client's own messages
    assert sent["body"]["metadata"] == {"user_id": "user-0123"}


def test_a_custom_upstream_gets_a_reminder_for_a_mid_conversation_system_message(gw, emu):
    # whether a custom endpoint takes them is unknown: translated, never a 400
    resp = _post(gw, _claude_code_body("mine"))
    assert resp.status_code == 200, resp.text
    assert resp.headers.get("x-modelwire-lane") is None
    assert [m["role"] for m in _last(emu)["body"]["messages"]] == ["user"]


CHAT_TOOLS = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                "parameters": t["input_schema"]}} for t in TOOLS]


def test_a_chat_client_that_echoes_the_message_gives_the_interleaved_turn_back_in_order(gw, emu):
    emu.set_script([{"reasoning": "First the clock.", "tool_calls": [
        {"name": "clock", "arguments": {"tz": "UTC"}}, {"name": "weather", "arguments": {"city": "Paris"}}]}])
    ask = {"model": "opus48", "reasoning_effort": "high", "tools": CHAT_TOOLS,
           "messages": [{"role": "user", "content": "time and weather?"}]}
    try:
        resp = httpx.post(f"{gw.base_url}/v1/chat/completions", json=ask, timeout=30)
    finally:
        emu.set_script(None)
    assert resp.status_code == 200, resp.text
    message = resp.json()["choices"][0]["message"]
    assert message["block_order"] == ["reasoning", "tool_call", "reasoning", "tool_call"]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in message["tool_calls"]]
    again = httpx.post(f"{gw.base_url}/v1/chat/completions", timeout=30,
                       json={**ask, "messages": [*ask["messages"], message, *results]})
    assert again.status_code == 200, again.text  # the emulator checks each signature's place
    sent = _last(emu)["body"]["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "tool_use", "thinking", "tool_use"]
