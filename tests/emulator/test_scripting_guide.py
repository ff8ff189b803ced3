"""The emulator scripting guide's examples run as written (offline)."""

from __future__ import annotations

import pathlib
import re

import pytest

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guides" / "emulator-scripting.md"
_FENCE = re.compile(r"(<!-- check: parse-only \([^)]*\) -->\n)?```python\n(.*?)```", re.DOTALL)
EXAMPLES = [(m.group(1) is not None, m.group(2)) for m in _FENCE.finditer(GUIDE.read_text())]


def test_the_guide_has_examples_that_run():
    assert sum(not parse_only for parse_only, _ in EXAMPLES) >= 4


@pytest.mark.parametrize(("parse_only", "code"), EXAMPLES,
                         ids=[f"example-{i + 1}" for i in range(len(EXAMPLES))])
def test_each_example_runs(parse_only, code, emulator_clean):
    compiled = compile(code, str(GUIDE), "exec")
    if not parse_only:
        exec(compiled, {"__name__": "guide_example"})  # noqa: S102 (our own docs)
