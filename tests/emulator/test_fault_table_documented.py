"""The guide's fault table names every fault the emulator has, and no other."""

from __future__ import annotations

import pathlib
import re
from typing import get_args

from modelwire.emulator.faults import FaultKind

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guides" / "emulator.md"


def _documented() -> set[str]:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Faults", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            names.update(re.findall(r"`([a-z_0-9]+)`", first_cell))
    return names


def test_the_fault_table_lists_every_fault_kind():
    documented, known = _documented(), set(get_args(FaultKind))
    assert not known - documented, f"faults missing from {GUIDE.name}: {sorted(known - documented)}"
    assert not documented - known, f"{GUIDE.name} lists unknown faults: {sorted(documented - known)}"
