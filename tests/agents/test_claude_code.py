"""Claude Code 2.1.197, unchanged, through the gateway to the emulator in each of its three
protocols: a plain question, and a tool conversation with thinking (two tool rounds with
thinking interleaved between the calls, a tool result holding an image).

``MODELWIRE_RECORD_FIXTURES=1`` also records Claude Code's own requests (sent straight to
the emulator) into tests/fixtures/claude_code/, sanitized (see fixtures.py).
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Iterator

import pytest

from modelwire.config import load_config
from modelwire.emulator import Emulator
from modelwire.gateway.testing import RunningGateway

from . import fixtures
from .claude_code import FINAL, PLAIN, run_claude, tool_script, workspace

UPSTREAMS = ["emulator", "emulator-anthropic", "emulator-responses"]
SIGNING_KEY = "claude-code-fixtures"  # the fixtures' thinking signatures verify with it


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator(profile="lenient", signing_key=SIGNING_KEY) as e:
        yield e


@pytest.fixture(scope="module", params=UPSTREAMS)
def gateway(request, emu, tmp_path_factory) -> Iterator[tuple[str, RunningGateway]]:
    upstream = request.param
    base = emu.anthropic_base_url() if upstream == "emulator-anthropic" else emu.openai_base_url()
    model = "claude-opus-4-8" if upstream == "emulator-anthropic" else "emulator-1"
    path = tmp_path_factory.mktemp("cc-gw") / "modelwire.yaml"
    # what docs/guides/claude-code.md shows: every id Claude Code asks for, by one glob
    path.write_text(f"models:\n  coder: {{provider: {upstream}, model: {model}, base_url: \"{base}\"}}\n"
                    "gateway:\n  aliases: {\"claude-*\": coder}\n")
    with RunningGateway(load_config(str(path)), environ={}) as gw:
        yield upstream, gw


def _log(emu: Emulator, since: int) -> list[dict]:
    return [r for r in emu.requests()["requests"] if r["n"] > since]


def _last_n(emu: Emulator) -> int:
    reqs = emu.requests()["requests"]
    return reqs[-1]["n"] if reqs else 0


def test_plain_question(gateway, emu, tmp_path):
    upstream, gw = gateway
    since = _last_n(emu)
    emu.set_script([{"text": PLAIN}])
    try:
        run = run_claude(gw.base_url, tmp_path, workspace(tmp_path), "say hi")
    finally:
        emu.set_script(None)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == PLAIN
    sent = _log(emu, since)
    assert [r["status"] for r in sent] == [200]
    assert _system_at_its_place(upstream, sent[0]["body"])


def _system_at_its_place(upstream: str, body: dict) -> bool:
    """Claude Code's mid-conversation system message reached the upstream after the user turn."""
    if upstream == "emulator-anthropic":  # Opus 4.8 takes it as it came
        return [m["role"] for m in body["messages"]][:2] == ["user", "system"]
    if upstream == "emulator":
        return [m["role"] for m in body["messages"]][:3] == ["system", "user", "system"]
    return [i.get("role") for i in body["input"]][:2] in (["user", "system"], ["user", "developer"])


def test_tool_conversation_with_interleaved_thinking_and_an_image(gateway, emu, tmp_path):
    upstream, gw = gateway
    work = workspace(tmp_path)
    since = _last_n(emu)
    emu.set_script(tool_script(work))
    try:
        run = run_claude(gw.base_url, tmp_path, work, "What do my notes say? Look at the picture too.")
    finally:
        emu.set_script(None)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == FINAL
    sent = _log(emu, since)
    assert [r["status"] for r in sent] == [200, 200, 200]  # the emulator checks every rule
    # its tools come compact where the door finds them again: kept by the third request
    # (gateway/kept_body.py), so later turns are parsed without them
    assert gw.gateway.kept_body.lists >= 1
    last = sent[-1]["body"]
    assert "image" in json.dumps(last)  # the picture reached the upstream
    if upstream == "emulator-anthropic":
        turns = [m for m in last["messages"] if m["role"] == "assistant"]
        assert [[b["type"] for b in t["content"]] for t in turns] == [
            ["thinking", "tool_use", "thinking", "tool_use"]] * 2
        results = last["messages"][-3]["content"]  # the first round's results, image included
        assert [c["type"] for c in results[1]["content"]] == ["image"]
    elif upstream == "emulator-responses":
        kinds = [i.get("type") for i in last["input"] if i.get("type") != "message"]
        assert kinds.count("function_call") == 4 and kinds.count("function_call_output") == 4
    else:
        calls = [m for m in last["messages"] if m["role"] == "assistant"]
        assert [len(m["tool_calls"]) for m in calls] == [2, 2]


@pytest.mark.skipif(os.environ.get("MODELWIRE_RECORD_FIXTURES") != "1",
                    reason="records fixtures only with MODELWIRE_RECORD_FIXTURES=1")
def test_record_claude_codes_requests_as_fixtures(emu, tmp_path):
    """Claude Code straight to the emulator: its own bytes, not the gateway's."""
    recorded: list[pathlib.Path] = []
    for name, prompt, script in (("plain", "say hi", [{"text": PLAIN}]),
                                 ("tools", "What do my notes say? Look at the picture too.", None)):
        home = tmp_path / name
        work = workspace(home)
        since = _last_n(emu)
        emu.set_script(script or tool_script(work))
        try:
            run = run_claude(emu.anthropic_base_url(), home, work, prompt)
        finally:
            emu.set_script(None)
        assert run.returncode == 0, run.stdout + run.stderr
        for turn, entry in enumerate(r for r in _log(emu, since) if r["endpoint"] == "messages"):
            recorded.append(fixtures.write(f"{name}_t{turn}", entry, str(home)))
    assert [p.stem for p in recorded] == ["plain_t0", "tools_t0", "tools_t1", "tools_t2"]
