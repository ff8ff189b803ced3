"""Fixtures for credential tests: a fake clock, and the three stores (Redis real)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid

import pytest

from modelwire.credentials.stores.memory import MemoryStore
from modelwire.credentials.stores.sqlite import SQLiteStore

T0 = 1_800_000_000.0  # 2027-01-15: far from any real "now", so wall-clock leaks show


class FakeClock:
    """Epoch seconds that move only when told (``sleep`` advances them)."""

    def __init__(self, t: float = T0) -> None:
        self.t = t
        self.slept: list[float] = []

    def time(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds

    def advance(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A real redis-server on a free loopback port for the session, or skip."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server not installed (apt-get install -y redis-server)")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 10
    while True:  # poll until it answers (bounded)
        try:
            if client.ping():
                break
        except redis.exceptions.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.skip("redis-server did not start")
            time.sleep(0.02)
    client.close()
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request, tmp_path):
    """Each store in turn; the same behaviour is required of all three."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "state.db"))
        yield s
        s.close()
    else:
        from modelwire.credentials.stores.redis import RedisStore

        url = request.getfixturevalue("redis_url")
        # generous timeout: these tests are about semantics; fail-open has its own tests
        s = RedisStore(url, prefix=f"t{uuid.uuid4().hex[:8]}:", timeout=2.0)
        yield s
        s.close()


@pytest.fixture(scope="module")
def emu():
    """The emulator: its OAuth server (single-use refresh tokens) and its counters."""
    from modelwire.emulator import Emulator

    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def sqlite_store(tmp_path):
    s = SQLiteStore(str(tmp_path / "state.db"))
    yield s
    s.close()

