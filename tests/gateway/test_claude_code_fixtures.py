"""Claude Code's recorded requests (tests/fixtures/claude_code) through the Anthropic door to
every upstream protocol: each is answered (never a 400 that Claude Code's defaults cause),
its mid-conversation system message arrives at its place in the upstream's own form, and
Anthropic upstreams get each assistant turn's blocks in their order, signatures verified."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

import httpx
import pytest

from modelwire.config import load_config
from modelwire.emulator import Emulator
from modelwire.gateway.testing import RunningGateway

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))
SIGNING_KEY = "claude-code-fixtures"  # what signed the fixtures' thinking blocks
# model name -> what the upstream is: the lane (Opus 4.8 on Anthropic's API), translated
# toward an older Claude on Anthropic's API, the emulator's three protocols
UPSTREAMS = ["anthropic-opus48", "anthropic-sonnet45", "custom-anthropic", "emulator-anthropic", "chat", "responses"]


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator(profile="lenient", signing_key=SIGNING_KEY) as e:
        yield e


@pytest.fixture(scope="module")
def gw(emu, tmp_path_factory) -> Iterator[RunningGateway]:
    real = emu.anthropic_base_url("anthropic")  # the emulator playing api.anthropic.com
    path = tmp_path_factory.mktemp("ccfix") / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  anthropic-opus48: {{provider: anthropic, model: claude-opus-4-8, base_url: \"{real}\", api_key_env: FIX_KEY}}\n"
        f"  anthropic-sonnet45: {{provider: anthropic, model: claude-sonnet-4-5, base_url: \"{real}\", api_key_env: FIX_KEY}}\n"
        f"  custom-anthropic: {{provider: custom, api_mode: anthropic_messages, model: claude-opus-4-8, base_url: \"{real}\", api_key_env: FIX_KEY}}\n"
        f"  emulator-anthropic: {{provider: emulator-anthropic, model: claude-opus-4-8, base_url: \"{emu.anthropic_base_url()}\"}}\n"
        f"  chat: {{provider: emulator, model: emulator-1, base_url: \"{emu.openai_base_url()}\"}}\n"
        f"  responses: {{provider: emulator-responses, model: emulator-1, base_url: \"{emu.openai_base_url()}\"}}\n"
    )
    mp = pytest.MonkeyPatch()
    mp.setenv("FIX_KEY", "sk-ant-fixtures-0123456789")
    try:
        with RunningGateway(load_config(str(path)), environ={}) as g:
            yield g
    finally:
        mp.undo()


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _kinds(messages: list[dict]) -> list[list[str]]:
    return [[b["type"] for b in m["content"]] for m in messages if m["role"] == "assistant"]


def test_the_fixtures_are_there():
    assert NAMES == ["plain_t0", "tools_t0", "tools_t1", "tools_t2"]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("name", NAMES)
def test_claude_codes_request_is_served_by_every_upstream(gw, emu, name, upstream):
    fixture = _fixture(name)
    body = dict(fixture["body"], model=upstream)
    since = emu.requests()["requests"][-1]["n"] if emu.requests()["requests"] else 0
    headers = {**fixture["headers"], "x-api-key": "sk-ant-fake-0123456789"}
    resp = httpx.post(f"{gw.base_url}{fixture['path']}?beta=true", json=body, headers=headers, timeout=60)
    assert resp.status_code == 200, resp.text[:500]
    assert resp.text.rstrip().endswith('"message_stop"}'), resp.text[-300:]  # Claude Code streams
    [sent] = [r for r in emu.requests()["requests"] if r["n"] > since]
    assert sent["status"] == 200
    assert (resp.headers.get("x-modelwire-lane") == "passthrough") == (upstream == "anthropic-opus48")
    _check_upstream_request(upstream, fixture["body"], sent)


def _check_upstream_request(upstream: str, original: dict, sent: dict) -> None:
    up = sent["body"]
    if upstream == "anthropic-opus48":  # the lane: Claude Code's own bytes
        assert up["messages"] == original["messages"]
        assert up["context_management"] == original["context_management"]
        return
    if upstream == "anthropic-sonnet45":  # translated: a reminder, the blocks in order
        assert "system" not in [m["role"] for m in up["messages"]]
        assert up["messages"][0]["content"][-1]["text"].startswith("<system-reminder>\n<prose ")
        assert _kinds(up["messages"]) == _kinds(original["messages"])
        assert up["context_management"] == original["context_management"]
        return
    if upstream == "custom-anthropic":  # not known to take system messages: a reminder;
        # thinking another issuer signed is not sent to it, its tool calls keep their order
        roles = [m["role"] for m in up["messages"]]
        assert roles[0] == "user" and "system" not in roles
        assert up["messages"][0]["content"][-1]["text"].startswith("<system-reminder>\n<prose ")
        assert _kinds(up["messages"]) == [[k for k in t if k != "thinking"] for t in _kinds(original["messages"])]
        return
    if upstream == "emulator-anthropic":  # Opus 4.8 takes the system message as it came
        assert [m["role"] for m in up["messages"]][:2] == ["user", "system"]
        for kinds in _kinds(up["messages"]):  # another issuer's thinking is not sent there
            assert "thinking" not in kinds
        return
    if upstream == "chat":
        assert [m["role"] for m in up["messages"]][:3] == ["system", "user", "system"]
        # cache_control rides along as sent (OpenRouter caches Anthropic models with it)
        wire = {"role", "content", "tool_calls", "tool_call_id", "reasoning_content", "cache_control"}
        extra = {k for m in up["messages"] for k in m} - wire
        assert not extra, "no modelwire-internal key (block_order...) reaches the wire"
        assert "context_management" not in up and "metadata" not in up
        return
    assert [i.get("role") for i in up["input"]][:2] in (["user", "system"], ["user", "developer"])
    assert "context_management" not in up


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_count_tokens_for_claude_codes_request_answers_every_upstream(gw, upstream):
    fixture = _fixture("tools_t2")
    body = {k: v for k, v in fixture["body"].items() if k not in ("max_tokens", "stream", "metadata")}
    body["model"] = upstream
    resp = httpx.post(f"{gw.base_url}/v1/messages/count_tokens?beta=true", json=body,
                      headers={**fixture["headers"], "x-api-key": "sk-ant-fake-0123456789"}, timeout=60)
    assert resp.status_code == 200, resp.text[:500]
    assert resp.json()["input_tokens"] > 1000
