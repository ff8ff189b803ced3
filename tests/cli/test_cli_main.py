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
