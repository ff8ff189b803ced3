"""The chaos suite: hostile input, slow clients, a flood of model names, upstream faults
under load, Redis frozen and killed. ``make test`` runs a short pass; ``make chaos``
(``MODELWIRE_CHAOS=full``) the full one. Every phase prints its figures (``-s``) and
records them in ``FIGURES`` for docs/reference/limits.md."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

from modelwire.config import config_from_dict
from modelwire.emulator import Emulator
from modelwire.gateway.testing import RunningGateway

FULL = os.environ.get("MODELWIRE_CHAOS") == "full"
# a fake upstream key: it must never appear in an answer or a log line
UPSTREAM_KEY = "sk-chaos-upstream-0123456789abcdefKEYQ"
# the limits the chaos gateway runs with (small: a hang past them is a failure; not
# smaller: the clients share this process's GIL with the gateway, and under 64 streams
# a client's body can lag its head by half a second, which a tighter timeout cuts)
LIMITS = {"header_timeout": 2.0, "body_timeout": 2.0, "keep_alive_timeout": 5.0,
          "max_adhoc_clients": 16, "max_body_bytes": 1024 * 1024}
FIGURES: dict[str, dict[str, Any]] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The figures of every phase that ran, for docs/reference/limits.md."""
    if FIGURES:
        terminalreporter.section(f"chaos figures ({'full' if FULL else 'short'} run)")
        for phase, figures in FIGURES.items():
            terminalreporter.line(f"{phase}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def scale(short: int, full: int) -> int:
    return full if FULL else short


def report(phase: str, **figures: Any) -> None:
    FIGURES[phase] = figures
    print(f"\n[chaos] {phase}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


class LogTrap(logging.Handler):
    """Every log line of the run, formatted, to look for keys in."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except (TypeError, ValueError):  # a record whose arguments do not format
            self.lines.append(str(record.msg))


@pytest.fixture(scope="module")
def logs() -> Iterator[LogTrap]:
    trap = LogTrap()
    root = logging.getLogger()
    old = root.level
    root.addHandler(trap)
    root.setLevel(logging.INFO)
    yield trap
    root.removeHandler(trap)
    root.setLevel(old)
    leaked = [line for line in trap.lines if UPSTREAM_KEY in line or UPSTREAM_KEY[-8:] in line]
    assert not leaked, leaked[:3]


@pytest.fixture(scope="module")
def upstream() -> Iterator[Emulator]:
    with Emulator(max_hang=2.0) as emu:
        yield emu


@pytest.fixture(scope="module")
def chaos_gateway(upstream: Emulator, logs: LogTrap) -> Iterator[RunningGateway]:
    os.environ["CHAOS_UPSTREAM_KEY"] = UPSTREAM_KEY
    config = config_from_dict({
        "models": {
            "m": {"provider": "emulator", "model": "emulator-1", "base_url": upstream.openai_base_url(),
                  "api_key_env": "CHAOS_UPSTREAM_KEY"},
            "a": {"provider": "emulator-anthropic", "model": "claude-sonnet-4-6",
                  "base_url": upstream.anthropic_base_url(), "api_key_env": "CHAOS_UPSTREAM_KEY"},
            "r": {"provider": "emulator-responses", "model": "gpt-5-mini",
                  "base_url": upstream.openai_base_url(), "api_key_env": "CHAOS_UPSTREAM_KEY"},
        },
        "gateway": {**LIMITS, "max_retry_wait": 1},
    })
    try:
        with RunningGateway(config, environ={}) as gw:
            yield gw
    finally:
        os.environ.pop("CHAOS_UPSTREAM_KEY", None)
