"""Codex CLI's recorded requests (tests/fixtures/codex) through the Responses door to each
upstream protocol, without Codex: what it needs from every answer holds for each one.

Codex parses every streamed event; the facts checked here are the ones it failed on or
relies on: ``response.completed`` with a complete usage (``total_tokens``), calls of
namespace members named as it declared them (``namespace`` + ``name``), no flat name of
ours leaking back, hosted tools the upstream cannot run named in the answer's header.
"""

from __future__ import annotations

import json
import pathlib
import re

import httpx
import pytest

from modelwire.codecs import responses

GATEWAY_KEY = "gw-test-key-0123456789"
FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "codex"
FILES = sorted(FIXTURES.glob("*.json"))
UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]
NAME_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text())


def _declared(body: dict) -> set[tuple[str | None, str]]:
    """(namespace or None, name) of every function and custom tool the request declares."""
    out: set[tuple[str | None, str]] = set()
    for tool in body["tools"]:
        if tool["type"] == "namespace":
            out |= {(tool["name"], member["name"]) for member in tool["tools"]}
        elif tool["type"] in ("function", "custom"):
            out.add((None, tool["name"]))
    return out


def test_the_fixtures_are_there_and_hold_what_they_are_for():
    # the recordings cover Codex's namespace tools, its hosted web search and an image result
    assert len(FILES) >= 6
    every = [_load(p) for p in FILES]
    assert all({t["type"] for t in b["tools"]} >= {"function", "namespace", "web_search"} for b in every)
    assert any(t["name"] == "mcp__demo" for b in every for t in b["tools"] if t["type"] == "namespace")
    assert any(p.get("type") == "input_image" for b in every for i in b["input"]
               if i.get("type") == "function_call_output" and isinstance(i["output"], list) for p in i["output"])


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_tool_name_the_door_makes_fits_every_provider(path):
    body = _load(path)
    request = responses.decode_request(body)
    names = [t["function"]["name"] for t in request["tools"] if t.get("type") == "function"]
    assert all(NAME_RULE.fullmatch(n) for n in names) and len(set(names)) == len(names)
    flat = request["metadata"]["namespaces"]
    assert {pair for pair in flat.values()} == {p for p in _declared(body) if p[0] is not None}


def _events(text: str) -> list[dict]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_recorded_codex_request_is_served_in_codex_terms(gateway, emulator, path, upstream):
    body = dict(_load(path), model=upstream)
    # the model calls the MCP tool where Codex offered one (a namespace member), else its shell
    space = "mcp__demo" in json.dumps(body["tools"])
    expected = ("mcp__demo", "lookup_color") if space else (None, "exec_command")
    emulator.set_script([{"tool_calls": [{"name": "mcp__demo__lookup_color" if space else "exec_command",
                                          "arguments": {"person": "Ada"} if space else {"cmd": "ls"}}]}])
    try:
        answer = httpx.post(gateway.base_url + "/v1/responses", json=body, timeout=60,
                            headers={"authorization": f"Bearer {GATEWAY_KEY}"})
    finally:
        emulator.set_script(None)
    assert answer.status_code == 200, answer.text[:500]
    events = _events(answer.text)
    done = [e["response"] for e in events if e["type"] == "response.completed"]
    assert len(done) == 1 and events[-1]["type"] == "response.completed"
    usage = done[0]["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    declared = _declared(body)
    calls = [i for e in events if e["type"] == "response.output_item.done"
             for i in [e["item"]] if i["type"] in ("function_call", "custom_tool_call")]
    assert [(c.get("namespace"), c["name"]) for c in calls] == [expected] and expected in declared
    if upstream == "emu-responses":
        assert "x-modelwire-dropped-tools" not in answer.headers
    else:
        assert answer.headers["x-modelwire-dropped-tools"] == "web_search"
        sent = emulator.requests()["requests"][-1]["body"]
        names = [t.get("name") or t["function"]["name"] for t in sent["tools"]]
        assert "mcp__demo__lookup_color" in names or "mcp__demo" not in json.dumps(body["tools"])
        assert all(NAME_RULE.fullmatch(n) for n in names)
