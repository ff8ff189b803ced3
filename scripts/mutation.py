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
    ("src/modelwire/wire/retry_hints.py", ("tests/resilience/test_retry_after.py",)),
    ("src/modelwire/resilience/policy.py", ("tests/resilience/test_policy.py",)),
    ("src/modelwire/credentials/cooldown.py", ("tests/credentials/test_credential_cooldown_policy.py",)),
    ("src/modelwire/codecs/sse.py", ("tests/test_sse.py",)),
    ("src/modelwire/routing.py", ("tests/routing/test_routing.py",)),
    ("src/modelwire/messages/__init__.py", ("tests/test_messages_prepare.py", "tests/test_messages_cache.py")),
    ("src/modelwire/messages/reasoning.py", ("tests/test_messages_reasoning.py",)),
    ("src/modelwire/messages/thinktags.py", ("tests/test_messages_thinktags.py",)),
    ("src/modelwire/messages/stops.py", ("tests/test_stops.py",)),
    ("src/modelwire/tools.py", ("tests/test_tools.py",)),
    ("src/modelwire/accumulate.py", ("tests/test_accumulate.py",)),
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
    stale: tuple[str, ...]  # listed as equivalent but killed or gone: the list needs mending

    @property
    def ratio(self) -> float:
        judged = self.killed + len(self.survived)
        return self.killed / judged if judged else 1.0


def _equivalents() -> dict[str, str]:
    if not EQUIVALENT.exists():
        return {}
    return dict(tomllib.loads(EQUIVALENT.read_text("utf-8")).get("equivalent", {}))


def _project_copy(into: pathlib.Path, module: str, tests: tuple[str, ...]) -> None:
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


def run_module(module: str, tests: tuple[str, ...], equivalent: dict[str, str], workers: int,
               *, show: bool = False) -> Score:
    """Mutate ``module``, run ``tests`` against each mutant; ``show`` prints survivors' diffs."""
    with tempfile.TemporaryDirectory(prefix="modelwire-mutation-") as tmp:
        work = pathlib.Path(tmp)
        _project_copy(work, module, tests)
        mutmut = str(pathlib.Path(sys.executable).with_name("mutmut"))
        env = {**os.environ, "PYTHONPATH": ""}
        done = subprocess.run([mutmut, "run", "--max-children", str(workers)], cwd=work,
                              capture_output=True, text=True, check=False, env=env)
        meta = work / "mutants" / (module + ".meta")
        if not meta.exists():
            raise SystemExit(f"mutmut did not run on {module}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        codes: dict[str, int | None] = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
        score = _score(module, codes, equivalent)
        if show:
            for name in score.survived:
                print(subprocess.run([mutmut, "show", name], cwd=work, capture_output=True,
                                     text=True, check=False, env=env).stdout)
    return score


def _score(module: str, codes: dict[str, int | None], equivalent: dict[str, str]) -> Score:
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
    if codes and untested == len(codes):
        raise SystemExit(f"no test ran against {module}: check its test paths in MODULES")
    dotted = module.removeprefix("src/").removesuffix(".py").replace("/", ".") + "."
    stale = tuple(n for n in equivalent if n.startswith(dotted) and codes.get(n) != _SURVIVED)
    return Score(module, killed, tuple(survived), survived_eq, untested, stale)


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
    print(f"{'module':48} {'killed':>7} {'survived':>9} {'equiv.':>7} {'score':>7}")
    for module, tests in chosen:
        score = run_module(module, tests, equivalent, args.workers, show=args.show)
        ok = score.ratio >= GOAL
        failed |= not ok
        print(f"{module.removeprefix('src/'):48} {score.killed:7} {len(score.survived):9} "
              f"{score.equivalent:7} {score.ratio:7.1%}{'' if ok else '  < goal'}")
        if not args.show:
            for name in score.survived:
                print(f"    survived: {name}")
        for name in score.stale:
            print(f"    stale equivalent (no longer survives): {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
