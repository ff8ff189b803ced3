"""Every program of docs/guides/compared.md runs as written: the same agent with
modelwire, the openai SDK, LiteLLM and pydantic-ai, each tested offline with its own
test double (each program ends by running its test and printing ``OK <name>``)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guides" / "compared.md"
# section heading -> (what the program prints when its test passed, packages it needs)
PROGRAMS = {
    "modelwire": ("OK modelwire", ()),
    "The openai SDK": ("OK openai", ("openai",)),
    "LiteLLM": ("OK litellm", ("litellm",)),
    "pydantic-ai": ("OK pydantic-ai", ("pydantic_ai",)),
}


def _program(heading: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)\n```", section, re.DOTALL)
    assert match, f"no python block under '## {heading}'"
    return match.group(1)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("heading", list(PROGRAMS))
def test_each_program_and_its_offline_test_run(heading, tmp_path):
    marker, needs = PROGRAMS[heading]
    for module in needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the compare extra: make test-compare)")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", _program(heading)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0 and marker in done.stdout, done.stdout[-2000:] + done.stderr[-3000:]


def test_the_modelwire_program_uses_only_names_from_modelwire_and_modelwire_testing():
    code = _program("modelwire")
    imports = re.findall(r"^\s*(?:from\s+(\S+)\s+import|import\s+(\S+))", code, re.MULTILINE)
    modules = {a or b for a, b in imports}
    assert modules <= {"modelwire", "modelwire.testing"}, modules
    assert "os.environ" not in code and "config=" not in code and ".yaml" not in code
