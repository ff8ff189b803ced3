from __future__ import annotations

import subprocess
import sys

from modelwire.cli import EXIT_OK, EXIT_USAGE, main


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == EXIT_OK
    out = capsys.readouterr().out
    for name in ("chat", "serve", "emulate", "creds", "auth", "models", "route"):
        assert name in out
    assert "Exit codes" in out


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["frobnicate"]) == EXIT_USAGE
    assert "No such command" in capsys.readouterr().err


def test_console_script_runs_without_traceback():
    out = subprocess.run(
        [sys.executable, "-c", "from modelwire.cli import run; run()", "--help"],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr


import pytest


@pytest.mark.parametrize("argv", [["chat"], ["serve"], ["emulate"], ["models"], ["route"],
                                  ["creds", "list"], ["auth", "login"]], ids=lambda a: " ".join(a))
def test_every_command_takes_config_and_shows_examples(argv, capsys):
    assert main([*argv, "--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "--config" in out
    top = capsys.readouterr().out if main([argv[0], "--help"]) == EXIT_OK else ""
    assert "Examples" in out or "Examples" in top or "Example" in out


def test_a_broken_config_is_a_usage_error_naming_the_key(tmp_path, capsys):
    bad = tmp_path / "m.yaml"
    bad.write_text("models: {x: {provider: nope, model: y}}\n")
    assert main(["emulate", "--config", str(bad)]) == EXIT_USAGE
    assert "models.x.provider" in capsys.readouterr().err
