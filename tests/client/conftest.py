"""Fixtures for Client tests: the session emulator seen through one test's own model
name (faults filter on it) and request window, and a recording sleeper."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from modelwire.testing import emulator  # noqa: F401  (the public session fixture)

KEY = "sk-test-0123456789abcdef"
_names = itertools.count(1)


class Wire:
    """One test's view of the shared emulator.

    ``model`` is unique to the test, and every fault set through :meth:`fault` is
    filtered by it, so a rule left behind cannot touch another test; :meth:`requests`
    lists only what arrived since the test began."""

    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.model = f"t{next(_names)}-model"
        log = emu.requests()["requests"]
        self.since = log[-1]["n"] if log else 0
        self._rules: list[dict[str, Any]] = []

    def base_url(self, mode: str) -> str:
        return self.emu.anthropic_base_url() if mode == "anthropic_messages" else \
            self.emu.openai_base_url()

    def fault(self, kind: str, *, model: str | None = None, **fields: Any) -> None:
        """Add a fault rule for this test's model (or ``model``); ``any_model=True``
        drops the filter (fallback chains spanning several models)."""
        rule = {"fault": kind, **fields}
        if not rule.pop("any_model", False):
            rule["model"] = model or self.model
        self._rules.append(rule)
        self.emu.set_faults(self._rules)

    def script(self, *steps: dict[str, Any]) -> None:
        """Exact answers in order (script mode) for shapes no fault has (any status,
        body and headers); rules and faults still apply first."""
        self.emu.set_script(list(steps))

    def requests(self) -> list[dict[str, Any]]:
        return self.emu.requests(since=self.since)["requests"]

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        """Poll observable state (never a blind sleep)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.005)
        return bool(predicate())


@pytest.fixture
def wire(emulator):  # noqa: F811
    emulator.clear_faults()
    emulator.set_script(None)
    yield Wire(emulator)
    emulator.clear_faults()
    emulator.set_script(None)


class Sleeps(list):
    """Records requested waits instead of sleeping (backoff is never really waited)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps():
    return Sleeps()

