"""Every example in README.md and docs/**/*.md runs, offline, as written.

The convention (docs/contributing.md): a fenced block whose opening line follows a line

    <!-- check: parse-only (reason) -->   is only checked to parse (Python compiles,
                                          shell passes ``bash -n``);
    <!-- check: skip (reason) -->         is not checked at all (output samples).

Otherwise ``python`` fences run in a subprocess and ``sh`` / ``bash`` / ``shell`` fences
under ``bash -e`` with ``modelwire`` on PATH; ``yaml``, ``toml``, ``json`` and ``jsonl``
fences are parsed as their format; other fences (``text``, ``console``...) are left alone. The blocks of one file run in order in one temporary folder,
which is also their HOME and XDG folders, with no provider key in the environment, so
each block sees files the blocks before it wrote; whatever a shell block left running in
the background is stopped when the file is done. Each block has a time limit.
"""

from __future__ import annotations

import ast
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TIMEOUT = 60  # seconds per block
PYTHON = ("python", "py", "python3")
SHELL = ("sh", "bash", "shell")
PARSED = ("yaml", "yml", "toml", "json", "jsonl")
CHECK = re.compile(r"^<!--\s*check:\s*(parse-only|skip)\s*\((.+)\)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
PORT = re.compile(r"127\.0\.0\.1:(\d{4,5})")
# variables that could reach a real provider or change what modelwire reads
SECRET = re.compile(r"(_API_KEY|_TOKEN|_KEYS?|_SECRET)$|^(MODELWIRE_|ANTHROPIC_|OPENAI_)")


@dataclass(frozen=True)
class Block:
    path: pathlib.Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    mode: str  # "run", "parse-only" or "skip"
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[pathlib.Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [f for f in files if f.is_file()]


def blocks_of(path: pathlib.Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i].removeprefix(indent))
            i += 1
        i += 1
        mode, reason = "run", ""
        if start > 0 and (c := CHECK.match(lines[start - 1].strip())):
            mode, reason = c.group(1), c.group(2)
        out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", mode, reason))
    return out


def _environment(home: pathlib.Path, bin_dir: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not SECRET.search(k)}
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env.pop(proxy, None)
    env.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CACHE_HOME=str(home / ".cache"),
        PATH=f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}"
             f"{env.get('PATH', '')}",
        PYTHONPATH=str(SRC), NO_COLOR="1", NO_PROXY="*", PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _modelwire_on_path(bin_dir: pathlib.Path) -> None:
    """A ``modelwire`` command that runs this checkout's sources."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "modelwire"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m modelwire.cli "$@"\n')
    shim.chmod(0o755)


def _parse(block: Block) -> None:
    lang, code = block.lang, block.code
    if lang in PYTHON:
        ast.parse(code, filename=block.where)
    elif lang in SHELL:
        done = subprocess.run(["bash", "-n"], input=code, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, f"{block.where}: bash -n: {done.stderr}"
    elif lang in ("yaml", "yml"):
        yaml.safe_load(code)
    elif lang == "toml":
        tomllib.loads(code)
    elif lang == "json":
        json.loads(code)
    elif lang == "jsonl":
        for n, line in enumerate(code.splitlines(), start=1):
            if line.strip():
                try:
                    json.loads(line)
                except ValueError as exc:
                    raise AssertionError(f"{block.where}: line {n} of the block: {exc}") from exc


def _run(block: Block, cwd: pathlib.Path, env: dict[str, str], groups: list[int]) -> None:
    if block.lang in PYTHON:
        argv = [sys.executable, "-c", block.code]
    else:
        argv = ["bash", "-e", "-c", block.code]
    out, err = cwd / f".block-{block.line}.out", cwd / f".block-{block.line}.err"
    # files, not pipes: a server a shell block leaves in the background keeps its
    # output open, and reading a pipe to its end would wait for that server
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=o,
                                stderr=e, start_new_session=True)
        groups.append(proc.pid)
        try:
            code = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            _stop(proc.pid)
            code = None
    if code != 0:
        what = "timed out" if code is None else f"exited {code}"
        pytest.fail(f"{block.where}: {block.lang} block {what}\n--- code\n{block.code}"
                    f"--- stdout\n{out.read_text(errors='replace')[-3000:]}"
                    f"--- stderr\n{err.read_text(errors='replace')[-3000:]}", pytrace=False)


def _stop(group: int) -> None:
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        try:
            os.waitpid(-group, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _busy_ports(blocks: list[Block]) -> list[int]:
    """Loopback ports the file's runnable examples use that something already holds."""
    busy = []
    for port in sorted({int(p) for b in blocks if b.mode == "run" for p in PORT.findall(b.code)}):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                busy.append(port)
    return busy


FILES = doc_files()


@pytest.mark.timeout(600)  # each block has its own limit (TIMEOUT); a page has several
@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(ROOT)) for f in FILES])
def test_examples_run_as_written(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    blocks = [b for b in blocks_of(path) if b.mode != "skip"]
    if not any(b.lang in PYTHON + SHELL + PARSED for b in blocks):
        pytest.skip("no examples")
    if shutil.which("curl") is None and any(
            b.mode == "run" and b.lang in SHELL and "curl " in b.code for b in blocks):
        pytest.skip("curl is not installed: the page's shell examples use it")
    if busy := _busy_ports(blocks):
        pytest.skip(f"ports {busy} on 127.0.0.1 are in use: the examples need them")
    bin_dir = tmp_path / ".bin"
    _modelwire_on_path(bin_dir)
    env = _environment(tmp_path, bin_dir)
    groups: list[int] = []
    try:
        for block in blocks:
            if block.lang in PARSED:
                _parse(block)
            elif block.lang in PYTHON + SHELL:
                _parse(block)
                if block.mode == "run":
                    _run(block, tmp_path, env, groups)
    finally:
        for group in groups:
            _stop(group)


def test_check_comments_name_a_reason_and_sit_on_a_fence() -> None:
    bad = []
    for path in FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        fence = ""
        for n, line in enumerate(lines):
            m = FENCE.match(line)
            if fence:  # inside a fenced block: markers there are text
                if line.strip().startswith(fence):
                    fence = ""
                continue
            if m:
                fence = m.group(2)
                continue
            if line.strip().startswith("<!-- check:"):
                follows = lines[n + 1] if n + 1 < len(lines) else ""
                if not CHECK.match(line.strip()) or not FENCE.match(follows):
                    bad.append(f"{path.relative_to(ROOT)}:{n + 1}: {line.strip()}")
    assert not bad, "malformed or misplaced check comments:\n" + "\n".join(bad)


def test_readme_is_a_front_door() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 10 * 1024
    assert "make demo" in text and "make test" in text


def test_readme_provider_count_is_the_catalogs() -> None:
    from modelwire.providers.catalog import CATALOG

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"(\d+) catalog rows", text)
    assert m, "README.md: no 'N catalog rows' in the Providers section"
    assert int(m.group(1)) == len(CATALOG), (
        f"README.md says {m.group(1)} catalog rows; the catalog has {len(CATALOG)}")
