"""The embeddings path: modelwire's Client and gateway against LiteLLM, same upstream.

Run: ``.venv/bin/python bench/embeddings.py [--quick] [--only 123] [--litellm PATH]``.
Not a test: it prints numbers.

One canned upstream in a *separate process* answers ``POST /v1/embeddings`` (1,536-wide
vectors, JSON floats or base64 as asked), so the CPU measured is the contender's own:
encoding, HTTP, decoding the vectors into Python floats. For 1 and 256 inputs a request:

1. sequential sync calls: ``Client.embed`` / ``litellm.embedding`` (and raw httpx + json,
   the openai SDK for reference): CPU per request (``time.process_time``), p50 latency;
2. 32 concurrent async calls: ``AsyncClient.embed`` / ``litellm.aembedding`` (and raw
   aiohttp): throughput and CPU per request;
3. the gateways: ``modelwire serve`` and LiteLLM's proxy (when a ``litellm`` command with
   its proxy extra is found; see bench/README.md), each one worker, loaded from this
   process at concurrency 1 and 32: requests/s and the *server's* CPU per request
   (/proc).

Goal (issue 24): LiteLLM uses >= 10x the CPU per request modelwire does. A contender
that is not installed is skipped, and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _util import cpu_seconds, free_port, wait_http

KEY = "sk-bench-0000000000000000"
MODEL = "bench-embed"
DIMS = 1536
SIZES = (1, 256)


# ----------------------------------------------------------------- the server
def _answer(count: int, b64: bool) -> bytes:
    vector = [((i * 7919) % 2000 - 1000) / 1000.0 for i in range(DIMS)]
    packed = base64.b64encode(array("f", vector).tobytes()).decode()
    data = [{"object": "embedding", "index": i, "embedding": packed if b64 else vector}
            for i in range(count)]
    body = json.dumps({"object": "list", "data": data, "model": MODEL,
                       "usage": {"prompt_tokens": 4 * count, "total_tokens": 4 * count}}).encode()
    return (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


def _serve(port_out: Any) -> None:
    """Canned answers by input count and encoding (the request is parsed: its CPU is
    this process's, not the contender's)."""
    answers: dict[tuple[int, bool], bytes] = {}

    from _upstream import KeepAliveHTTP

    class Proto(KeepAliveHTTP):
        def answer(self, request_line: list[str], body: bytes) -> None:
            assert self.transport is not None
            if request_line[0] == "GET":  # health checks
                self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                return
            req = json.loads(body)
            inputs = req["input"]
            count = 1 if isinstance(inputs, str) else len(inputs)
            key = (count, req.get("encoding_format") == "base64")
            if key not in answers:
                answers[key] = _answer(*key)
            self.transport.write(answers[key])

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Proto, "127.0.0.1", 0, backlog=256)
        port_out.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


def _inputs(count: int) -> list[str]:
    return [f"passage number {i} about loopback benchmarks" for i in range(count)]


# ---------------------------------------------------------------- measuring
def sync_cell(call: Callable[[], Any], n: int) -> dict[str, float]:
    for _ in range(max(3, n // 10)):
        call()
    lat = []
    cpu0 = time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        lat.append(time.perf_counter() - t0)
    return {"cpu_us": (time.process_time() - cpu0) / n * 1e6, "p50_ms": statistics.median(lat) * 1e3}


async def async_cell(call: Callable[[], Any], n: int, conc: int = 32) -> dict[str, float]:
    for _ in range(conc):
        await call()
    sem = asyncio.Semaphore(conc)

    async def one() -> None:
        async with sem:
            await call()

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return {"rps": n / (time.perf_counter() - wall0), "cpu_us": (time.process_time() - cpu0) / n * 1e6}


def _print(name: str, size: int, cell: dict[str, float]) -> None:
    print(f"  {name:<30}{size:>4} inputs  " + "  ".join(f"{k}={v:>10.1f}" for k, v in cell.items()))


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from GitHub
    try:
        import litellm
    except ImportError:
        return None
    return litellm


# ------------------------------------------------------------------ 1. sync
def part_sync(base: str, n: int) -> dict[tuple[str, int], dict[str, float]]:
    import httpx

    from modelwire import Client

    out: dict[tuple[str, int], dict[str, float]] = {}
    mw = Client(f"openai/{MODEL}", base_url=base + "/v1", api_key=KEY)
    raw = httpx.Client()
    lite = _litellm()
    hdrs = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    try:
        import openai

        oc: Any = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
    except ImportError:
        oc = None
    for size in SIZES:
        texts = _inputs(size)
        out["modelwire", size] = sync_cell(lambda t=texts: mw.embed(t), n)
        body = json.dumps({"model": MODEL, "input": texts}).encode()
        out["raw httpx", size] = sync_cell(lambda b=body: [d["embedding"] for d in json.loads(
            raw.post(base + "/v1/embeddings", content=b, headers=hdrs).content)["data"]], n)
        if oc is not None:
            out["openai SDK", size] = sync_cell(
                lambda t=texts: oc.embeddings.create(model=MODEL, input=t), n)
        if lite is not None:
            out["litellm", size] = sync_cell(lambda t=texts: lite.embedding(
                model=f"openai/{MODEL}", input=t, api_base=base + "/v1", api_key=KEY), max(10, n // 5))
    return out


# ------------------------------------------------------------------ 2. async
async def part_async(base: str, n: int) -> dict[tuple[str, int], dict[str, float]]:
    import aiohttp

    from modelwire import AsyncClient

    out: dict[tuple[str, int], dict[str, float]] = {}
    lite = _litellm()
    async with AsyncClient(f"openai/{MODEL}", base_url=base + "/v1", api_key=KEY) as mw, \
            aiohttp.ClientSession() as session:
        for size in SIZES:
            texts = _inputs(size)
            count = n if size == 1 else max(64, n // 8)  # a 256-input request costs ~30x more
            out["modelwire", size] = await async_cell(lambda t=texts: mw.embed(t), count)
            body = json.dumps({"model": MODEL, "input": texts}).encode()

            async def raw(b: bytes = body) -> Any:
                async with session.post(base + "/v1/embeddings", data=b, headers={
                        "authorization": f"Bearer {KEY}", "content-type": "application/json"}) as r:
                    return [d["embedding"] for d in json.loads(await r.read())["data"]]

            out["raw aiohttp", size] = await async_cell(raw, count)
            if lite is not None:
                out["litellm", size] = await async_cell(lambda t=texts: lite.aembedding(
                    model=f"openai/{MODEL}", input=t, api_base=base + "/v1", api_key=KEY), max(32, count // 4))
    return out


# ------------------------------------------------------------------ 3. gateways
def _start(cmd: list[str], port: int, health: str, env: dict[str, str]) -> subprocess.Popen[bytes] | None:
    proc = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    if wait_http(f"http://127.0.0.1:{port}{health}", timeout=180, proc=proc):
        return proc
    proc.kill()
    proc.wait()
    return None


async def _load(url: str, model: str, size: int, conc: int, seconds: float, pid: int) -> dict[str, float]:
    import aiohttp

    body = json.dumps({"model": model, "input": _inputs(size), "encoding_format": "float"}).encode()
    hdrs = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    done = 0
    async with aiohttp.ClientSession() as session:
        async def worker(until: float) -> None:
            nonlocal done
            while time.perf_counter() < until:
                async with session.post(url, data=body, headers=hdrs) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status
                done += 1

        await asyncio.gather(*(worker(time.perf_counter() + 0.5) for _ in range(conc)))  # warm
        done, cpu0, wall0 = 0, cpu_seconds(pid), time.perf_counter()
        await asyncio.gather(*(worker(wall0 + seconds) for _ in range(conc)))
        wall = time.perf_counter() - wall0
    return {"rps": done / wall, "server_cpu_us": (cpu_seconds(pid) - cpu0) / max(done, 1) * 1e6}


def part_gateways(base: str, seconds: float, litellm_exe: str | None) -> dict[tuple[str, int, int], dict[str, float]]:
    out: dict[tuple[str, int, int], dict[str, float]] = {}
    work = Path(tempfile.mkdtemp(prefix="mw-bench-embed-"))
    cfg = work / "modelwire.yaml"
    cfg.write_text(f"models:\n  embed: {{provider: openai, model: {MODEL}, base_url: \"{base}/v1\", "
                   "api_key_env: MW_BENCH_UPSTREAM_KEY}\n")
    targets: list[tuple[str, list[str], str, str, dict[str, str]]] = []
    port = free_port()
    targets.append(("modelwire serve", [sys.executable, "-m", "modelwire.cli", "serve", "--config", str(cfg),
                                        "--port", str(port)], f"http://127.0.0.1:{port}", "embed",
                    {"MW_BENCH_UPSTREAM_KEY": KEY, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}))
    if litellm_exe:
        lport = free_port()
        lcfg = work / "litellm.yaml"
        lcfg.write_text(f"model_list:\n  - model_name: embed\n    litellm_params:\n      model: openai/{MODEL}\n"
                        f"      api_base: {base}/v1\n      api_key: {KEY}\n")
        targets.append(("litellm proxy", [litellm_exe, "--config", str(lcfg), "--host", "127.0.0.1",
                                          "--port", str(lport), "--num_workers", "1"],
                        f"http://127.0.0.1:{lport}", "embed",
                        {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
                         "LITELLM_LOG": "ERROR", "LITELLM_MASTER_KEY": KEY}))
    else:
        print("  litellm proxy skipped: no `litellm` command with its proxy extra (--litellm PATH)")
    for name, cmd, url, model, env in targets:
        health = "/health" if name.startswith("modelwire") else "/health/liveliness"
        proc = _start(cmd, int(url.rsplit(":", 1)[1]), health, env)
        if proc is None:
            print(f"  {name:<30}did not start")
            continue
        try:
            for size in SIZES:
                for conc in (1, 32):
                    out[name, size, conc] = asyncio.run(_load(url + "/v1/embeddings", model, size, conc,
                                                              seconds, proc.pid))
                    cell = out[name, size, conc]
                    print(f"  {name:<18}{size:>4} inputs  conc {conc:>2}  rps={cell['rps']:>9.1f}"
                          f"  server_cpu_us={cell['server_cpu_us']:>10.1f}")
        finally:
            proc.terminate()
            proc.wait(30)
    return out


# ------------------------------------------------------------------------ main
def goals(lib: dict[Any, dict[str, float]], asy: dict[Any, dict[str, float]],
          gw: dict[Any, dict[str, float]]) -> None:
    print("\nratios and goals (LiteLLM CPU per request / modelwire's, goal >= 10x)")
    rows = []
    for label, table, key in (("sync", lib, "cpu_us"), ("async x32", asy, "cpu_us")):
        for size in SIZES:
            if ("litellm", size) in table:
                rows.append((f"{label}, {size} inputs", table["litellm", size][key] / table["modelwire", size][key]))
    for size in SIZES:
        for conc in (1, 32):
            if ("litellm proxy", size, conc) in gw and ("modelwire serve", size, conc) in gw:
                rows.append((f"gateway conc {conc}, {size} inputs",
                             gw["litellm proxy", size, conc]["server_cpu_us"]
                             / gw["modelwire serve", size, conc]["server_cpu_us"]))
    if not rows:
        print("  no LiteLLM numbers: install it (pip install modelwire[bench]) for the ratios")
    for label, ratio in rows:
        print(f"  {label:<36}{ratio:>7.2f}x  {'ok' if ratio >= 10 else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny counts: checks the script runs")
    parser.add_argument("--only", default="123", help="parts to run, e.g. 1 or 13")
    parser.add_argument("--litellm", help="a `litellm` command with the proxy extra (part 3)")
    args = parser.parse_args()
    n_sync, n_async, seconds = (10, 64, 1.0) if args.quick else (300, 2000, 10.0)
    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    base = f"http://127.0.0.1:{ports.get(timeout=10)}"
    print(f"canned embeddings upstream in a separate process at {base}; {os.cpu_count()} CPUs; "
          f"vectors {DIMS} wide")
    lib: dict[Any, Any] = {}
    asy: dict[Any, Any] = {}
    gw: dict[Any, Any] = {}
    try:
        if "1" in args.only:
            print(f"\n1. sequential sync calls (n={n_sync} each)")
            lib = part_sync(base, n_sync)
            for (name, size), cell in lib.items():
                _print(name, size, cell)
            if _litellm() is None:
                print(f"  {'litellm':<30}skipped: not installed (pip install modelwire[bench])")
        if "2" in args.only:
            print(f"\n2. 32 concurrent async calls (n={n_async} each)")
            asy = asyncio.run(part_async(base, n_async))
            for (name, size), cell in asy.items():
                _print(name, size, cell)
        if "3" in args.only:
            print(f"\n3. gateways, one worker each, {seconds:.0f} s per cell")
            from gateway import find_litellm

            gw = part_gateways(base, seconds, find_litellm(args.litellm))
        goals(lib, asy, gw)
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
