"""Every example in ``modelwire --help`` and its commands' ``--help`` runs as written on a
fresh machine (no config, no key, no network), through the installed console script and
a shell. Examples that need a provider key or a browser are listed with the reason; a new
example that is neither run nor listed fails the first test."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from modelwire.cli import COMMANDS, main

BIN = Path(sys.executable).parent
# a line that starts an example: optional VAR=value words, then the command (or a pipe into it)
_STARTS = re.compile(r"^(?:[A-Z_]+=\S+\s+)*modelwire\s|^printf .*\|\s*modelwire\s")

# run in order in one home (later ones use what earlier ones stored); each must exit 0
SEQUENCES: dict[str, tuple[str, ...]] = {
    "chat": ('modelwire chat "Say hello"',
             'modelwire chat --tools demo "What is 17 times 23?"',
             'modelwire chat --json "2+2?" | jq .message.content'),
    "models": ("modelwire models", "modelwire models --json"),
    "route": ('modelwire route "what is the capital of France?"',
              'modelwire route --json "debug this traceback for me"'),
    "creds": ("modelwire creds list --provider openrouter",
              "modelwire creds add --provider openrouter --label work",
              'printf %s "$KEY" | modelwire creds add --provider groq',
              "modelwire creds reset work --provider openrouter"),
    "auth": ("modelwire auth status", "modelwire auth logout openrouter"),
    "keys": ("modelwire teams create --name platform --budget 500/month --rpm 600",
             ("modelwire keys create --name alice --models 'claude-*,gpt-5*' --budget 50/month "
             "--rpm 60 --tpm 200000 --expires 90d --team platform"),
             "modelwire keys list", "modelwire keys update alice --rpm 120",
             "modelwire keys revoke alice", "modelwire teams list"),
    "spend": ("modelwire spend --by key --since 7d", "modelwire spend --by model --since 30d --csv",
              "modelwire spend --by team --json"),
}
# servers: started, asked for /v1/models, stopped; on a free port (4000 or 8765 may be taken)
SERVERS = (
    "modelwire serve",
    "modelwire serve --port 4000",
    "MODELWIRE_GATEWAY_KEYS=k1,k2 modelwire serve --host 0.0.0.0 --port 4000 --workers 2",
    "modelwire emulate --port 8765",
    "modelwire emulate --profile anthropic --keys k1,k2",
    "MY_KEY=s3cret modelwire emulate --signing-key-env MY_KEY",
)
NOT_RUN = {
    "modelwire chat --model anthropic/claude-sonnet-4-6 --thinking medium":
        "needs ANTHROPIC_API_KEY and the network",
    "modelwire auth login openrouter": "opens a browser and needs the network",
    "modelwire auth login openrouter --paste": "needs the network and a browser elsewhere",
    "modelwire db upgrade --config modelwire.yaml":
        "needs a PostgreSQL server (tests/teams/test_postgres_store.py runs it against one)",
    "modelwire db status --store postgresql://modelwire@db.internal/modelwire":
        "needs a PostgreSQL server (tests/teams/test_postgres_store.py runs it against one)",
}
FAKE_KEY = "sk-or-v1-example-not-a-real-key-0123456789"


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def examples_in(text: str) -> list[str]:
    """The example commands in one help text; click wraps long ones onto indented lines."""
    found: list[str] = []
    continuing = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continuing = False
        elif _STARTS.match(line):
            found.append(line)
            continuing = True
        elif continuing and raw.startswith("    ") and line.startswith("-"):
            found[-1] += " " + line
        else:
            continuing = False
    return [re.sub(r"\s+#.*$", "", e) for e in found]


def _every_help(capsys: pytest.CaptureFixture[str]) -> list[str]:
    import click

    texts = [_help([], capsys)]
    for name in COMMANDS:
        texts.append(_help([name], capsys))
        command = importlib.import_module(f"modelwire.cli.{name}").command
        if isinstance(command, click.Group):
            texts += [_help([name, sub], capsys) for sub in command.commands]
    return [e for text in texts for e in examples_in(text)]


def test_examples_are_found_in_wrapped_help():
    text = ("  Examples:\n\n    MODELWIRE_GATEWAY_KEYS=k1 modelwire serve --host 0.0.0.0\n"
            "    --workers 2\n\n  Then point any SDK at it: modelwire is\n"
            "    modelwire creds add -p x     # prompts\n")
    assert examples_in(text) == ["MODELWIRE_GATEWAY_KEYS=k1 modelwire serve --host 0.0.0.0 --workers 2",
                                 "modelwire creds add -p x"]


def test_every_help_example_is_run_or_says_why_not(capsys):
    shown = set(_every_help(capsys))
    covered = {e for seq in SEQUENCES.values() for e in seq} | set(SERVERS) | set(NOT_RUN)
    assert shown - covered == set(), "new --help examples: run them here or say why not"
    assert covered - shown == set(), "examples listed here that no --help shows any more"


def _env(tmp_path: Path) -> dict[str, str]:
    if not (BIN / "modelwire").is_file():
        pytest.fail(f"no modelwire console script beside {sys.executable}: install the package")
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "KEY": FAKE_KEY, "HOME": str(tmp_path), "NO_COLOR": "1"}


def _shell(example: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if "| jq" in example and shutil.which("jq", path=env["PATH"]) is None:
        # a fresh machine may lack jq: check what the filter would read instead
        head, _, query = example.partition("| jq")
        run = _shell(head, env, cwd)
        value: object = json.loads(run.stdout)
        for key in query.strip().lstrip(".").split("."):
            value = value[key]  # type: ignore[index]
        assert isinstance(value, str) and value
        return run
    return subprocess.run(["bash", "-c", example], cwd=cwd, env=env, input=FAKE_KEY + "\n",
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_help_examples_run_as_written(name, tmp_path):
    env = _env(tmp_path)
    for example in SEQUENCES[name]:
        run = _shell(example, env, tmp_path)
        assert run.returncode == 0, (example, run.stdout[-1500:], run.stderr[-1500:])
        assert "Traceback" not in run.stderr, example
        assert run.stdout.strip(), example


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _on_port(example: str, port: int) -> str:
    if "--port" in example:
        return re.sub(r"--port \d+", f"--port {port}", example)
    return f"{example} --port {port}"


def _wait_for_models(port: int, process: subprocess.Popen[bytes]) -> dict:
    headers = {"authorization": "Bearer k1", "x-api-key": "k1"}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/v1/models", headers=headers, timeout=5)
        except httpx.TransportError:
            time.sleep(0.2)  # not listening yet: nothing to wait on but the port
            continue
        assert answer.status_code == 200, answer.text
        return answer.json()
    raise AssertionError("the server did not answer within 90 s")


@pytest.mark.parametrize("example", SERVERS)
def test_server_examples_start_and_answer(example, tmp_path):
    port = _free_port()
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        process = subprocess.Popen(["bash", "-c", _on_port(example, port)], cwd=tmp_path,
                                   env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=err,
                                   start_new_session=True)
    try:
        listing = _wait_for_models(port, process)
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the session holds bash, uvicorn, its workers
        process.wait(timeout=60)
    assert "emulator-1" in [m["id"] for m in listing["data"]]
    first = log.read_text().splitlines()[0]
    if " serve" in example:
        assert first.startswith("no config found: serving the built-in emulator's models"), first
