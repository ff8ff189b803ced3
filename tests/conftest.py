"""Test hygiene for every test: no real provider, no user config, bounded Hypothesis."""

from __future__ import annotations

import json
import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Recorded real traffic the tests replay; it ships with the repository (corpus/PROVENANCE.md).
CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"

# The real coding agents (tests/agents) run in `make test-agents`, not in `make test`.
collect_ignore = [] if os.environ.get("MODELWIRE_TEST_AGENTS") == "1" else ["agents"]
# Building and installing the wheel (tests/packaging) runs in `make test-wheel`.
if os.environ.get("MODELWIRE_TEST_WHEEL") != "1":
    collect_ignore.append("packaging")
# Two gateways, nginx, Redis and PostgreSQL as processes (tests/cluster): `make test-cluster`.
if os.environ.get("MODELWIRE_TEST_CLUSTER") != "1":
    collect_ignore.append("cluster")

_SCRUB_PREFIXES = ("XDG_",)
_SCRUB_SUFFIXES = ("_API_KEY", "_API_TOKEN", "_AUTH_TOKEN", "_ACCESS_TOKEN")
_SCRUB_EXACT = {"MODELWIRE_CONFIG", "MODELWIRE_GATEWAY_KEYS", "HTTPS_PROXY", "HTTP_PROXY",
                "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy", "OPENAI_BASE_URL",
                "ANTHROPIC_BASE_URL"}


def _scrub_environment() -> None:
    for name in list(os.environ):
        if (
            name in _SCRUB_EXACT
            or name.startswith(_SCRUB_PREFIXES)
            or name.endswith(_SCRUB_SUFFIXES)
        ):
            del os.environ[name]


_scrub_environment()


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """Each test: no provider keys, no user config, XDG dirs inside a temp dir."""
    _scrub_environment()
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    yield


def corpus_files(pattern: str = "*.json", root: pathlib.Path = CORPUS) -> list[pathlib.Path]:
    """The recorded exchanges whose file names match ``pattern``, sorted by name.

    None is an error, never an empty list: a corpus test over nothing passes silently."""
    files = sorted(root.glob(pattern))
    if not files:
        raise FileNotFoundError(f"no recorded exchange matches {pattern!r} in {root}")
    return files


def load_corpus() -> list[tuple[str, dict]]:
    """Every recorded exchange as (file stem, parsed JSON), sorted by name."""
    return [(p.stem, json.loads(p.read_text())) for p in corpus_files()]


@pytest.fixture(scope="session")
def corpus() -> list[tuple[str, dict]]:
    return load_corpus()
