"""A real redis-server on a free loopback port that a test can freeze, kill and restart
(no persistence: a restart comes back empty, as a cache-configured Redis does)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisProcess:
    def __init__(self, workdir: str) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server not installed (apt-get install -y redis-server)")
        self.binary = binary
        self.workdir = workdir
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisProcess:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.workdir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_ready()
        return self

    def wait_ready(self, within: float = 10.0) -> None:
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=0.5)
        deadline = time.monotonic() + within
        try:
            while True:  # bounded poll until it answers
                try:
                    if client.ping():
                        return
                except redis.exceptions.ConnectionError:
                    if time.monotonic() > deadline or (self.proc is not None and self.proc.poll() is not None):
                        pytest.skip("redis-server did not start")
                    time.sleep(0.02)
        finally:
            client.close()

    def freeze(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL: no shutdown, no save
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.thaw()
            self.proc.terminate()
            self.proc.wait(10)
