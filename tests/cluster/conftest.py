"""Fixtures of the multi-instance suite (``make test-cluster``): one cluster per module —
Redis, PostgreSQL, the emulator, two gateways and nginx — and, per test, both gateways
alive again (a test that stopped one gets it restarted on the same port)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import yaml
from pgproc import PostgresProcess
from redisproc import RedisProcess

from modelwire.emulator import Emulator

from .stack import GatewayProcess, NginxProcess, gateway_env, guide_fence

GATEWAY_KEY = "gw-cluster-" + "key-0123456789"
SEAL_SECRET = "cluster-seal-" + "secret-0123456789"
GRACE = 1.0  # seconds a draining instance gives its running streams

ADMIN_KEY = "adm-cluster-" + "key-0123456789"
PRICES = {"input": 1000.0, "output": 2000.0}  # USD per million tokens: budgets spend fast


def cluster_config(emulator: Emulator, store: str, limiter: str) -> dict:
    """The guide's modelwire.yaml with the emulator's models and this run's backends."""
    config = yaml.safe_load(guide_fence("yaml"))
    assert config["teams"]["store"].startswith("postgresql://")
    assert config["teams"]["limiter"].startswith("redis://")
    config["models"] = {
        "chat": {"provider": "emulator", "model": "emulator-1", "base_url": emulator.openai_base_url()},
        "claude": {"provider": "emulator-anthropic", "model": "claude-sonnet-4-6",
                   "base_url": emulator.anthropic_base_url()},
        "slow": {"provider": "emulator", "model": "slow-model", "base_url": emulator.openai_base_url()},
    }
    config["default_model"] = "chat"
    config["teams"].update(store=store, limiter=limiter, spend_flush_s=0.1)
    config["prices"] = {"emulator/emulator-1": PRICES, "emulator-anthropic/claude-sonnet-4-6": PRICES}
    return config


@dataclass
class Cluster:
    emulator: Emulator
    redis: RedisProcess
    postgres: PostgresProcess
    gateways: list[GatewayProcess]
    nginx: NginxProcess
    store_url: str

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
        store = postgres.create_database("modelwire")
        config = cluster_dir / "modelwire.yaml"
        config.write_text(yaml.safe_dump(cluster_config(emulator, store, redis.url)))
        env = gateway_env({"MODELWIRE_GATEWAY_KEYS": GATEWAY_KEY, "MODELWIRE_ADMIN_KEYS": ADMIN_KEY,
                           "MODELWIRE_SEAL_SECRET": SEAL_SECRET})
        # the guide's step before the first instance starts
        done = subprocess.run([sys.executable, "-m", "modelwire.cli", "db", "upgrade", "--config",
                               str(config)], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0 and "applied 0001_teams" in done.stdout, done.stderr
        gateways = [GatewayProcess(name, config, cluster_dir, env, GRACE) for name in ("a", "b")]
        for g in gateways:
            g.start()
        for g in gateways:
            g.wait_ready()
        nginx = NginxProcess(cluster_dir, [g.port for g in gateways]).start()
        yield Cluster(emulator, redis, postgres, gateways, nginx, store)
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
