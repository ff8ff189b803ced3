"""Public test helpers for users' own tests.

``Emulator``: the offline provider itself (:class:`modelwire.emulator.Emulator`).
``emulator``: a session-scoped pytest fixture yielding a running
:class:`modelwire.emulator.Emulator` (lenient profile, any key accepted). It is not
auto-loaded as a plugin; import it where you want it, e.g. in ``conftest.py``::

    from modelwire.testing import emulator  # noqa: F401

    def test_my_agent(emulator):
        client = openai.OpenAI(base_url=emulator.openai_base_url(), api_key="sk-test")
        ...

Faults set in one test stay until cleared; the fixture clears them (and nothing
else) before each use by a test through ``emulator_clean``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .emulator import Emulator

__all__ = ["Emulator", "emulator", "emulator_clean"]


def __getattr__(name: str) -> object:
    # the emulator class itself, for tests outside pytest fixtures: imported on use, so
    # importing the fixtures does not start the emulator's server stack
    if name == "Emulator":
        from .emulator import Emulator

        return Emulator
    raise AttributeError(f"module 'modelwire.testing' has no attribute {name!r}")


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    """A running emulator shared by the whole test session."""
    from .emulator import Emulator

    with Emulator(profile="lenient") as emu:
        yield emu


@pytest.fixture
def emulator_clean(emulator: Emulator) -> Iterator[Emulator]:
    """The session emulator with no faults set, cleared again after the test."""
    emulator.clear_faults()
    yield emulator
    emulator.clear_faults()
