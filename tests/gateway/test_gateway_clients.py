"""Per-model clients: configured ones pinned, made-up provider/model ids bounded (LRU)
and closed when pushed out, so a flood of names holds neither memory nor sockets."""

from __future__ import annotations

import os
import time

import httpx

from modelwire.config import config_from_dict
from modelwire.gateway.clients import ClientCache
from modelwire.gateway.testing import RunningGateway


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_cache_keeps_pinned_slots_and_retires_the_least_recent() -> None:
    retired: list[str] = []
    cache = ClientCache(frozenset({"configured"}), 2, retired.append)
    cache.put("configured", "c0")
    for name in ("a", "b"):
        cache.put(name, f"c-{name}")
    assert cache.get("a") == "c-a"  # a is now the most recent: b goes first
    cache.put("c", "c-c")
    assert retired == ["c-b"]
    assert cache.get("configured") == "c0" and cache.adhoc_count == 2
    assert set(cache) == {"configured", "a", "c"}


def test_a_flood_of_model_names_is_bounded_and_its_sockets_closed(tmp_path) -> None:
    config = config_from_dict({
        "models": {"pinned": {"provider": "emulator", "model": "emulator-1"}},
        "gateway": {"max_adhoc_clients": 4}})
    with RunningGateway(config, environ={}) as gw, httpx.Client(base_url=gw.base_url, timeout=10) as http:
        def ask(model: str) -> None:
            r = http.post("/v1/chat/completions", json={
                "model": model, "messages": [{"role": "user", "content": "hi"}]})
            assert r.status_code == 200, r.text

        for i in range(4):  # the emulator, its first connections, the cache's four
            ask(f"emulator/warm-{i}")
        before = _fds()
        for i in range(40):
            ask(f"emulator/flood-{i}")
        ask("pinned")
        cache = gw.gateway._clients
        assert cache.adhoc_count <= 4 and "pinned" in set(cache)
        # each kept client would hold a pooled upstream connection (two fds in this
        # process: ours and the in-process emulator's): the evicted ones are closed
        deadline = time.monotonic() + 10
        while _fds() > before + 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _fds() <= before + 8, (before, _fds())
