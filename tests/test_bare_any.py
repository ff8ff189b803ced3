"""Parameters typed with a bare ``Any`` stay rare (scripts/bare_any.py counts them).

Arbitrary JSON has a name (``modelwire.types.JSONValue`` / ``JSONObject``); everything
else has a real type. The share only goes down: lower ``CEILING`` when it does.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# percent of all parameters in src/ (self and cls not counted), one decimal
CEILING = 5.2


def _counter():
    spec = importlib.util.spec_from_file_location("bare_any", ROOT / "scripts" / "bare_any.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bare_any"] = module
    spec.loader.exec_module(module)
    return module


def test_the_share_of_bare_any_parameters_does_not_rise():
    count = _counter().count_tree(ROOT / "src")
    share = round(count.share * 100, 1)
    assert share <= CEILING, (
        f"{share}% of parameters are a bare Any (ceiling {CEILING}%): type the new ones, "
        "JSONValue for arbitrary JSON (python scripts/bare_any.py --list)")


def test_the_counter_counts_bare_any_and_nothing_wider():
    source = '''
from typing import Any
import typing

def f(self, a: Any, b: int, c: "Any", *args: Any, d: JSONValue, e: dict[str, Any], **kw: typing.Any): ...

class C:
    def m(self, x: Any, y: list[Any]) -> Any: ...
    @classmethod
    def k(cls, z: object): ...

async def g(h: Any = None): ...
'''
    count = _counter().count_source(source, "example.py")
    assert count.parameters == 11  # a leading self or cls is not a parameter
    assert sorted(entry.split()[1] for entry in count.bare) == ["a", "args", "c", "h", "kw", "x"]
    assert count.share == 6 / 11
