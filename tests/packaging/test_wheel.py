"""The built package, as a user gets it: ``python -m build`` makes a wheel and an sdist; the
wheel installs into a clean venv (no editable install, no dev extras) whose ``modelwire``
runs offline, and whose ``import modelwire`` keeps its budget. Slow (it builds and
installs), so it runs in ``make test-wheel``, not ``make test``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = re.search(r'^__version__ = "([^"]+)"', (ROOT / "src/modelwire/__init__.py").read_text(),
                    re.MULTILINE)[1]  # type: ignore[index]
# bench goal (c): import modelwire takes at most 1.5x the time of import httpx
IMPORT_BUDGET = 1.5


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600, **kw)
    assert run.returncode == 0, (argv, run.stdout[-3000:], run.stderr[-3000:])
    return run


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # the wheel is built from the sdist, so a file the sdist leaves out fails here too
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)])
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("clean")
    _run([sys.executable, "-m", "venv", str(home / "venv")])
    python = home / "venv" / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(_one(dist, "*.whl"))])
    return home / "venv"


def _one(folder: Path, pattern: str) -> Path:
    found = list(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def _user_env(tmp_path: Path) -> dict[str, str]:
    """No PYTHONPATH (it would import the checkout's src instead of the wheel)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "HOME": str(tmp_path), "NO_COLOR": "1"}


def test_build_makes_a_wheel_and_an_sdist_of_the_one_version(dist):
    wheel, sdist = _one(dist, "*.whl"), _one(dist, "*.tar.gz")
    assert wheel.name == f"modelwire-{VERSION}-py3-none-any.whl"
    assert sdist.name == f"modelwire-{VERSION}.tar.gz"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "modelwire/py.typed" in names  # users' type checkers read the annotations
    # `modelwire db upgrade` applies the SQL files shipped in the package
    assert "modelwire/teams/migrations/0001_teams.sql" in names
    assert f"modelwire-{VERSION}.dist-info/licenses/LICENSE" in names
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]
    with tarfile.open(sdist) as archive:
        inside = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    for needed in ("LICENSE", "CHANGELOG.md", "src/modelwire/py.typed",
                   "tests/corpus/PROVENANCE.md", "tests/corpus/LICENSES/pydantic__pydantic-ai/LICENSE"):
        assert needed in inside, needed


def test_the_clean_venv_has_no_dev_tools(venv, tmp_path):
    run = subprocess.run([str(venv / "bin/python"), "-c", "import pytest"], env=_user_env(tmp_path),
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode != 0


def test_version_from_the_installed_script(venv, tmp_path):
    run = _run([str(venv / "bin/modelwire"), "--version"], env=_user_env(tmp_path), cwd=tmp_path)
    assert run.stdout.split()[-1] == VERSION
    code = "import modelwire; print(modelwire.__version__, modelwire.__file__)"
    version, where = _run([str(venv / "bin/python"), "-c", code], env=_user_env(tmp_path),
                          cwd=tmp_path).stdout.split()
    assert version == VERSION and where.startswith(str(venv))


def test_chat_json_answers_offline_from_the_builtin_emulator(venv, tmp_path):
    run = _run([str(venv / "bin/modelwire"), "chat", "--json", "What is 2+2?"],
               env=_user_env(tmp_path), cwd=tmp_path)
    answer = json.loads(run.stdout)
    assert answer["provider"] == "emulator" and answer["finish_reason"] == "stop"
    assert isinstance(answer["message"]["content"], str) and answer["message"]["content"]


def _import_seconds(python: Path, module: str, env: dict[str, str]) -> float:
    """The fastest of five fresh imports: the least disturbed by the shared machine."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return min(float(_run([str(python), "-c", code], env=env).stdout) for _ in range(5))


def test_import_modelwire_keeps_its_budget(venv, tmp_path):
    env = _user_env(tmp_path)
    ours = _import_seconds(venv / "bin/python", "modelwire", env)
    httpx = _import_seconds(venv / "bin/python", "httpx", env)
    assert ours <= IMPORT_BUDGET * httpx, f"import modelwire {ours * 1000:.1f} ms, httpx {httpx * 1000:.1f} ms"
