"""Fixtures of the multi-instance suite (``make test-cluster``): one cluster per module —
Redis, PostgreSQL, the emulator, two gateways and nginx — and, per test, both gateways
alive again (a test that stopped one gets it restarted on the same port)."""

from __future__ import annotations

import pathlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from pgproc import PostgresProcess
from redisproc import RedisProcess

from modelwire.emulator import Emulator

from .stack import GatewayProcess, NginxProcess, gateway_env

GATEWAY_KEY = "gw-cluster-" + "key-0123456789"
SEAL_SECRET = "cluster-seal-" + "secret-0123456789"
GRACE = 1.0  # seconds a draining instance gives its running streams

CONFIG = """\
models:
  chat:   {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  claude: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
  slow:   {{provider: emulator, model: slow-model, base_url: "{openai}"}}
default_model: chat
gateway:
  keys_env: CLUSTER_GATEWAY_KEYS
  seal_secret_env: CLUSTER_SEAL_SECRET
"""


@dataclass
class Cluster:
    emulator: Emulator
    redis: RedisProcess
    postgres: PostgresProcess
    gateways: list[GatewayProcess]
    nginx: NginxProcess

    @property
    def base(self) -> str:
        return self.nginx.base

    def instance(self, upstream: str) -> GatewayProcess:
        """The gateway behind nginx's ``X-Upstream`` value (``127.0.0.1:port``)."""
        port = int(upstream.rsplit(":", 1)[1])
        return next(g for g in self.gateways if g.port == port)

    def revive(self) -> None:
        """Both gateways running: a stopped one starts again on its port."""
        dead = [g for g in self.gateways if not g.alive]
        for g in dead:
            g.start()
        for g in dead:
            g.wait_ready()
        if dead:
            self.wait_in_rotation()

    def wait_in_rotation(self, within: float = 20.0) -> None:
        """Until nginx has sent a request to each gateway again (it keeps one that failed
        out of rotation for the guide's ``fail_timeout``)."""
        want = {f"127.0.0.1:{g.port}" for g in self.gateways}
        seen: set[str] = set()
        deadline = time.monotonic() + within
        with httpx.Client(timeout=5) as client:
            while not want <= seen:
                if time.monotonic() > deadline:
                    pytest.fail(f"nginx sent nothing to {sorted(want - seen)} within {within} s")
                r = client.get(self.base + "/health")
                if r.status_code == 200:
                    seen.add(r.headers["x-upstream"].split(",")[-1].strip())
                time.sleep(0.05)


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("cluster")


@pytest.fixture(scope="module")
def stack(cluster_dir: pathlib.Path) -> Iterator[Cluster]:
    redis = RedisProcess(str(cluster_dir)).start()
    postgres = PostgresProcess()
    emulator = Emulator()
    gateways: list[GatewayProcess] = []
    nginx = None
    try:
        postgres.start()
        emulator.start()
        config = cluster_dir / "modelwire.yaml"
        config.write_text(CONFIG.format(openai=emulator.openai_base_url(),
                                        anthropic=emulator.anthropic_base_url()))
        env = gateway_env({"CLUSTER_GATEWAY_KEYS": GATEWAY_KEY, "CLUSTER_SEAL_SECRET": SEAL_SECRET})
        gateways = [GatewayProcess(name, config, cluster_dir, env, GRACE) for name in ("a", "b")]
        for g in gateways:
            g.start()
        for g in gateways:
            g.wait_ready()
        nginx = NginxProcess(cluster_dir, [g.port for g in gateways]).start()
        yield Cluster(emulator, redis, postgres, gateways, nginx)
    finally:
        if nginx is not None:
            nginx.stop()
        for g in gateways:
            g.stop()
        emulator.stop()
        postgres.stop()
        redis.stop()


@pytest.fixture
def cluster(stack: Cluster) -> Iterator[Cluster]:
    stack.revive()
    stack.emulator.clear_faults()
    yield stack
    stack.emulator.clear_faults()
