"""Running Claude Code against a base URL, and the scripted conversations the tests use.

Claude Code runs in its default configuration except what points it at the gateway
(``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``, ``--model``): offline
(``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``), in a temporary HOME and working folder,
with a bounded timeout. The emulator answers from a script, so each run has an exact
conversation whatever the emulator's default model would do with Claude Code's 24 tools.
"""

from __future__ import annotations

import os
import pathlib
import struct
import subprocess
import zlib
from dataclasses import dataclass
from typing import Any

from .programs import CLAUDE_CODE, installed

TIMEOUT = 60  # seconds for one `claude -p` run (a run here takes 3-8 s)
MODEL = "claude-opus-4-8"  # Claude Code's default model id; the gateway maps it by glob
FINAL = "The notes say the answer is 42."
PLAIN = "Hello from the emulator."


@dataclass(frozen=True, slots=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def pixel_png() -> bytes:
    """A 1x1 PNG: Claude Code's Read tool answers it with an image block."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def workspace(root: pathlib.Path) -> pathlib.Path:
    """A HOME with a working folder holding a note and a picture."""
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "notes.txt").write_text("the answer is 42\n")
    (work / "pixel.png").write_bytes(pixel_png())
    return work


def tool_script(work: pathlib.Path) -> list[dict[str, Any]]:
    """Two tool rounds (two calls each, so thinking interleaves with them; the second call
    of the first round reads the picture), then the answer."""
    notes, pixel = str(work / "notes.txt"), str(work / "pixel.png")
    return [
        {"reasoning": "I will read the notes first.", "tool_calls": [
            {"name": "Read", "arguments": {"file_path": notes}},
            {"name": "Read", "arguments": {"file_path": pixel}}]},
        {"reasoning": "Now find the other text files.", "tool_calls": [
            {"name": "Glob", "arguments": {"pattern": "*.txt"}},
            {"name": "Read", "arguments": {"file_path": notes}}]},
        {"reasoning": "I have what I need.", "text": FINAL},
    ]


def run_claude(base_url: str, home: pathlib.Path, work: pathlib.Path, prompt: str) -> Run:
    exe = installed(CLAUDE_CODE)
    env = {
        "HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-fake-0123456789",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    done = subprocess.run([str(exe), "-p", prompt, "--model", MODEL], env=env, cwd=work,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    return Run(done.returncode, done.stdout, done.stderr)
