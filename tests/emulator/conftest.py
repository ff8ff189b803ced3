"""One emulator for the whole session (modelwire.testing's public fixture), plus
raw-HTTP helpers for rule and fault tests."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from modelwire.testing import emulator  # noqa: F401  (the public session fixture)

KEY = "sk-emulator-test-key-0001"


@pytest.fixture
def emu(emulator):  # noqa: F811
    """The session emulator, with no faults and no script before and after the test."""
    emulator.clear_faults()
    emulator.set_script(None)
    yield emulator
    emulator.clear_faults()
    emulator.set_script(None)


@pytest.fixture
def http(emu):
    with httpx.Client(base_url=emu.base_url, timeout=20) as client:
        yield client


def anthropic_headers(version: str = "2023-06-01", **extra: str) -> dict[str, str]:
    return {"x-api-key": KEY, "anthropic-version": version, **extra}


def openai_headers(**extra: str) -> dict[str, str]:
    return {"authorization": f"Bearer {KEY}", **extra}


def post(http: httpx.Client, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    return http.post(path, json=body, headers=headers)
