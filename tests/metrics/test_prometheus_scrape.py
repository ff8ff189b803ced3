"""A real Prometheus (Debian's package) scrapes a two-worker `modelwire serve` under load:
the counters it reads, summed over both workers, equal the requests this test made, by
label. `make test-metrics` runs it (`.ci/run` installs prometheus where it is missing)."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from modelwire.testing import emulator, emulator_clean  # noqa: F401 - pytest fixtures

PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.path.exists("/usr/bin/prometheus") else None)
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed (apt-get install prometheus)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise AssertionError(f"{what} did not start")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _query(prom: str, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
    data = httpx.get(prom + "/api/v1/query", params={"query": expr}, timeout=5).json()
    assert data["status"] == "success", data
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in data["data"]["result"]}


def test_prometheus_reads_consistent_counters_from_two_workers_under_load(emulator_clean, tmp_path):  # noqa: F811
    cfg = tmp_path / "modelwire.yaml"
    base = emulator_clean.openai_base_url()
    cfg.write_text(f"models:\n"
                   f"  fast: {{provider: emulator, model: w-fast, base_url: \"{base}\"}}\n"
                   f"  other-one: {{provider: emulator, model: w-other, base_url: \"{base}\"}}\n"
                   f"fallback_stick_s: 0\n")
    tmp_root = tmp_path / "tmp"  # the gateway's own temporary folder: other programs' runs stay out of it
    tmp_root.mkdir()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("MODELWIRE_GATEWAY_KEYS", "MODELWIRE_METRICS_DIR")}
    env["TMPDIR"] = str(tmp_root)
    gateway = subprocess.Popen([sys.executable, "-m", "modelwire.cli", "serve", "--config", str(cfg),
                                "--port", str(port), "--workers", "2"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prom_port = _free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: modelwire\n    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n")
    prometheus = None
    try:
        gw = f"http://127.0.0.1:{port}"
        _wait_for(gw + "/health", gateway, "the gateway")
        prometheus = subprocess.Popen(
            [PROMETHEUS, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        prom = f"http://127.0.0.1:{prom_port}"
        _wait_for(prom + "/-/ready", prometheus, "prometheus")

        plan = [("fast", False)] * 40 + [("fast", True)] * 20 + [("other-one", False)] * 24 \
            + [("emulator/invented", False)] * 6 + [("no-such-model", False)] * 10

        def one(item: tuple[str, bool]) -> tuple[int, str, int | None]:
            model, stream = item
            with httpx.Client(timeout=30) as http:  # a connection per request: both workers take some
                r = http.post(gw + "/v1/chat/completions", json={
                    "model": model, "stream": stream, "messages": [{"role": "user", "content": "hi"}]})
            prompt = r.json()["usage"]["prompt_tokens"] if r.status_code == 200 and not stream else None
            return r.status_code, r.headers.get("x-request-id", "")[:20], prompt

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = list(pool.map(one, plan))
        assert sorted({status for status, _, _ in results}) == [200, 404]
        workers = {prefix for _, prefix, _ in results}
        [prompt] = {p for _, _, p in results if p is not None}  # one conversation: one count
        assert len(workers) == 2, f"one worker served every request: {workers}"

        want = {(("model", "fast"), ("status_class", "2xx")): 60.0,
                (("model", "other-one"), ("status_class", "2xx")): 24.0,
                (("model", "other"), ("status_class", "2xx")): 6.0,
                (("model", "other"), ("status_class", "4xx")): 10.0}
        expr = "sum by (model, status_class) (modelwire_requests_total)"
        deadline = time.monotonic() + 60
        got: dict = {}
        while time.monotonic() < deadline:
            got = _query(prom, expr)
            if got == want:
                break
            time.sleep(0.5)
        assert got == want
        # the histograms and token counters agree with the same requests
        assert _query(prom, "sum(modelwire_request_duration_seconds_count)") == {(): 100.0}
        assert _query(prom, "sum(modelwire_time_to_first_token_seconds_count)") == {(): 20.0}
        assert _query(prom, 'sum by (model) (modelwire_tokens_total{kind="input"})') == {
            (("model", "fast"),): 60.0 * prompt, (("model", "other-one"),): 24.0 * prompt,
            (("model", "other"),): 6.0 * prompt}
        assert _query(prom, "sum(modelwire_open_streams)") == {(): 0.0}
    finally:
        if prometheus is not None:
            _stop(prometheus)
        _stop(gateway)
    # the run's metrics directory went with it
    assert not list(tmp_root.glob("modelwire-metrics-*"))
