"""Codex CLI, unchanged, through the gateway's Responses door to each upstream protocol.

Codex CLI 0.171.0 (``codex exec``, its default configuration but for the model provider's
base URL, key and model) talks to a gateway started here on a free loopback port, with the
emulator behind it speaking Chat Completions, Anthropic Messages or Responses. Codex runs
offline: a temporary HOME and CODEX_HOME, the gateway and emulator on 127.0.0.1, every run
bounded. The emulator replays a script per conversation, so each upstream request and each
answer is known; the assertions read what Codex did (its ``--json`` events) and what reached
the upstream (the emulator's request log).

``MODELWIRE_RECORD_CODEX_FIXTURES=1`` also records the requests Codex sends into
``tests/fixtures/codex/`` (see its README.md), through a recording proxy in front of the
gateway.
"""

from __future__ import annotations

import json
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from modelwire.config import load_config
from modelwire.emulator import Emulator
from modelwire.gateway.testing import RunningGateway

from .codex_fixtures import FIXTURES, RecordingProxy, write_fixture
from .programs import CODEX_CLI, installed

KEY = "gw-codex-key-0123456789"
UPSTREAMS = ["emu-chat", "emu-anthropic", "emu-responses"]
RUN_TIMEOUT = 60  # seconds per `codex exec`; a run takes a few seconds once installed
RECORD = os.environ.get("MODELWIRE_RECORD_CODEX_FIXTURES") == "1"
CONFIG = """
models:
  emu-chat:      {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  emu-anthropic: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
  emu-responses: {{provider: emulator-responses, model: gpt-5-mini, base_url: "{openai}"}}
default_model: emu-chat
gateway:
  keys_env: CODEX_TEST_GATEWAY_KEYS
"""
# a stdio MCP server with one tool: Codex offers it as the namespace mcp__demo
MCP_SERVER = textwrap.dedent('''
    import json, sys
    TOOL = {"name": "lookup_color", "description": "Look up the favourite colour of a person.",
            "inputSchema": {"type": "object", "properties": {"person": {"type": "string"}},
                            "required": ["person"]}}
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") is None:
            continue  # a notification
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {}}, "serverInfo": {"name": "demo", "version": "1.0"}}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            person = msg["params"]["arguments"].get("person", "")
            result = {"content": [{"type": "text", "text": f"{person} likes teal"}], "isError": False}
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                              "error": {"code": -32601, "message": "unknown method"}}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
''')
def _png(side: int = 8) -> bytes:
    """A small red square as a PNG, for view_image (a tool result with an image)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * side for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def codex() -> pathlib.Path:
    return installed(CODEX_CLI)


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(scope="module")
def gateway(emu, tmp_path_factory) -> Iterator[RunningGateway]:
    path = tmp_path_factory.mktemp("codex-gw") / "modelwire.yaml"
    path.write_text(CONFIG.format(openai=emu.openai_base_url(), anthropic=emu.anthropic_base_url()))
    with RunningGateway(load_config(str(path)), environ={"CODEX_TEST_GATEWAY_KEYS": KEY}) as gw:
        yield gw


@pytest.fixture
def channel(gateway) -> Iterator[RecordingProxy | None]:
    """A recording proxy in front of the gateway when recording fixtures, else None."""
    if not RECORD:
        yield None
        return
    with RecordingProxy(gateway.base_url) as proxy:
        yield proxy


class Run:
    """One ``codex exec`` in a fresh HOME / CODEX_HOME / working directory."""

    def __init__(self, exe: pathlib.Path, base_url: str, model: str, root: pathlib.Path) -> None:
        self.exe, self.base_url, self.model = exe, base_url, model
        self.home, self.codex_home, self.cwd = root / "home", root / "codex-home", root / "work"
        for path in (self.home, self.codex_home, self.cwd):
            path.mkdir()
        self.mcp: str | None = None

    def with_mcp_server(self) -> None:
        server = self.home / "mcp_demo.py"
        server.write_text(MCP_SERVER)
        # the MCP tool runs without a prompt: `codex exec` has nobody to ask
        self.mcp = (f'[mcp_servers.demo]\ncommand = {json.dumps(sys.executable)}\n'
                    f'args = [{json.dumps(str(server))}]\ndefault_tools_approval_mode = "approve"\n')

    def config(self) -> str:
        return textwrap.dedent(f'''\
            model = "{self.model}"
            model_provider = "modelwire"

            [model_providers.modelwire]
            name = "modelwire"
            base_url = "{self.base_url}"
            wire_api = "responses"
            env_key = "MODELWIRE_GATEWAY_KEY"
            ''') + (self.mcp or "")

    def __call__(self, prompt: str, *options: str) -> list[dict[str, Any]]:
        (self.codex_home / "config.toml").write_text(self.config())
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
               "CODEX_HOME": str(self.codex_home), "MODELWIRE_GATEWAY_KEY": KEY, "LANG": "C.UTF-8"}
        done = subprocess.run(
            [str(self.exe), "exec", "--json", "--skip-git-repo-check", *options, prompt],
            cwd=self.cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=RUN_TIMEOUT, check=False)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        errors = [e for e in events if e.get("type") in ("error", "turn.failed")]
        assert done.returncode == 0 and not errors, f"{errors}\n{done.stderr[-2000:]}"
        return events


def _items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e.get("type") == "item.completed" and e["item"]["type"] == kind]


def _upstream(emu: Emulator) -> list[dict[str, Any]]:
    return [r["body"] for r in emu.requests()["requests"] if r["status"] == 200]


def _tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results an upstream request carries, as text, in any protocol."""
    out = []
    for item in body.get("messages") or body.get("input") or ():
        if item.get("role") == "tool" or item.get("type") == "function_call_output":
            out.append(json.dumps(item.get("content", item.get("output"))))
        elif isinstance(item.get("content"), list):
            out += [json.dumps(b.get("content")) for b in item["content"] if b.get("type") == "tool_result"]
    return out


@pytest.fixture
def run(codex, gateway, channel, emu, tmp_path, request) -> Iterator[Any]:
    emu.reset()
    made: list[Run] = []
    base_url = (channel.base_url if channel else gateway.base_url) + "/v1"

    def start(model: str, script: list[dict[str, Any]]) -> Run:
        emu.set_script(script)
        made.append(Run(codex, base_url, model, tmp_path))
        return made[0]

    yield start
    emu.set_script(None)
    if channel is not None and made and made[0].model == "emu-chat":
        name = request.node.originalname.removeprefix("test_codex_")
        for n, body in enumerate(channel.bodies):
            write_fixture(FIXTURES / f"{name}-{n + 1}.json", body, made[0].cwd, made[0].home)


# ------------------------------------------------------------------ conversations
@pytest.mark.parametrize("model", UPSTREAMS)
def test_codex_plain_question(run, emu, model):
    codex = run(model, [{"text": "Hello from the emulator."}])
    events = codex("Say hello.")
    assert [m["text"] for m in _items(events, "agent_message")] == ["Hello from the emulator."]
    done = [e for e in events if e["type"] == "turn.completed"]
    assert len(done) == 1 and done[0]["usage"]["input_tokens"] > 0 and done[0]["usage"]["output_tokens"] > 0
    assert len(_upstream(emu)) == 1


@pytest.mark.parametrize("model", UPSTREAMS)
def test_codex_tool_rounds_with_reasoning(run, emu, model):
    codex = run(model, [])
    (codex.cwd / "dot.png").write_bytes(_png())
    emu.set_script([
        {"reasoning": "First I look at the directory.",
         "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo round-one"}}]},
        {"reasoning": "Now I look at the picture.",
         "tool_calls": [{"name": "view_image", "arguments": {"path": str(codex.cwd / "dot.png")}}]},
        {"reasoning": "Both tools answered.", "text": "I ran a command and looked at the picture."},
    ])
    events = codex("Run echo, then look at dot.png.", "-c", 'model_reasoning_effort="medium"')
    assert [m["text"] for m in _items(events, "agent_message")] == ["I ran a command and looked at the picture."]
    assert [c["command"] for c in _items(events, "command_execution")] == ["/bin/bash -lc 'echo round-one'"]
    bodies = _upstream(emu)
    assert len(bodies) == 3
    # each round's result reached the upstream, the picture as image data (a PNG's first
    # bytes in base64; Chat Completions carries it in a user message after the tool result)
    assert len(_tool_results(bodies[1])) == 1 and len(_tool_results(bodies[2])) == 2
    assert "iVBORw0KGgo" not in json.dumps(bodies[1]) and "iVBORw0KGgo" in json.dumps(bodies[2])
    assert len(_items(events, "reasoning")) == 3


@pytest.mark.parametrize("model", UPSTREAMS)
def test_codex_namespaced_mcp_tool(run, emu, model):
    codex = run(model, [{"tool_calls": [{"name": "mcp__demo__lookup_color", "arguments": {"person": "Ada"}}]},
                        {"text": "Ada likes teal."}])
    codex.with_mcp_server()
    events = codex("What colour does Ada like? Ask the demo server.")
    calls = _items(events, "mcp_tool_call")
    assert [(c["server"], c["tool"], c["arguments"], c["status"]) for c in calls] == [
        ("demo", "lookup_color", {"person": "Ada"}, "completed")]
    assert [m["text"] for m in _items(events, "agent_message")] == ["Ada likes teal."]
    first, second = _upstream(emu)
    # toward Chat Completions and Anthropic the namespace member is one flat function, toward
    # Responses the namespace as Codex sent it; its result is the server's
    if model == "emu-responses":
        assert [t["tools"][0]["name"] for t in first["tools"] if t.get("name") == "mcp__demo"] == ["lookup_color"]
    else:
        assert "mcp__demo__lookup_color" in json.dumps(first["tools"])
    assert "Ada likes teal" in _tool_results(second)[0]
