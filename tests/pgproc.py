"""A real PostgreSQL server (Debian's ``postgresql`` package) on a free loopback port in a
temporary folder, for tests: ``initdb`` and ``postgres`` run as an unprivileged user
(PostgreSQL refuses to run as root), the data dir is removed on ``stop``.

As root the server runs as ``postgres`` or else ``nobody`` (the folder is made theirs); as anyone else it runs
as that user. Skips with the reason when the binaries, psycopg or the user are missing."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Any

import pytest

__all__ = ["PostgresProcess", "find_bindir"]

UNPRIVILEGED = ("postgres", "nobody")  # Debian's package creates the first


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def find_bindir() -> str | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb`` and ``postgres``,
    else the directory of ``initdb`` on PATH."""
    def version(path: str) -> tuple[int, ...]:
        part = path.split("/")[-2]
        return tuple(int(x) for x in part.split(".") if x.isdigit())

    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if os.access(os.path.join(bindir, "initdb"), os.X_OK) and os.access(
                os.path.join(bindir, "postgres"), os.X_OK):
            return bindir
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


class PostgresProcess:
    """``start()`` → a server answering on ``127.0.0.1:port``; ``url(db)`` for psycopg;
    ``create_database()`` for a fresh, empty database per test; ``stop()`` removes it all."""

    def __init__(self) -> None:
        bindir = find_bindir()
        if bindir is None:
            pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
        try:
            import psycopg  # noqa: F401
        except ImportError:
            pytest.skip("psycopg is not installed (pip install 'modelwire[postgres]')")
        self.bindir = bindir
        self.port = _free_port()
        self.user: str | None = None  # the OS user the server runs as, when not ourselves
        if os.geteuid() == 0:
            self.user = next((u for u in UNPRIVILEGED if _has_user(u)), None)
            if self.user is None:
                pytest.skip(f"running as root and no user of {UNPRIVILEGED} to run PostgreSQL as")
        # not under pytest's tmp_path: its parents are private to root, and the server's
        # user must reach the folder
        self.dir = tempfile.mkdtemp(prefix="modelwire-pg-")
        self.proc: subprocess.Popen[bytes] | None = None
        self._databases = 0

    @property
    def data(self) -> str:
        return os.path.join(self.dir, "data")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run_as(self) -> dict[str, Any]:
        return {"user": self.user} if self.user else {}

    def start(self, within: float = 30.0) -> PostgresProcess:
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        os.chmod(self.dir, 0o700)
        done = subprocess.run(
            [os.path.join(self.bindir, "initdb"), "-D", self.data, "-U", "postgres",
             "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"],
            capture_output=True, timeout=120, check=False, cwd=self.dir, **self._run_as())
        if done.returncode != 0:
            self.stop()
            pytest.skip(f"initdb failed: {done.stderr.decode(errors='replace')[-400:]}")
        log = open(os.path.join(self.dir, "postgres.log"), "wb")  # noqa: SIM115 - the server's lifetime
        # durability off: a test database is thrown away, and fsync costs seconds
        self.proc = subprocess.Popen(
            [os.path.join(self.bindir, "postgres"), "-D", self.data, "-k", self.dir,
             "-p", str(self.port), "-h", "127.0.0.1", "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=100"],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.dir, **self._run_as())
        log.close()
        self.wait_ready(within)
        return self

    def wait_ready(self, within: float = 30.0) -> None:
        import psycopg

        deadline = time.monotonic() + within
        while True:  # bounded poll until it accepts a connection
            try:
                with psycopg.connect(self.url(), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if self.proc is not None and self.proc.poll() is not None:
                    tail = self.log_tail()
                    self.stop()
                    pytest.skip(f"postgres exited at start: {tail}")
                if time.monotonic() > deadline:
                    tail = self.log_tail()
                    self.stop()
                    pytest.skip(f"postgres did not accept connections within {within} s: {tail}")
                time.sleep(0.05)

    def log_tail(self) -> str:
        with contextlib.suppress(OSError), open(os.path.join(self.dir, "postgres.log"), "rb") as f:
            return f.read()[-600:].decode(errors="replace")
        return ""

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; its URL."""
        import psycopg

        self._databases += 1
        name = name or f"t{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # "fast" shutdown: ends open sessions
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)
