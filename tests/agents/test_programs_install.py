"""The pinned programs install from npm and report the version we pinned."""

from __future__ import annotations

import subprocess

import pytest

from .programs import CLAUDE_CODE, CODEX_CLI, Program, installed


@pytest.mark.parametrize("program", [CLAUDE_CODE, CODEX_CLI], ids=lambda p: p.binary)
def test_pinned_program_reports_its_version(program: Program, tmp_path):
    exe = installed(program)
    done = subprocess.run([str(exe), "--version"], check=False, capture_output=True, text=True,
                          timeout=60, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert program.version in done.stdout
