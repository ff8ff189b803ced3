"""Count the parameters annotated with a bare ``Any``: the share of all parameters in src/.

``Any`` says nothing to a reader or a type checker; arbitrary JSON has a name
(``modelwire.types.JSONValue`` / ``JSONObject``), so a bare ``Any`` is a parameter whose
type nobody wrote down yet. ``self`` and ``cls`` are not counted as parameters.

Run ``python scripts/bare_any.py`` for the share and the files with the most;
``python scripts/bare_any.py --list`` lists every one. ``tests/test_bare_any.py`` keeps
the share from rising.
"""

from __future__ import annotations

import ast
import pathlib
import sys
from collections import Counter
from dataclasses import dataclass

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
BARE = frozenset({"Any", "typing.Any"})


@dataclass(frozen=True, slots=True)
class Count:
    parameters: int
    bare: tuple[str, ...]  # "path:line name" of each bare-Any parameter

    @property
    def share(self) -> float:
        return len(self.bare) / self.parameters if self.parameters else 0.0


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    if a.vararg is not None:
        params.append(a.vararg)
    if a.kwarg is not None:
        params.append(a.kwarg)
    if params and params[0].arg in ("self", "cls") and params[0] in (*a.posonlyargs, *a.args):
        params.pop(0)
    return params


def _annotation(arg: ast.arg) -> str | None:
    if arg.annotation is None:
        return None
    if isinstance(arg.annotation, ast.Constant) and isinstance(arg.annotation.value, str):
        return arg.annotation.value.strip()  # a quoted annotation
    return ast.unparse(arg.annotation)


def count_source(text: str, where: str = "<source>") -> Count:
    total = 0
    bare: list[str] = []
    for node in ast.walk(ast.parse(text, where)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in _parameters(node):
                total += 1
                if _annotation(arg) in BARE:
                    bare.append(f"{where}:{arg.lineno} {arg.arg}")
    return Count(total, tuple(bare))


def count_tree(root: pathlib.Path = SRC) -> Count:
    total = 0
    bare: list[str] = []
    for path in sorted(root.rglob("*.py")):
        one = count_source(path.read_text(), str(path.relative_to(root)))
        total += one.parameters
        bare += one.bare
    return Count(total, tuple(bare))


def main(argv: list[str]) -> int:
    count = count_tree()
    print(f"{len(count.bare)} of {count.parameters} parameters are a bare Any: {count.share:.1%}")
    if "--list" in argv:
        print("\n".join(count.bare))
    else:
        per_file = Counter(entry.split(":", 1)[0] for entry in count.bare)
        for path, n in per_file.most_common(15):
            print(f"{n:5d}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
