"""``modelwire serve --workers 2`` on one SQLite state file, as real processes on loopback
with the emulator upstream: the workers count rate limits and budgets as one (the SQLite
limiter), and the reservations of a worker killed mid-request are recorded as lost, not
held, once uvicorn has started a worker in its place. The module takes about 11 s (two
workers started once, on a loaded 2-core host), so it runs in ``make test``."""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import orjson
import pytest

from modelwire.teams.sqlite_limiter import LOST, holds

REPO = pathlib.Path(__file__).resolve().parents[2]
ADMIN_KEY = "adm-workers-" + "key-0123456789"
PRICES = {"input": 1000.0, "output": 2000.0}  # USD per million tokens: budgets spend fast
BODY = {"model": "chat", "max_tokens": 50, "messages": [{"role": "user", "content": "hi there"}]}

CONFIG = """
models:
  chat:   {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  slow:   {{provider: emulator, model: slow-model, base_url: "{openai}"}}
  claude: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
default_model: chat
teams: {{enabled: true, store: "sqlite:///{store}", spend_flush_s: 0.1, key_cache_ttl: 0.2}}
prices:
  emulator/emulator-1: {prices}
  emulator/slow-model: {prices}
  emulator-anthropic/claude-sonnet-4-6: {prices}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Workers:
    proc: subprocess.Popen[bytes]
    base: str
    store: str
    metrics: pathlib.Path
    log: pathlib.Path

    def served(self) -> Counter[int]:
        """Requests answered so far, by worker pid (each worker's metrics file, written
        every second)."""
        counts: Counter[int] = Counter()
        for path in self.metrics.glob("modelwire-*.json"):
            try:
                data = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            counts[data["pid"]] = int(sum(row[-1] for row in data["counters"]["modelwire_requests"]))
        return counts

    def served_since(self, before: Counter[int], n: int, within: float = 10.0) -> Counter[int]:
        """Once the workers' files count ``n`` more requests than ``before``: by pid."""
        deadline = time.monotonic() + within
        while True:
            now = self.served()
            now.subtract(before)
            if sum(now.values()) >= n or time.monotonic() > deadline:
                return +now
            time.sleep(0.1)

    def worker_pids(self) -> list[int]:
        return [int(p) for p in re.findall(rb"Started server process \[(\d+)\]", self.log.read_bytes())]


def _wait_ready(proc: subprocess.Popen[bytes], base: str, log: pathlib.Path, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail("serve --workers 2 did not start:\n" + log.read_text(errors="replace")[-3000:])
        time.sleep(0.05)


@pytest.fixture(scope="module")
def workers(emulator, tmp_path_factory) -> Iterator[Workers]:
    tmp = tmp_path_factory.mktemp("workers")
    store = tmp / "state.db"
    config = tmp / "modelwire.yaml"
    prices = orjson.dumps(PRICES).decode()
    config.write_text(CONFIG.format(openai=emulator.openai_base_url(),
                                    anthropic=emulator.anthropic_base_url(), store=store,
                                    prices=prices))
    metrics = tmp / "metrics"
    metrics.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MODELWIRE_GATEWAY_KEYS", "MODELWIRE_SEAL_SECRET", "MODELWIRE_CONFIG")}
    env.update(MODELWIRE_ADMIN_KEYS=ADMIN_KEY, MODELWIRE_METRICS_DIR=str(metrics),
               PYTHONPATH=str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", ""))
    port = _free_port()
    log = tmp / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "modelwire.cli", "serve", "--config",
                                 str(config), "--port", str(port), "--workers", "2",
                                 "--grace", "1"], env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(proc, base, log)
        yield Workers(proc, base, str(store), metrics, log)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


_names = itertools.count(1)


def _key(workers: Workers, **fields) -> tuple[str, str]:
    name = f"k{next(_names)}"
    r = httpx.post(workers.base + "/admin/keys", json={"name": name, **fields},
                   headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30)
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["key"]


def _chat(client: httpx.Client, base: str, secret: str, anthropic: bool = False) -> httpx.Response:
    if anthropic:
        return client.post(base + "/v1/messages", json={**BODY, "model": "claude"},
                           headers={"x-api-key": secret, "anthropic-version": "2023-06-01"})
    return client.post(base + "/v1/chat/completions", json=BODY,
                       headers={"authorization": f"Bearer {secret}"})


def _rows(workers: Workers, key_id: str) -> list[tuple[str, int, float]]:
    with sqlite3.connect(workers.store) as db:
        return db.execute("SELECT request_id, status, cost_usd FROM spend WHERE key_id = ?",
                          (key_id,)).fetchall()


def _burst(workers: Workers, secret: str, n: int, *, mixed: bool = False) -> list[httpx.Response]:
    """``n`` requests at once, each on a connection of its own."""
    with ThreadPoolExecutor(n) as pool, httpx.Client(
            timeout=60, limits=httpx.Limits(max_connections=n, max_keepalive_connections=0)) as client:
        return list(pool.map(lambda i: _chat(client, workers.base, secret, mixed and i % 2 == 1),
                             range(n)))


def test_two_workers_admit_exactly_n_of_3n_concurrent_requests_at_rpm_n(workers: Workers):
    n = 8
    # The kernel hands connections to whichever worker accepts first, so a burst may land
    # on one worker alone; each burst (a fresh key) must admit exactly n, and until both
    # workers have served in one burst the sharing is not shown: up to five bursts.
    for _ in range(5):
        _, secret = _key(workers, rpm=n)
        before = workers.served()
        answers = _burst(workers, secret, 3 * n, mixed=True)
        ok = [a for a in answers if a.status_code == 200]
        refused = [a for a in answers if a.status_code == 429]
        assert len(ok) == n and len(refused) == 2 * n, sorted(a.status_code for a in answers)
        by_worker = workers.served_since(before, 3 * n)
        assert sum(by_worker.values()) == 3 * n, by_worker
        if len(by_worker) == 2:
            break
    assert len(by_worker) == 2, by_worker  # both workers served one burst
    for a in refused:
        assert 0 < int(a.headers["retry-after"]) <= 60
        body = a.json()
        if a.request.url.path == "/v1/messages":  # Anthropic's error shape
            assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"
            message = body["error"]["message"]
        else:  # OpenAI's
            assert body["error"]["code"] == "rate_limit_exceeded"
            message = body["error"]["message"]
        assert f"allows {n} requests per minute (rpm)" in message
    assert b"each worker keeps" not in workers.log.read_bytes()  # no warning: they share


def test_two_workers_do_not_overshoot_a_budget_under_64_concurrent_requests(workers: Workers):
    budget = 2.0
    for _ in range(5):  # until both workers served one burst (see the rpm test)
        key_id, secret = _key(workers, budget=f"{budget}/month")
        before = workers.served()
        answers = _burst(workers, secret, 64)
        ok = [a for a in answers if a.status_code == 200]
        refused = [a for a in answers if a.status_code == 402]
        assert len(ok) + len(refused) == 64, sorted({a.status_code for a in answers})
        assert ok and refused
        deadline = time.monotonic() + 10
        while len(rows := _rows(workers, key_id)) < len(ok) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(r[0] for r in rows) == sorted(a.headers["x-request-id"] for a in ok)
        spent = sum(cost for _, _, cost in rows)
        # the guide's bound: nothing over, while the input estimate is above the real input
        assert spent <= budget + 1e-9, spent
        assert sum(float(a.headers["x-modelwire-cost-usd"]) for a in ok) == pytest.approx(spent)
        assert "budget exhausted" in refused[0].json()["error"]["message"]
        if len(by_worker := workers.served_since(before, 64)) == 2:
            break
    assert len(by_worker) == 2, by_worker  # both workers admitted and refused in one burst


@dataclass
class Stream:
    request_id: str
    chunks: Iterator[bytes]  # kept: dropping the iterator would close the response

    def rest(self) -> bytes:
        return b"".join(self.chunks)


def _open_stream(client: httpx.Client, base: str, secret: str) -> Stream:
    """A slow stream, once its first bytes came (admitted, its reservation held)."""
    request = client.build_request("POST", base + "/v1/chat/completions",
                                   json={**BODY, "model": "slow", "stream": True},
                                   headers={"authorization": f"Bearer {secret}"})
    r = client.send(request, stream=True)
    assert r.status_code == 200, r.read()
    chunks = r.iter_raw()
    next(chunks)
    return Stream(r.headers["x-request-id"], chunks)


def test_a_killed_workers_reservations_become_lost_rows_and_the_budget_serves_on(
        workers: Workers, emulator):
    emulator.set_faults([{"fault": "slow_chunks", "model": "slow-model", "seconds": 0.2}])
    budget = 3.0
    key_id, secret = _key(workers, budget=f"{budget}/month")
    streams: list[Stream] = []
    clients = [httpx.Client(timeout=60, limits=httpx.Limits(max_connections=1)) for _ in range(8)]
    try:
        with ThreadPoolExecutor(8) as pool:
            streams = list(pool.map(lambda c: _open_stream(c, workers.base, secret), clients))
        held = holds(workers.store)
        assert len(held) == 8
        owners = Counter(owner for _, owner, _ in held)
        victim_owner = owners.most_common(1)[0][0]
        victim = int(victim_owner.split(":")[0])
        assert victim in workers.worker_pids()
        reserved = {rid: usd for rid, owner, usd in held if owner == victim_owner}
        os.kill(victim, signal.SIGKILL)
        cut = 0
        for stream in streams:  # the victim's streams are cut; the other's end well
            try:
                body = stream.rest()
            except httpx.HTTPError:
                cut += 1
            else:
                assert b"[DONE]" in body
        assert cut == len(reserved)
    finally:
        emulator.clear_faults()
        for c in clients:
            c.close()
    # uvicorn starts a worker in its place; that one records what the dead one held
    deadline = time.monotonic() + 30
    while any(owner == victim_owner for _, owner, _ in holds(workers.store)):
        assert time.monotonic() < deadline, "the dead worker's reservations are still held"
        time.sleep(0.1)
    _wait_ready(workers.proc, workers.base, workers.log)
    rows = _rows(workers, key_id)
    lost = [r for r in rows if r[1] == LOST]
    assert len(lost) == len(reserved) and sum(r[2] for r in lost) == pytest.approx(sum(reserved.values()))
    # one row per request, none lost: the victim's as lost, the survivor's as served
    assert sorted(r[0] for r in rows) == sorted(s.request_id for s in streams)
    # the budget goes on from there: admitted until what is left is below a worst case
    admitted = 0
    with httpx.Client(timeout=30) as client:
        while True:
            answer = _chat(client, workers.base, secret)
            if answer.status_code == 402:  # settles still on their way count their worst
                time.sleep(0.5)  # case until they land: once they have, ask again
                answer = _chat(client, workers.base, secret)
            if answer.status_code != 200:
                break
            admitted += 1
            assert admitted < 100
    assert answer.status_code == 402 and admitted > 0
    deadline = time.monotonic() + 10
    while len(rows := _rows(workers, key_id)) < 8 + admitted and time.monotonic() < deadline:
        time.sleep(0.05)
    spent = sum(cost for _, _, cost in rows)
    worst = max(reserved.values())
    assert budget - worst < spent <= budget + 1e-9, (spent, worst)
