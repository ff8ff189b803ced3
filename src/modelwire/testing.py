"""Public test helpers for users' own tests.

``Emulator``: the offline provider itself (:class:`modelwire.emulator.Emulator`).
``emulator``: a session-scoped pytest fixture yielding the running
:class:`modelwire.emulator.Emulator` (lenient profile, any key accepted) that
``Client("emulator/...")`` also uses when given no base URL
(:func:`modelwire.emulator.shared_emulator`): one emulator per test session, so faults
and scripts set on the fixture reach those clients too. It is not auto-loaded as a
plugin; import it where you want it, e.g. in ``conftest.py``::

    from modelwire.testing import emulator  # noqa: F401

    def test_my_agent(emulator):
        client = openai.OpenAI(base_url=emulator.openai_base_url(), api_key="sk-test")
        ...

Faults and scripts set in one test stay until cleared; ``emulator_clean`` clears both
before and after the test (``with emulator.scripted(fn):`` restores the previous
script by itself).
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
    """The emulator shared by the whole test session and by ``Client("emulator/...")``
    (started on first use, stopped when the interpreter exits)."""
    from .emulator import shared_emulator

    yield shared_emulator()


@pytest.fixture
def emulator_clean(emulator: Emulator) -> Iterator[Emulator]:
    """The session emulator with no faults and no script, cleared again after the test."""
    emulator.clear_faults()
    emulator.set_script(None)
    yield emulator
    emulator.clear_faults()
    emulator.set_script(None)
