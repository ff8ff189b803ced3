"""The real coding agents (Claude Code, Codex CLI), installed from npm at pinned versions.

Each program is installed once into ``.cache/agents/<package>@<version>`` under the
project (reused when present) with ``npm install --prefix``; a test that cannot install
it (no npm, no registry) skips and says why. Nothing here talks to a provider: the tests
point each program at a gateway on loopback.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = pathlib.Path(os.environ.get("MODELWIRE_AGENTS_CACHE", ROOT / ".cache" / "agents"))


@dataclass(frozen=True, slots=True)
class Program:
    package: str
    version: str
    binary: str  # the name under node_modules/.bin


CLAUDE_CODE = Program("@anthropic-ai/claude-code", "2.1.197", "claude")
CODEX_CLI = Program("@openai/codex", "0.171.0", "codex")


def installed(program: Program, *, timeout: float = 600) -> pathlib.Path:
    """The program's executable, installing it first when the cache lacks it (else skip)."""
    prefix = CACHE / f"{program.package.replace('/', '+')}@{program.version}"
    exe = prefix / "node_modules" / ".bin" / program.binary
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed: cannot install {program.package}@{program.version}")
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--loglevel=error", f"{program.package}@{program.version}"],
            check=False, capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install {program.package}@{program.version} took over {timeout:.0f} s")
    if done.returncode != 0 or not exe.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        pytest.skip(f"npm could not install {program.package}@{program.version}: {' | '.join(tail)}")
    return exe
