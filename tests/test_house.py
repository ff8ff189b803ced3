"""The house drawn from the imports (scripts/house.py): DESIGN.md's seams hold.

No name starting with an underscore crosses a package boundary, the gateway reaches
into no other package's objects, and no modules import each other round a loop.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _house():
    spec = importlib.util.spec_from_file_location("house", ROOT / "scripts" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["house"] = module
    spec.loader.exec_module(module)
    return module.House(ROOT / "src")


def test_no_private_name_is_imported_across_packages():
    assert _house().crossings() == []


def test_no_modules_import_each_other_round_a_loop():
    assert _house().circles() == []


def test_the_gateway_and_cli_reach_no_private_attribute_of_another_package():
    reaches = [line for line in _house().private_attributes()
               if line.startswith(("modelwire/gateway/", "modelwire/cli/"))]
    assert reaches == []


def test_no_private_name_is_read_through_getattr_or_dunder_dict():
    reaches = [line for line in _house().private_attributes()
               if "getattr(" in line or "setattr(" in line or "__dict__" in line]
    assert reaches == []


def test_the_checker_sees_a_crossing_and_a_circle(tmp_path):
    pkg = tmp_path / "modelwire"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "_inner.py").write_text("from ..b import thing\n")
    (pkg / "b.py").write_text("from .a._inner import secret\nthing = 1\n")
    house = _house().__class__(tmp_path)
    assert house.crossings() == ["modelwire/b.py:1: modelwire.a._inner import secret"]
    assert house.circles() == [["modelwire.a._inner", "modelwire.b"]]
