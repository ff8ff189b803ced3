"""The cluster the guide describes, as real processes on loopback: two ``modelwire serve``
instances, nginx in front of them with the guide's configuration, and the emulator as the
upstream (Redis and PostgreSQL come from tests/redisproc.py and tests/pgproc.py).

Every process gets a free port and its log in the test's folder; every wait is a bounded
poll on an observable state (a port answering, a process gone)."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "teams-cluster.md"
NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if pathlib.Path(p).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def guide_fence(language: str) -> str:
    """The guide's one fence in ``language`` (the test runs what the page shows)."""
    (block,) = re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    return block


class GatewayProcess:
    """One ``modelwire serve`` subprocess on a fixed port (a restart reuses it, as a
    load balancer's upstream list expects)."""

    def __init__(self, name: str, config: pathlib.Path, workdir: pathlib.Path,
                 env: dict[str, str], grace: float) -> None:
        self.name = name
        self.config = config
        self.port = free_port()
        self.log = workdir / f"{name}.log"
        self.env = env
        self.grace = grace
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> GatewayProcess:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "modelwire.cli", "serve", "--config", str(self.config),
                 "--port", str(self.port), "--grace", str(self.grace)],
                env=self.env, stdout=log, stderr=subprocess.STDOUT)
        return self

    def wait_ready(self, within: float = 90.0) -> None:
        deadline = time.monotonic() + within
        while True:
            try:
                if httpx.get(self.base + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc is None or self.proc.poll() is not None:
                pytest.fail(f"gateway {self.name} exited at start:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"gateway {self.name} not ready within {within} s:\n{self.log_tail()}")
            time.sleep(0.05)

    def log_tail(self, size: int = 3000) -> str:
        return self.log.read_bytes()[-size:].decode(errors="replace") if self.log.exists() else ""

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait_gone(self, within: float) -> int:
        assert self.proc is not None
        return self.proc.wait(within)

    def stop(self) -> None:
        if self.alive:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.grace + 15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def nginx_main_config(server: str, tmp: pathlib.Path) -> str:
    """What /etc/nginx/nginx.conf around conf.d/ gives a server block, every path in ``tmp``."""
    temp = "\n".join(f"    {kind}_temp_path {tmp / kind};" for kind in
                     ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"worker_processes 1;\npid {tmp / 'nginx.pid'};\nerror_log {tmp / 'nginx-error.log'} warn;\n"
            f"daemon off;\nevents {{ worker_connections 512; }}\n"
            f"http {{\n    access_log {tmp / 'nginx-access.log'};\n{temp}\n{server}\n}}\n")


class NginxProcess:
    """nginx with the guide's configuration, its upstreams and port put in, and one line
    added that tells the test which instance answered (``X-Upstream``)."""

    def __init__(self, workdir: pathlib.Path, upstreams: list[int]) -> None:
        if NGINX is None:
            pytest.skip("nginx is not installed (apt-get install -y nginx-light)")
        self.workdir = workdir
        self.port = free_port()
        server = guide_fence("nginx")
        placeholders = re.findall(r"server 10\.0\.0\.\d+:4000", server)
        assert len(placeholders) == len(upstreams), placeholders
        for placeholder, port in zip(placeholders, upstreams, strict=True):
            server = server.replace(placeholder, f"server 127.0.0.1:{port}")
        assert "listen 80;" in server
        server = server.replace("listen 80;", f"listen 127.0.0.1:{self.port};")
        server = server.replace("location / {", "location / {\n        add_header X-Upstream $upstream_addr always;")
        self.conf = workdir / "nginx.conf"
        self.conf.write_text(nginx_main_config(server, workdir))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, within: float = 15.0) -> NginxProcess:
        self.proc = subprocess.Popen(
            [str(NGINX), "-p", str(self.workdir), "-e", str(self.workdir / "nginx-error.log"),
             "-c", str(self.conf)], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"nginx exited: {self.error_log()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.02)
        pytest.fail("nginx did not start listening")

    def error_log(self) -> str:
        path = self.workdir / "nginx-error.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: lets open streams be cut by us
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def gateway_env(extra: dict[str, str]) -> dict[str, str]:
    """The test's environment without keys and configs from outside, plus ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MODELWIRE_GATEWAY_KEYS", "MODELWIRE_SEAL_SECRET", "MODELWIRE_CONFIG")}
    src = str(REPO / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env
