"""Codex's tools through the Responses door to every upstream, over loopback HTTP.

Namespace tools reach an upstream without namespaces as flat functions (a Responses
upstream as they came) and come back as ``function_call`` items with ``namespace`` and
``name`` apart; hosted tools the upstream
cannot run follow ``gateway.unsupported_tools`` (drop, refuse, map).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from modelwire.config import load_config
from modelwire.emulator import Emulator
from modelwire.gateway.testing import RunningGateway

KEY = "gw-test-key-0123456789"
UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]
CONFIG = """
models:
  emu-chat:      {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  emu-anthropic: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
  emu-responses: {{provider: emulator-responses, model: gpt-5-mini, base_url: "{openai}"}}
  openai-responses: {{provider: openai, model: gpt-5-mini, api_mode: responses, base_url: "{openai_rules}",
                      api_key_env: TEST_OPENAI_KEY}}
default_model: emu-chat
gateway:
  keys_env: TEST_GATEWAY_KEYS
  unsupported_tools: {mode}
"""
COLOR = {"type": "namespace", "name": "mcp__demo", "description": "Tools of the demo MCP server.",
         "tools": [{"type": "function", "name": "lookup_color", "description": "Favourite colour of a person.",
                    "strict": False, "parameters": {"type": "object", "properties": {"person": {"type": "string"}},
                                                    "required": ["person"]}}]}
SHELL = {"type": "function", "name": "exec_command", "description": "Run a command.", "strict": False,
         "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}
WEB = {"type": "web_search", "external_web_access": False}
CALL_COLOR = [{"tool_calls": [{"name": "mcp__demo__lookup_color", "arguments": {"person": "Ada"}}]}]


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


def _gateway(emu: Emulator, mode: str, tmp_path_factory) -> RunningGateway:
    path = tmp_path_factory.mktemp(f"gw-{mode}") / "modelwire.yaml"
    path.write_text(CONFIG.format(openai=emu.openai_base_url(), anthropic=emu.anthropic_base_url(), mode=mode,
                                  openai_rules=emu.openai_base_url("openai")))
    return RunningGateway(load_config(str(path)), environ={"TEST_GATEWAY_KEYS": KEY})


@pytest.fixture(scope="module")
def gateways(emu, tmp_path_factory) -> Iterator[dict[str, RunningGateway]]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TEST_OPENAI_KEY", "sk-fake-0123456789")  # the openai provider reads its key here
        running = {mode: _gateway(emu, mode, tmp_path_factory).__enter__() for mode in ("drop", "refuse", "map")}
        yield running
        for gw in running.values():
            gw.__exit__(None, None, None)


def _post(gw: RunningGateway, body: dict) -> httpx.Response:
    return httpx.post(gw.base_url + "/v1/responses", json=body, timeout=30,
                      headers={"authorization": f"Bearer {KEY}"})


def _completed(answer: httpx.Response) -> dict:
    """The response object of a streamed answer's response.completed event."""
    events = [orjson.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
    done = [e["response"] for e in events if e["type"] == "response.completed"]
    assert len(done) == 1, answer.text[-500:]
    return done[0]


def _upstream_body(emu: Emulator) -> dict:
    return emu.requests()["requests"][-1]["body"]


def _upstream_tool_names(body: dict) -> list[str]:
    return [t.get("name") or t.get("function", {}).get("name") or t["type"] for t in body.get("tools") or ()]


# ------------------------------------------------------------------ namespaces
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_namespaced_tool_call_comes_back_with_namespace_and_name(gateways, emu, upstream, stream):
    emu.set_script(CALL_COLOR)
    body = {"model": upstream, "input": [{"type": "message", "role": "user", "content": "Ada's colour?"}],
            "tools": [SHELL, COLOR], "stream": stream}
    answer = _post(gateways["drop"], body)
    assert answer.status_code == 200, answer.text
    response = _completed(answer) if stream else answer.json()
    calls = [i for i in response["output"] if i["type"] == "function_call"]
    assert [(c["namespace"], c["name"], orjson.loads(c["arguments"])) for c in calls] == [
        ("mcp__demo", "lookup_color", {"person": "Ada"})]
    # translated for the upstream (the emulator's Responses profile is no lane upstream): a
    # Responses upstream gets the namespace as it came, the others one flat function
    sent = _upstream_body(emu)
    if upstream == "emu-responses":
        assert sent["tools"][1] == COLOR
    else:
        assert _upstream_tool_names(sent) == ["exec_command", "mcp__demo__lookup_color"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_namespace_tools_ride_the_same_protocol_lane_as_they_came(gateways, emu, stream):
    emu.set_script(CALL_COLOR)
    body = {"model": "openai-responses", "input": "Ada's colour?", "tools": [SHELL, COLOR], "stream": stream}
    answer = _post(gateways["drop"], body)
    assert answer.status_code == 200 and answer.headers["x-modelwire-lane"] == "passthrough", answer.text
    assert _upstream_body(emu)["tools"] == [SHELL, COLOR]
    response = _completed(answer) if stream else answer.json()
    calls = [(c["namespace"], c["name"]) for c in response["output"] if c["type"] == "function_call"]
    assert calls == [("mcp__demo", "lookup_color")]  # the upstream's own namespaced call


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_namespaced_call_in_the_history_reaches_the_upstream_as_the_flat_call(gateways, emu, upstream):
    emu.set_script([{"text": "Ada likes teal."}])
    history = [
        {"type": "message", "role": "user", "content": "Ada's colour?"},
        {"type": "function_call", "call_id": "call_1", "namespace": "mcp__demo", "name": "lookup_color",
         "arguments": '{"person": "Ada"}', "id": "fc_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "teal"}]},
    ]
    answer = _post(gateways["drop"], {"model": upstream, "input": history, "tools": [COLOR], "store": False})
    assert answer.status_code == 200, answer.text
    assert answer.json()["output"][-1]["content"][0]["text"] == "Ada likes teal."
    sent = _upstream_body(emu)
    text = orjson.dumps(sent)
    assert b"teal" in text
    if upstream == "emu-responses":
        call = next(i for i in sent["input"] if i.get("type") == "function_call")
        assert (call["namespace"], call["name"]) == ("mcp__demo", "lookup_color")
    else:
        assert b'"mcp__demo__lookup_color"' in text


# ------------------------------------------------------------------ hosted tools
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("upstream", ["emu-chat", "emu-anthropic"])
def test_a_hosted_tool_the_upstream_cannot_run_is_dropped_and_named(gateways, emu, upstream, stream, caplog):
    emu.set_script([{"text": "No search needed."}])
    answer = _post(gateways["drop"], {"model": upstream, "input": "hi", "tools": [SHELL, WEB], "stream": stream})
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-modelwire-dropped-tools"] == "web_search"
    assert _upstream_tool_names(_upstream_body(emu)) == ["exec_command"]
    assert any("web_search" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


def test_a_hosted_tool_reaches_a_responses_upstream_as_it_came(gateways, emu):
    emu.set_script([{"text": "ok"}])
    answer = _post(gateways["drop"], {"model": "emu-responses", "input": [
        {"type": "message", "role": "user", "content": "hi", "id": "msg_1"}], "tools": [SHELL, WEB], "store": False})
    assert answer.status_code == 200, answer.text
    assert "x-modelwire-dropped-tools" not in answer.headers
    assert _upstream_body(emu)["tools"][1] == WEB


@pytest.mark.parametrize("upstream", ["emu-chat", "emu-anthropic"])
def test_refuse_keeps_the_400_that_names_the_tool(gateways, emu, upstream):
    answer = _post(gateways["refuse"], {"model": upstream, "input": "hi", "tools": [SHELL, WEB]})
    assert answer.status_code == 400
    assert "'web_search' is a tool type of" in answer.json()["error"]["message"]


def test_map_sends_anthropics_own_web_search_and_drops_where_there_is_none(gateways, emu):
    emu.set_script([{"text": "ok"}, {"text": "ok"}])
    answer = _post(gateways["map"], {"model": "emu-anthropic", "input": "hi", "tools": [SHELL, WEB]})
    assert answer.status_code == 200, answer.text
    assert "x-modelwire-dropped-tools" not in answer.headers
    assert _upstream_body(emu)["tools"][1] == {"type": "web_search_20250305", "name": "web_search"}
    answer = _post(gateways["map"], {"model": "emu-chat", "input": "hi", "tools": [SHELL, WEB]})
    assert answer.status_code == 200 and answer.headers["x-modelwire-dropped-tools"] == "web_search"
