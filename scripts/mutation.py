"""Mutation testing of the pure core: each module against its own tests (``make mutation``).

For every module in :data:`MODULES` a copy of the project is made in a temporary folder,
mutmut mutates that one module and runs only the tests named for it; the script prints the
score per module (killed / (all - equivalent)) and every surviving mutant that is not
listed in ``scripts/mutation-equivalent.toml`` (a mutant that cannot change behaviour,
with a one-line reason each). It exits 1 when a module scores under the goal.

    python scripts/mutation.py                 # every module
    python scripts/mutation.py classify sse    # modules whose path contains these words
    python scripts/mutation.py --show           # the diff of each unexplained survivor

Not part of ``make test``: it takes minutes. Results and their date: docs/reference/mutation.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOAL = 0.90
EQUIVALENT = ROOT / "scripts" / "mutation-equivalent.toml"

# (module, the tests that pin it): a module is judged by its own tests only
MODULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("src/modelwire/resilience/classify.py", ("tests/resilience/test_classify.py",
                                               "tests/resilience/test_classify_table.py")),
    ("src/modelwire/resilience/retry_after.py", ("tests/resilience/test_retry_after.py",)),
    ("src/modelwire/resilience/policy.py", ("tests/resilience/test_policy.py",)),
    ("src/modelwire/credentials/cooldown.py", ("tests/credentials/test_credential_cooldown_policy.py",)),
    ("src/modelwire/codecs/_sse.py", ("tests/test_sse.py",)),
    ("src/modelwire/routing.py", ("tests/routing/test_routing.py",)),
)

# mutmut's exit codes for a mutant's test run (mutmut/__main__.py: status_by_exit_code)
_SURVIVED, _NO_TESTS, _SKIPPED = 0, 33, 34


@dataclass(frozen=True, slots=True)
class Score:
    module: str
    killed: int
    survived: tuple[str, ...]  # not explained as equivalent
    equivalent: int
    untested: int

    @property
    def ratio(self) -> float:
        judged = self.killed + len(self.survived)
        return self.killed / judged if judged else 1.0


def _equivalents() -> dict[str, str]:
    if not EQUIVALENT.exists():
        return {}
    return dict(tomllib.loads(EQUIVALENT.read_text("utf-8")).get("equivalent", {}))


def _project_copy(into: pathlib.Path, module: str, tests: tuple[str, ...], workers: int) -> None:
    for name in ("src", "tests"):
        shutil.copytree(ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__", "corpus"))
    corpus = ROOT / "tests" / "corpus"
    if corpus.is_dir():  # data, never mutated: a link is enough
        (into / "tests" / "corpus").symlink_to(corpus)
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    text += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = [{json.dumps(module)}]\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q", "-p", "no:randomly"]\n'
    )
    (into / "pyproject.toml").write_text(text, "utf-8")


def run_module(module: str, tests: tuple[str, ...], equivalent: dict[str, str], workers: int) -> Score:
    with tempfile.TemporaryDirectory(prefix="modelwire-mutation-") as tmp:
        work = pathlib.Path(tmp)
        _project_copy(work, module, tests, workers)
        mutmut = pathlib.Path(sys.executable).with_name("mutmut")
        done = subprocess.run([str(mutmut), "run", "--max-children", str(workers)], cwd=work,
                              capture_output=True, text=True, check=False,
                              env={**os.environ, "PYTHONPATH": ""})
        meta = work / "mutants" / (module + ".meta")
        if not meta.exists():
            raise SystemExit(f"mutmut did not run on {module}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        codes: dict[str, int | None] = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
    killed = survived_eq = untested = 0
    survived: list[str] = []
    for name, code in sorted(codes.items()):
        if code in (_NO_TESTS, _SKIPPED, None):
            untested += 1
        elif code == _SURVIVED:
            if name in equivalent:
                survived_eq += 1
            else:
                survived.append(name)
        else:
            killed += 1  # failed tests, a timeout or a crash: the mutant was noticed
    return Score(module, killed, tuple(survived), survived_eq, untested)


def _show(module: str, tests: tuple[str, ...], names: tuple[str, ...]) -> None:
    """The diff of each survivor (a second, cheap mutmut pass would be needed; mutmut keeps
    no state outside its folder, so the module is re-mutated for the diffs)."""
    with tempfile.TemporaryDirectory(prefix="modelwire-mutation-") as tmp:
        work = pathlib.Path(tmp)
        _project_copy(work, module, tests, 1)
        mutmut = pathlib.Path(sys.executable).with_name("mutmut")
        subprocess.run([str(mutmut), "run", "--max-children", "2"], cwd=work, capture_output=True,
                       check=False, env={**os.environ, "PYTHONPATH": ""})
        for name in names:
            out = subprocess.run([str(mutmut), "show", name], cwd=work, capture_output=True,
                                 text=True, check=False)
            print(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="words a module's path must contain")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    if shutil.which("mutmut", path=str(pathlib.Path(sys.executable).parent)) is None:
        raise SystemExit("mutmut is not installed: pip install -e '.[mutation]'")
    equivalent = _equivalents()
    chosen = [(m, t) for m, t in MODULES if not args.only or any(w in m for w in args.only)]
    failed = False
    seen: set[str] = set()
    print(f"{'module':48} {'killed':>7} {'survived':>9} {'equiv.':>7} {'score':>7}")
    for module, tests in chosen:
        score = run_module(module, tests, equivalent, args.workers)
        seen.update(n for n in equivalent if n.startswith(_dotted(module)))
        ok = score.ratio >= GOAL
        failed |= not ok
        print(f"{module.removeprefix('src/'):48} {score.killed:7} {len(score.survived):9} "
              f"{score.equivalent:7} {score.ratio:7.1%}{'' if ok else '  < goal'}")
        for name in score.survived:
            print(f"    survived: {name}")
        if args.show and score.survived:
            _show(module, tests, score.survived)
    return 1 if failed else 0


def _dotted(module: str) -> str:
    return module.removeprefix("src/").removesuffix(".py").replace("/", ".")


if __name__ == "__main__":
    sys.exit(main())
