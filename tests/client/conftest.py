"""Fixtures for Client tests: a scripted loopback provider and a recording sleeper."""

from __future__ import annotations

import pytest
from client._client_fake import FakeProvider


@pytest.fixture
def fake():
    server = FakeProvider()
    yield server
    server.close()


class Sleeps(list):
    """Records requested waits instead of sleeping (backoff is never really waited)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps():
    return Sleeps()
