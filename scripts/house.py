"""Draw the house from the imports: private names crossing packages, and import circles.

Run ``python scripts/house.py`` for a report; ``tests/test_house.py`` asserts it is clean.
A package is a directory with ``__init__.py``; the top-level modules of ``modelwire`` form
the package ``modelwire``. A name (module or attribute) starting with one underscore is
private to the package that defines it. Imports under ``if TYPE_CHECKING:`` are not drawn.
"""

from __future__ import annotations

import ast
import collections
import pathlib
import sys
from collections.abc import Iterator

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


class House:
    def __init__(self, src: pathlib.Path = SRC) -> None:
        self.src = src
        self.files: dict[str, pathlib.Path] = {}
        for path in sorted((src / "modelwire").rglob("*.py")):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            self.files[".".join(parts)] = path

    def package(self, module: str) -> str:
        path = self.files[module]
        return module if path.name == "__init__.py" else module.rsplit(".", 1)[0]

    def imports(self, module: str) -> Iterator[tuple[int, str, str | None]]:
        """(line, module imported from, name or None) for every drawn import."""
        tree = ast.parse(self.files[module].read_text(), str(self.files[module]))
        yield from self._walk(tree, module)

    def _walk(self, node: ast.AST, module: str) -> Iterator[tuple[int, str, str | None]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    yield from self._walk(other, module)
                continue
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = self.package(module).split(".")
                    base = base[: len(base) - (child.level - 1)]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                if source.split(".")[0] == "modelwire":
                    for alias in child.names:
                        yield child.lineno, source, alias.name
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "modelwire":
                        yield child.lineno, alias.name, None
            else:
                yield from self._walk(child, module)

    def target(self, source: str, name: str | None) -> str:
        full = f"{source}.{name}" if name else source
        return full if full in self.files else source

    def crossings(self) -> list[str]:
        """Private names imported from another package."""
        found = []
        for module in self.files:
            own = self.package(module)
            for line, source, name in self.imports(module):
                target = self.target(source, name)
                if target not in self.files or self.package(target) == own:
                    continue
                segments = (f"{source}.{name}" if name else source).split(".")
                common = 0
                for a, b in zip(segments, own.split(".")):
                    if a != b:
                        break
                    common += 1
                if any(_private(s) for s in segments[common:]):
                    found.append(f"{self.files[module].relative_to(self.src)}:{line}: {source} import {name}")
        return found

    def private_attributes(self) -> list[str]:
        """``obj._name`` on something other than self/cls, and getattr/__dict__ with a private name."""
        found = []
        for path in self.files.values():
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                where = f"{path.relative_to(self.src)}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.Attribute) and _private(node.attr):
                    base = node.value
                    if isinstance(base, ast.Name) and base.id in ("self", "cls", "mcs"):
                        continue
                    found.append(f"{where}: {ast.unparse(node)}")
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    if node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2:
                        arg = node.args[1]
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _private(arg.value):
                            found.append(f"{where}: {ast.unparse(node)}")
                elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
                    found.append(f"{where}: {ast.unparse(node)}")
        return found

    def circles(self) -> list[list[str]]:
        """Modules that import each other, directly or round a loop."""
        graph: dict[str, set[str]] = collections.defaultdict(set)
        for module in self.files:
            for _, source, name in self.imports(module):
                target = self.target(source, name)
                if target in self.files and target != module:
                    graph[module].add(target)
        return _strong(graph)


def _strong(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    house = House()
    crossings, attributes, circles = house.crossings(), house.private_attributes(), house.circles()
    print(f"{len(crossings)} private imports across packages")
    for line in crossings:
        print("  ", line)
    print(f"{len(attributes)} private attributes reached on other objects")
    for line in attributes:
        print("  ", line)
    print(f"{len(circles)} import circles")
    for circle in circles:
        print("  ", " <-> ".join(circle))
    return 1 if crossings or circles else 0


if __name__ == "__main__":
    raise SystemExit(main())
