"""SIGTERM on a real `modelwire serve`: running streams get the grace period, then end with the
protocol's error event; the upstream request is closed (its lease released) and the process exits."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(*args: str) -> tuple[subprocess.Popen, str]:
    """Start `modelwire serve` on a free port; return it once /health answers."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("MODELWIRE_GATEWAY_KEYS", "MODELWIRE_SEAL_SECRET")}
    proc = subprocess.Popen([sys.executable, "-m", "modelwire.cli", "serve", "--port", str(port), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(base + "/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise AssertionError("gateway did not start")
        time.sleep(0.05)


def test_sigterm_ends_running_streams_with_an_error_event(emulator_clean, tmp_path):
    cfg = tmp_path / "modelwire.yaml"
    cfg.write_text(
        f"models:\n  slow: {{provider: emulator-anthropic, model: slow-claude, "
        f"base_url: \"{emulator_clean.anthropic_base_url()}\"}}\n")
    emulator_clean.set_faults([{"fault": "slow_chunks", "model": "slow-claude", "seconds": 0.5}])
    proc, base = _serve("--config", str(cfg), "--grace", "1")
    try:
        body = {"model": "slow", "max_tokens": 500, "stream": True,
                "messages": [{"role": "user", "content": "Tell me a very long story about a fox"}]}
        received = b""
        with httpx.stream("POST", base + "/v1/messages", json=body, timeout=30,
                          headers={"anthropic-version": "2023-06-01", "x-api-key": "any"}) as resp:
            chunks = resp.iter_raw()
            received += next(chunks)
            proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            for chunk in chunks:
                received += chunk
        took = time.monotonic() - started
        assert b"event: error" in received and b"shutting down" in received
        assert b"event: message_stop" not in received
        assert took < 10
        assert proc.wait(timeout=15) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after a clean shutdown
        upstream = [r for r in emulator_clean.requests()["requests"] if r["model"] == "slow-claude"]
        assert upstream and upstream[-1]["completed"] is False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_two_workers_serve_and_share_one_seal_secret(emulator_clean, tmp_path):
    cfg = tmp_path / "modelwire.yaml"
    cfg.write_text(f"models:\n  m: {{provider: emulator, model: w-model, base_url: \"{emulator_clean.openai_base_url()}\"}}\n")
    proc, base = _serve("--config", str(cfg), "--workers", "2")
    ids = []
    try:
        for _ in range(4):
            r = httpx.post(base + "/v1/chat/completions", timeout=30, headers={"authorization": "Bearer sk-client-secret"},
                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            assert r.status_code == 200, r.text
            ids.append(r.headers["x-request-id"])
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    # every worker writes the access log: one line per request, with its id, no secrets
    out = proc.stdout.read().decode() if proc.stdout else ""
    lines = [line for line in out.splitlines() if " access " in line]
    for rid in ids:
        line = next(line for line in lines if rid in line)
        assert "chat_completions model=m upstream=emulator/w-model status=200" in line, line
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} access req_[0-9a-f]{16}[0-9]{10} chat_completions "
                            r"model=m upstream=emulator/w-model status=200 latency_ms=\d+\.\d tokens=\d+", line), line
    assert "sk-client-secret" not in out and '"hi"' not in out


def test_serve_refuses_a_public_host_without_gateway_keys(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MODELWIRE_GATEWAY_KEYS"}
    done = subprocess.run([sys.executable, "-m", "modelwire.cli", "serve", "--host", "0.0.0.0", "--port", "1"],
                          env=env, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 2
    assert "MODELWIRE_GATEWAY_KEYS" in done.stderr and "Traceback" not in done.stderr
