"""Load on ``modelwire serve`` vs the upstream directly vs LiteLLM's proxy (issue 7).

Run: ``.venv/bin/python bench/gateway.py [--seconds 10] [--quick] [--soak MINUTES]``.
Not a test: it prints tables and the goals of issue 7 with PASS/MISS.

Processes (each its own; every one is killed at the end, ports are free ones):
* the upstream: ``bench/_upstream.py``, canned Chat Completions answers on a raw asyncio
  server (``--upstream fast``, the default: it streams ``--stream-chunks`` chunks per
  answer and is not what bounds the result), or modelwire's emulator
  (``--upstream emulator``: a full Python app, about 1,500 requests/s);
* the floors (``--no-floor`` skips them): ``bench/_floor.py``, a bare uvicorn + aiohttp
  proxy that forwards bytes and does nothing else, and ``bench/_rawfloor.py``, the same
  job on raw asyncio + httptools (no ASGI, no framework): what a Python hop adds at least;
  and, when ``socat`` is installed (``apt install socat``), a C byte relay
  (``socat TCP-LISTEN ... TCP:upstream``: no HTTP parsing at all), what any user-space
  hop adds on this machine;
* ``modelwire serve`` (1 worker) with ``models: {emu: {provider: emulator, ...}}``;
* LiteLLM's proxy (``litellm --config ...``, 1 worker, no database) when a ``litellm``
  command with its proxy extra is found (``--litellm PATH``; see bench/README.md);
* the load generator: this script re-run with ``--_loadgen`` (aiohttp), so the
  measuring process never shares an interpreter with a server.

With ``taskset`` the server under test is pinned to the last core and the load
generator and the upstream to the others. The concurrency-1 latency runs take their
direct baseline from a second upstream on the server core: a direct request then crosses
between cores once each way, as each hop of a proxied request does (an upstream beside
the load generator made the baseline cross no core at all, charging a proxy for two
crossings that any real direct path has too); that baseline is still measured and shown
("local"). For each cell (target x concurrency x
stream/non-stream) the report gives latency (time to first byte and total, p50/p99),
requests/s, chunks/s, errors and stalls, CPU% of every process (from /proc: a process
near 100% of its core bounded the result) and the server's CPU time per request (which
does not depend on how busy the machine is), and RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import (
    busy_pct,
    cpu_seconds,
    free_port,
    goal_line,
    interpreter,
    loadavg,
    machine,
    machine_ticks,
    pct,
    rss_mib,
    steal_ticks,
    table,
    wait_http,
)

STALL_S = 10.0  # a stream silent this long counts as stalled
MAX_TOKENS = 200  # the fast upstream streams this many chunks (--stream-chunks)
PROMPT = "Explain in two sentences why streaming responses reduce perceived latency for users."
TOOLS = [
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a file from the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "run", "description": "Run a shell command and return its output.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"},
                                                        "timeout": {"type": "integer"}},
                       "required": ["command"]}}},
]


def conversation(turns: int) -> dict[str, Any]:
    """The body's conversation: the prompt alone, or (``--turns N``) an agent's: a system
    prompt, N earlier exchanges (a question, a tool call, its ~1 KiB result, an answer),
    the tools, then the prompt. The translating path's work grows with it; the lane's not."""
    if not turns:
        return {"messages": [{"role": "user", "content": PROMPT}]}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful coding agent. Read before you change anything."}]
    for i in range(turns):
        call = f"call_{i:04d}"
        messages += [
            {"role": "user", "content": f"Step {i}: look at src/module_{i}.py and say what it does."},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": call, "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/module_{i}.py"})}}]},
            {"role": "tool", "tool_call_id": call, "content": "def double(x):\n    return x * 2\n" * 32},
            {"role": "assistant", "content": f"module_{i}.py defines double(), which doubles its argument."},
        ]
    messages.append({"role": "user", "content": PROMPT})
    return {"messages": messages, "tools": TOOLS}


CONVERSATION = conversation(0)  # --turns sets it


# ================================================================ load generator
def _headers() -> dict[str, str]:
    return {"content-type": "application/json", "authorization": f"Bearer {os.environ['MW_BENCH_KEY']}"}


async def _request(session: Any, url: str, body: bytes, stream: bool) -> tuple[int, float, float, int, float]:
    """One request: (status, seconds to first byte, seconds in total, SSE events read, the
    gateway's own seconds from its x-modelwire-overhead-ms header, or -1 without one)."""
    t0 = time.perf_counter()
    first = 0.0
    n = 0
    prev_nl = False
    async with session.post(url, data=body, headers=_headers()) as resp:
        if not stream:
            first = time.perf_counter()
        own = float(resp.headers.get("x-modelwire-overhead-ms", "-1000")) / 1e3
        async for piece in resp.content.iter_any():
            if not first:
                first = time.perf_counter()
            # SSE events end with a blank line; one may straddle two reads
            n += piece.count(b"\n\n") + (prev_nl and piece[:1] == b"\n")
            prev_nl = piece[-1:] == b"\n"
        status = resp.status
    return status, first - t0, time.perf_counter() - t0, n, own


async def _paired(targets: list[tuple[str, bytes]], seconds: float, warmup: float,
                  stream: bool) -> list[dict[str, Any]]:
    """Concurrency 1, round robin over the targets, one request each in turn: whatever
    else the machine does hits every target alike, so differences are the servers'."""
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=None, sock_connect=STALL_S, sock_read=STALL_S)
    out: list[dict[str, Any]] = [{"ttfb": [], "total": [], "own": [], "errors": 0} for _ in targets]
    warm_end = time.perf_counter() + warmup
    end = warm_end + seconds
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=len(targets)),
                                     timeout=timeout) as session:
        while time.perf_counter() < end:
            for (url, body), res in zip(targets, out):
                try:
                    status, first, total, _, own = await _request(session, url, body, stream)
                except (TimeoutError, aiohttp.ClientError, OSError):
                    res["errors"] += 1
                    continue
                if status != 200:
                    res["errors"] += 1
                elif time.perf_counter() > warm_end:
                    res["ttfb"].append(first)
                    res["total"].append(total)
                    if own >= 0:
                        res["own"].append(own)
    return out


async def _load(url: str, body: bytes, conc: int, seconds: float, warmup: float,
                stream: bool) -> dict[str, Any]:
    import aiohttp

    conn = aiohttp.TCPConnector(limit=conc, limit_per_host=conc)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=STALL_S, sock_read=STALL_S)
    ttfb: list[float] = []
    total: list[float] = []
    counts = {"ok": 0, "chunks": 0, "errors": 0, "stalls": 0, "connect_stalls": 0, "late": 0}
    first_error: list[str] = []
    t_start = time.perf_counter()
    warm_end = t_start + warmup
    end = warm_end + seconds

    async def one(session: aiohttp.ClientSession) -> None:
        t0 = time.perf_counter()
        status, first, whole, n, _ = await _request(session, url, body, stream)
        t1 = t0 + whole
        if status != 200:
            counts["errors"] += 1
            if not first_error:
                first_error.append(f"HTTP {status}")
            return
        if t0 >= warm_end and t1 <= end:
            ttfb.append(first)
            total.append(whole)
            counts["ok"] += 1
            counts["chunks"] += n
        elif t1 > end:
            counts["late"] += 1

    async def worker(session: aiohttp.ClientSession) -> None:
        while time.perf_counter() < end:
            try:
                await one(session)
            except TimeoutError as exc:
                counts["stalls"] += 1
                # a stall while connecting (the listen queue) is not one mid-stream
                if isinstance(exc, getattr(aiohttp, "ConnectionTimeoutError", ())):
                    counts["connect_stalls"] += 1
            except (aiohttp.ClientError, OSError) as exc:
                counts["errors"] += 1
                if not first_error:
                    first_error.append(repr(exc)[:200])
                await asyncio.sleep(0.01)  # a refused connection must not spin

    cpu0 = time.process_time()
    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:
        await asyncio.gather(*(worker(session) for _ in range(conc)))
    wall = time.perf_counter() - t_start
    return {"ttfb": ttfb, "total": total, **counts, "seconds": seconds,
            "cpu_pct": 100 * (time.process_time() - cpu0) / wall, "error": first_error[:1]}


def paired_main(args: list[str]) -> int:
    seconds, warmup, stream, *pairs = args
    targets = [(pairs[i], Path(pairs[i + 1]).read_bytes()) for i in range(0, len(pairs), 2)]
    print(json.dumps(asyncio.run(_paired(targets, float(seconds), float(warmup), stream == "1"))))
    return 0


def loadgen_main(args: list[str]) -> int:
    url, body_path, conc, seconds, warmup, stream = args
    body = Path(body_path).read_bytes()
    result = asyncio.run(_load(url, body, int(conc), float(seconds), float(warmup), stream == "1"))
    print(json.dumps(result))
    return 0


# ===================================================================== processes
@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def tree(self) -> list[int]:
        """This process and its descendants (uvicorn or LiteLLM may fork workers)."""
        pids = [self.pid]
        try:
            entries = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return pids
        parents: dict[int, int] = {}
        for p in entries:
            try:
                with open(f"/proc/{p}/stat", encoding="ascii") as f:
                    parents[p] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        frontier = [self.pid]
        while frontier:
            kids = [p for p, pp in parents.items() if pp in frontier]
            pids += kids
            frontier = kids
        return pids

    def cpu(self) -> float:
        return sum(cpu_seconds(p) for p in self.tree())

    def rss(self, *, peak: bool = False) -> float:
        return sum(rss_mib(p, peak=peak) for p in self.tree())


@dataclass
class Bench:
    workdir: Path
    procs: list[Proc] = field(default_factory=list)
    pin: bool = bool(shutil.which("taskset")) and (os.cpu_count() or 1) >= 2

    def cores(self, role: str) -> list[str]:
        """``taskset`` prefix: the server under test gets the last core, the rest share."""
        if not self.pin:
            return []
        last = (os.cpu_count() or 1) - 1
        cpus = str(last) if role == "server" else ",".join(str(c) for c in range(last)) or "0"
        return ["taskset", "-c", cpus]

    def repin(self, proc: Proc, role: str) -> None:
        if self.pin:
            for pid in proc.tree():
                subprocess.run(["taskset", "-pc", self.cores(role)[2], str(pid)],
                               capture_output=True, check=False, timeout=10)

    def start(self, name: str, argv: list[str], port: int, health: str, role: str,
              env: dict[str, str] | None = None, timeout: float = 60.0) -> Proc | None:
        log = self.workdir / f"{name}.log"
        full_env = {k: v for k, v in os.environ.items() if k not in _UNSET_ENV}
        popen = subprocess.Popen(self.cores(role) + argv, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                 env={**full_env, **(env or {})}, start_new_session=True)
        proc = Proc(name, popen, port, log)
        self.procs.append(proc)
        if not wait_http(f"http://127.0.0.1:{port}{health}", timeout=timeout, proc=popen):
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            print(f"  {name} did not come up within {timeout:.0f} s; skipped. Log tail:")
            for line in tail:
                print(f"    {line}")
            self.stop(proc)
            return None
        return proc

    def stop(self, proc: Proc) -> None:
        if proc.popen.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # its own session: the whole tree
            except ProcessLookupError:
                pass
            try:
                proc.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.popen.wait(timeout=10)
        if proc in self.procs:
            self.procs.remove(proc)

    def stop_all(self) -> None:
        for proc in list(self.procs):
            self.stop(proc)


# a database or a config the user has set must not change what a server does here
_UNSET_ENV = frozenset({"DATABASE_URL", "MODELWIRE_CONFIG", "REDIS_URL", "REDIS_HOST"})

_EMULATOR = """
import sys, uvicorn
from modelwire.emulator import Emulator
from modelwire.emulator.app import build_app
emu = Emulator(profile="lenient")
uvicorn.run(build_app(emu.backend), host="127.0.0.1", port=int(sys.argv[1]),
            access_log=False, log_level="warning")
"""


def start_emulator(b: Bench, role: str = "client", name: str = "emulator") -> Proc | None:
    port = free_port()
    return b.start(name, [sys.executable, "-c", _EMULATOR, str(port)], port, "/v1/models", role)


def start_fast_upstream(b: Bench, chunks: int, role: str = "client", name: str = "upstream") -> Proc | None:
    port = free_port()
    script = str(Path(__file__).resolve().parent / "_upstream.py")
    return b.start(name, [sys.executable, script, str(port), "--chunks", str(chunks)], port,
                   "/v1/models", role)


def start_floor(b: Bench, upstream: int) -> Proc | None:
    port = free_port()
    script = str(Path(__file__).resolve().parent / "_floor.py")
    return b.start("floor", [sys.executable, script, str(port), f"http://127.0.0.1:{upstream}"], port,
                   "/health", "server")


def start_raw_floor(b: Bench, upstream: int) -> Proc | None:
    port = free_port()
    script = str(Path(__file__).resolve().parent / "_rawfloor.py")
    return b.start("raw-floor", [sys.executable, script, str(port), f"http://127.0.0.1:{upstream}"], port,
                   "/health", "server")


def start_c_hop(b: Bench, upstream: int) -> Proc | None:
    """socat relaying bytes between one client connection and one upstream connection
    (a child per client connection): the least any user-space hop costs here."""
    exe = shutil.which("socat")
    if exe is None:
        print("  c-hop skipped: no socat (apt install socat)")
        return None
    port = free_port()
    return b.start("c-hop", [exe, f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,nodelay",
                             f"TCP:127.0.0.1:{upstream},nodelay"], port, "/v1/models", "server")


def start_modelwire(b: Bench, upstream: int, python: str | None = None, name: str = "modelwire",
                    src: str | None = None) -> Proc | None:
    """``modelwire serve`` (1 worker). ``python``: another interpreter to run it with (this
    checkout's src first on its path), e.g. one where uvicorn finds uvloop and httptools;
    ``src``: another checkout's ``src`` directory to run instead of this one's."""
    port = free_port()
    cfg = b.workdir / "modelwire.yaml"
    # emu: the translating path (decode, Client, encode: the emulator's issuer is not
    # OpenAI's, so echoed reasoning must be translated); emu-lane: the same upstream under
    # the openai profile, which takes the same-protocol lane (client bytes forwarded)
    cfg.write_text("models:\n  emu: {provider: emulator, model: emulator-1, "
                   f"base_url: 'http://127.0.0.1:{upstream}/v1'}}\n"
                   "  emu-lane: {provider: openai, model: emulator-1, "
                   f"base_url: 'http://127.0.0.1:{upstream}/v1', api_key_env: MW_BENCH_KEY}}\n"
                   "default_model: emu\n")
    exe = Path(sys.executable).with_name("modelwire")
    other = bool(python or src)
    argv = [str(exe)] if exe.exists() and not other else [python or sys.executable, "-m", "modelwire.cli"]
    # like for like with LiteLLM's proxy: the client's key checked (the load generator
    # sends it), the request log at its default (one access line per request)
    env = {"MODELWIRE_GATEWAY_KEYS": os.environ["MW_BENCH_KEY"], "XDG_CONFIG_HOME": str(b.workdir),
           "XDG_DATA_HOME": str(b.workdir)}
    if other:
        src = src or str(Path(__file__).resolve().parent.parent / "src")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    return b.start(name, [*argv, "serve", "--config", str(cfg), "--port", str(port)],
                   port, "/health", "server", env=env)


def lane_header(url: str) -> str | None:
    """The ``x-modelwire-lane`` header of one request for model ``emu-lane``."""
    import urllib.request

    body = json.dumps({"model": "emu-lane", "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(url, data=body, headers=_headers())
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.headers.get("x-modelwire-lane")
    except OSError as exc:
        return f"request failed: {exc}"


def find_litellm(explicit: str | None) -> str | None:
    """A ``litellm`` command whose proxy extra imports (the bench extra has no proxy)."""
    candidates = [explicit] if explicit else [
        os.environ.get("MODELWIRE_BENCH_LITELLM"),
        str(Path(sys.executable).with_name("litellm")),
        "/tmp/mw-bench-litellm-proxy/bin/litellm",
        shutil.which("litellm")]
    for cand in candidates:
        if not cand or not Path(cand).exists():
            continue
        py = Path(cand).with_name("python")
        probe = subprocess.run([str(py), "-c", "import litellm.proxy.proxy_server"], capture_output=True, check=False,
                               timeout=120, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        if probe.returncode == 0:
            return cand
        print(f"  ({cand}: proxy extra missing: {probe.stderr.decode(errors='replace').strip().splitlines()[-1:]})")
    return None


def start_litellm(b: Bench, upstream: int, exe: str) -> Proc | None:
    port = free_port()
    cfg = b.workdir / "litellm.yaml"
    cfg.write_text("model_list:\n  - model_name: emu\n    litellm_params:\n"
                   "      model: openai/emulator-1\n"
                   f"      api_base: http://127.0.0.1:{upstream}/v1\n      api_key: sk-bench-0000\n")
    # no database, no network: the local model price map, no telemetry (DATABASE_URL must
    # be absent: an empty one is refused as an unsupported scheme). Like modelwire: a master
    # key checked (the load generator sends it) and its default log, uvicorn's access line
    # per request (LITELLM_LOG unset; LITELLM_LOG=ERROR would turn that line off)
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
           "LITELLM_MASTER_KEY": os.environ["MW_BENCH_KEY"]}
    return b.start("litellm", [exe, "--config", str(cfg), "--host", "127.0.0.1", "--port", str(port),
                               "--num_workers", "1"], port, "/health/liveliness", "server", env=env,
                   timeout=180)


# ========================================================================= cells
@dataclass
class Cell:
    target: str
    conc: int
    stream: bool
    res: dict[str, Any]
    cpu: dict[str, float]  # process name -> CPU% of one core
    server_cpu_us: float  # server CPU µs per completed request
    rss: float
    rss_peak: float
    machine_busy: float  # % of all cores busy (anyone's processes) during the cell

    def bottleneck(self) -> str:
        """The process near 100% of its core, else the machine itself when its cores were
        busy with other work (then no process here had the CPU it wanted)."""
        name = max(self.cpu, key=lambda k: self.cpu[k])
        if self.cpu[name] >= 80:
            return name
        return "machine" if self.machine_busy >= 85 else f"none ({name})"

    def q(self, key: str, p: float) -> float:
        return pct(self.res[key], p) * 1e3


def run_cell(b: Bench, target: str, url: str, model: str, conc: int, stream: bool, seconds: float,
             server: Proc | None, others: list[Proc]) -> Cell:
    body = {"model": model, **CONVERSATION, "max_tokens": MAX_TOKENS}
    if stream:
        body["stream"] = True
    body_path = b.workdir / f"body-{int(stream)}.json"
    body_path.write_text(json.dumps(body))
    watched = ([server] if server else []) + others
    cpu0 = {p.name: p.cpu() for p in watched}
    ticks0 = machine_ticks()
    t0 = time.perf_counter()
    warmup = min(1.0, seconds / 5)
    argv = [*b.cores("client"), sys.executable, __file__, "--_loadgen", url, str(body_path), str(conc),
            str(seconds), str(warmup), "1" if stream else "0"]
    out = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=seconds + warmup + 3 * STALL_S + 30)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed: {out.stderr.strip()[-500:]}")
    res = json.loads(out.stdout)
    cpu = {p.name: 100 * (p.cpu() - cpu0[p.name]) / wall for p in watched}
    busy = busy_pct(ticks0, machine_ticks())
    cpu["loadgen"] = res["cpu_pct"]
    server_cpu_us = float("nan")
    if server and res["ok"]:
        # CPU over the whole run (warm-up included) per request completed in the window:
        # an upper bound, fine for comparing servers
        server_cpu_us = (cpu[server.name] / 100 * wall) / (res["ok"] * (wall / seconds)) * 1e6
    return Cell(target, conc, stream, res, cpu, server_cpu_us,
                server.rss() if server else float("nan"), server.rss(peak=True) if server else float("nan"),
                busy)


def run_paired(b: Bench, targets: list[tuple[str, str, str]], seconds: float,
               stream: bool) -> dict[str, dict[str, Any]]:
    """name -> {"ttfb", "total", "errors"}: concurrency 1, the targets interleaved."""
    argv = [*b.cores("client"), sys.executable, __file__, "--_paired", str(seconds), "0.5", "1" if stream else "0"]
    for name, url, model in targets:
        body = {"model": model, **CONVERSATION, "max_tokens": MAX_TOKENS, **({"stream": True} if stream else {})}
        path = b.workdir / f"paired-{name}-{int(stream)}.json"
        path.write_text(json.dumps(body))
        argv += [url, str(path)]
    out = subprocess.run(argv, check=False, capture_output=True, text=True,
                         timeout=seconds + 1 + 3 * STALL_S * len(targets) + 30)
    if out.returncode != 0:
        raise RuntimeError(f"paired load generator failed: {out.stderr.strip()[-500:]}")
    return dict(zip([t[0] for t in targets], json.loads(out.stdout)))


def _pool_into(acc: dict[str, dict[str, Any]], name: str, res: dict[str, Any]) -> None:
    """Add one block's samples of ``name`` to what earlier blocks gave."""
    into = acc.setdefault(name, {"ttfb": [], "total": [], "own": [], "errors": 0})
    into["ttfb"] += res["ttfb"]
    into["total"] += res["total"]
    into["own"] += res["own"]
    into["errors"] += res["errors"]


def direct_for(res: dict[str, dict[str, Any]], name: str, base: str = "direct") -> dict[str, Any]:
    """The direct run a target was paired with (its own with ``--interleave pairs``);
    ``base="local"``: the one against the upstream on the load generator's own core."""
    return res.get(f"{base} (with {name})") or res[base]


def _is_base(name: str) -> bool:
    return name.startswith(("direct", "local"))


def paired_rows(res: dict[str, dict[str, Any]], stream: bool) -> list[list[Any]]:
    rows = []
    for name, r in res.items():
        d = None if _is_base(name) else direct_for(res, name)
        vals = [pct(r[k], p) * 1e3 for k, p in (("ttfb", 50), ("ttfb", 99), ("total", 50), ("total", 99))]
        dv = ([pct(d[k], p) * 1e3 for k, p in (("ttfb", 50), ("ttfb", 99), ("total", 50), ("total", 99))]
              if d is not None else [float("nan")] * 4)
        own = [pct(r["own"], p) * 1e3 if r.get("own") else float("nan") for p in (50, 99)]
        rows.append([f"{name} {'stream' if stream else 'json'}", len(r["total"]), *vals,
                     *[v - w for v, w in zip(vals, dv)], *own, r["errors"]])
    return rows


# own: the gateway's own time by its x-modelwire-overhead-ms header (its handler's time
# before the upstream send and after the answer; HTTP parsing and socket writes excluded)
PAIRED_HEAD = ["target", "requests", "TTFB p50 ms", "TTFB p99", "total p50", "total p99",
               "+TTFB p50", "+TTFB p99", "+total p50", "+total p99", "own p50", "own p99", "errors"]


def cell_row(c: Cell, direct: Cell | None) -> list[Any]:
    r = c.res
    added = [c.q(k, p) - direct.q(k, p) if direct and c is not direct else float("nan")
             for k, p in (("ttfb", 50), ("ttfb", 99), ("total", 50), ("total", 99))]
    cpus = " ".join(f"{k} {v:.0f}%" for k, v in c.cpu.items())
    return [f"{c.target} {'stream' if c.stream else 'json'}", r["ok"] / r["seconds"],
            r["chunks"] / r["seconds"] if c.stream else float("nan"),
            c.q("ttfb", 50), c.q("ttfb", 99), c.q("total", 50), c.q("total", 99), *added,
            f"{r['errors']}/{r['stalls']}", cpus, f"{c.machine_busy:.0f}%", c.bottleneck(),
            c.server_cpu_us, c.rss_peak]


HEAD = ["target", "req/s", "chunks/s", "TTFB p50 ms", "TTFB p99", "total p50", "total p99",
        "+TTFB p50", "+TTFB p99", "+total p50", "+total p99", "err/stall", "CPU% per process",
        "machine busy", "bounded by", "server CPU µs/req", "server RSS peak MiB"]


# ======================================================================== report
def goals(cells: list[Cell], paired: dict[bool, dict[str, dict[str, Any]]],
          target: str = "modelwire") -> list[str]:
    def get(target: str, conc: int, stream: bool) -> Cell | None:
        return next((c for c in cells if (c.target, c.conc, c.stream) == (target, conc, stream)), None)

    def added(stream: bool, key: str, p: float, name: str = target, base: str = "direct") -> float:
        r = paired.get(stream, {})
        return (pct(r[name][key], p) - pct(direct_for(r, name, base)[key], p)) * 1e3

    lines: list[str] = []
    if target in paired.get(False, {}):
        a50, a99 = added(False, "total", 50), added(False, "total", 99)
        note50 = note99 = ""
        if any(k.startswith("local") for k in paired[False]):
            note50 = f"; over an upstream on the load generator's core: +{added(False, 'total', 50, base='local'):.2f}"
            note99 = f"; over an upstream on the load generator's core: +{added(False, 'total', 99, base='local'):.2f}"
        if "floor" in paired[False]:
            f50, f99 = added(False, "total", 50, "floor"), added(False, "total", 99, "floor")
            note50 += f"; the bare uvicorn+aiohttp floor adds +{f50:.2f}"
            note99 += f"; the floor adds +{f99:.2f}"
        if "raw-floor" in paired[False]:
            g50, g99 = added(False, "total", 50, "raw-floor"), added(False, "total", 99, "raw-floor")
            note50 += f", the raw asyncio+httptools hop +{g50:.2f}"
            note99 += f", the raw hop +{g99:.2f}"
        if "c-hop" in paired[False]:
            h50, h99 = added(False, "total", 50, "c-hop"), added(False, "total", 99, "c-hop")
            note50 += f", socat's C byte relay +{h50:.2f}"
            note99 += f", socat +{h99:.2f}"
        lines.append(goal_line("added p50 <= 0.5 ms at concurrency 1 (interleaved)", a50 <= 0.5,
                               f"+{a50:.2f} ms{note50}"))
        own = paired[False][target].get("own")
        if own:
            note50 += f"; the gateway's own time (x-modelwire-overhead-ms) p50 {pct(own, 50) * 1e3:.2f}"
            note99 += f"; its own time p99 {pct(own, 99) * 1e3:.2f}"
        # no longer a goal (issue 23): at concurrency 1 the p99 measures the host's other
        # tenants (+0.78 ms interleaved, +1.7-4.3 ms with wrk), so it is shown, not judged
        lines.append(goal_line("added p99 at concurrency 1 (interleaved; shown, not a goal)", None,
                               f"+{a99:.2f} ms{note99}"))
    mw = [c for c in cells if c.target == target and not c.stream]
    lite = [c for c in cells if c.target == "litellm" and not c.stream]
    if mw:
        best = max(mw, key=lambda c: c.res["ok"])
        rps = best.res["ok"] / best.res["seconds"]
        lines.append(goal_line("throughput >= 1,250 req/s", rps >= 1250,
                               f"{rps:,.0f} req/s at concurrency {best.conc} (bounded by "
                               f"{best.bottleneck()}); server CPU "
                               f"{best.server_cpu_us:,.0f} µs/req = at most "
                               f"{1e6 / best.server_cpu_us:,.0f} req/s per core"))
        if lite:
            lbest = max(lite, key=lambda c: c.res["ok"])
            lrps = lbest.res["ok"] / lbest.res["seconds"]
            x = rps / lrps if lrps else float("inf")
            lines.append(goal_line("throughput >= 10x LiteLLM proxy", x >= 10,
                                   f"{rps:,.0f} vs {lrps:,.0f} req/s = {x:.1f}x (CPU per request: "
                                   f"{best.server_cpu_us:,.0f} vs {lbest.server_cpu_us:,.0f} µs = "
                                   f"{lbest.server_cpu_us / best.server_cpu_us:.1f}x)"))
        else:
            lines.append(goal_line("throughput >= 10x LiteLLM proxy", None, "LiteLLM proxy not run"))
    ms = [c for c in cells if c.target == target and c.stream]
    if ms:
        best = max(ms, key=lambda c: c.res["chunks"])
        cps = best.res["chunks"] / best.res["seconds"]
        lines.append(goal_line("streamed chunks/s >= 50,000", cps >= 50_000,
                               f"{cps:,.0f} chunks/s at concurrency {best.conc} (bounded by "
                               f"{best.bottleneck()}); server CPU {best.server_cpu_us:,.0f} µs per "
                               f"{best.res['chunks'] / max(best.res['ok'], 1):.0f}-chunk stream = at most "
                               f"{1e6 / best.server_cpu_us * best.res['chunks'] / max(best.res['ok'], 1):,.0f} "
                               f"chunks/s per core"))
    if target in paired.get(True, {}):
        add = added(True, "ttfb", 50)
        lines.append(goal_line("time to first byte <= 2 ms over direct (concurrency 1 interleaved, p50)",
                               add <= 2, f"+{add:.2f} ms (p99 +{added(True, 'ttfb', 99):.2f} ms)"))
    m256 = get(target, 256, True)
    if m256:
        ok = m256.res["stalls"] == 0 and m256.res["errors"] == 0 and m256.res["ok"] > 0
        lines.append(goal_line("256 concurrent streams without a stall", ok,
                               f"{m256.res['ok']} streams done, {m256.res['stalls']} stalled "
                               f"(silent > {STALL_S:.0f} s), {m256.res['errors']} errors"))
        lines.append(goal_line("RSS <= 150 MB under that load", m256.rss_peak * 1.048576 <= 150,
                               f"peak {m256.rss_peak * 1.048576:.0f} MB ({m256.rss_peak:.0f} MiB)"))
    return lines


def soak(b: Bench, gw: Proc, minutes: float) -> None:
    """256 streams for ``minutes``; RSS sampled every run of 30 s (flat = no leak)."""
    print(f"\nSoak: modelwire, 256 concurrent streams, {minutes:g} min; RSS every 30 s:")
    samples = []
    deadline = time.monotonic() + minutes * 60
    while time.monotonic() < deadline:
        seconds = min(30.0, max(1.0, deadline - time.monotonic()))
        cell = run_cell(b, "modelwire", f"http://127.0.0.1:{gw.port}/v1/chat/completions", "emu", 256, True,
                        seconds, gw, [])
        samples.append(gw.rss())
        print(f"  {len(samples) * 30:>5.0f} s: RSS {samples[-1]:.1f} MiB, {cell.res['ok']} streams, "
              f"{cell.res['stalls']} stalls ({cell.res['connect_stalls']} while connecting), "
              f"{cell.res['errors']} errors, load average {loadavg()}")
    if len(samples) >= 2:
        print(f"  RSS first {samples[0]:.1f} MiB -> last {samples[-1]:.1f} MiB "
              f"(max {max(samples):.1f})")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_loadgen"]:
        return loadgen_main(argv[1:])
    if argv[:1] == ["--_paired"]:
        return paired_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="measured seconds per cell (max 60)")
    ap.add_argument("--quick", action="store_true", help="4 s per cell")
    ap.add_argument("--concurrency", default="1,32,256", help="comma-separated (default 1,32,256)")
    ap.add_argument("--interleave", choices=("pairs", "all"), default="pairs",
                    help="concurrency-1 latency: each target alternated with its own direct run "
                         "(pairs, default) or all targets in one round robin (all)")
    ap.add_argument("--blocks", type=int, default=4,
                    help="concurrency-1 latency (pairs): split each target's time into this many "
                         "blocks, taken in rounds over the targets, samples pooled (default 4)")
    ap.add_argument("--litellm", help="path of a `litellm` command with the proxy extra")
    ap.add_argument("--no-litellm", action="store_true", help="skip the LiteLLM proxy column")
    ap.add_argument("--no-modelwire", action="store_true", help="skip the modelwire column")
    ap.add_argument("--lane", action=argparse.BooleanOptionalAction, default=True,
                    help="also measure the same-protocol lane (model emu-lane, openai profile)")
    ap.add_argument("--other-python", metavar="PYTHON",
                    help="add a column (mw-other): modelwire serve from this checkout run by another "
                         "interpreter, one with modelwire's dependencies installed (e.g. another build: "
                         "the interpreter's build moves the gateway's CPU per request by ~20%%)")
    ap.add_argument("--other-src", metavar="DIR",
                    help="add a column (mw-other): modelwire serve from another checkout (its DIR/src), "
                         "e.g. a git worktree of the commit before a change; with --interleave all the two "
                         "are measured request by request in one round robin: a change's effect on "
                         "latency without the run-to-run drift of the host (+-0.05 ms between runs)")
    ap.add_argument("--soak", type=float, default=0.0, help="then run 256 streams for MINUTES")
    ap.add_argument("--upstream", choices=("fast", "emulator"), default="fast",
                    help="fast: bench/_upstream.py (canned answers); emulator: modelwire's emulator")
    ap.add_argument("--stream-chunks", type=int, default=200,
                    help="chunks per streamed answer (sent as max_tokens; the fast upstream obeys it)")
    ap.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                    help="also measure a bare uvicorn + aiohttp proxy (bench/_floor.py), a raw "
                         "asyncio + httptools one (bench/_rawfloor.py) and socat's byte relay")
    ap.add_argument("--turns", type=int, default=0,
                    help="send an agent's conversation: N earlier exchanges with tool calls and "
                         "results, and the tools (default 0: one user message)")
    args = ap.parse_args(argv)
    global MAX_TOKENS, CONVERSATION
    MAX_TOKENS = max(1, args.stream_chunks)
    CONVERSATION = conversation(max(0, args.turns))
    seconds = 4.0 if args.quick else min(60.0, max(1.0, args.seconds))
    # one fake key for every target: the emulator takes any, modelwire (no gateway keys
    # configured, loopback) ignores it, LiteLLM's proxy wants it as its master key
    os.environ.setdefault("MW_BENCH_KEY", "sk-" + secrets.token_hex(24))
    concs = [int(c) for c in args.concurrency.split(",")]
    print(f"modelwire gateway benchmark — {machine()}; load average {loadavg()}")
    print(f"{seconds:g} s per cell after a warm-up; pinned with taskset: "
          f"{'server on the last core, upstream + load generator on the others (for concurrency-1 latency the direct baseline has its own upstream on the server core)' if Bench(Path('.')).pin else 'no'}")
    with tempfile.TemporaryDirectory(prefix="mw-bench-gw-") as tmp:
        b = Bench(Path(tmp))
        try:
            return _run(b, args, seconds, concs)
        finally:
            b.stop_all()


def _run(b: Bench, args: argparse.Namespace, seconds: float, concs: list[int]) -> int:
    emu = start_emulator(b) if args.upstream == "emulator" else start_fast_upstream(b, MAX_TOKENS)
    if emu is None:
        return 1
    print(f"  upstream: {'modelwire emulator' if args.upstream == 'emulator' else 'bench/_upstream.py'}; "
          f"streams ask for {MAX_TOKENS} chunks (max_tokens); request: "
          f"{len(CONVERSATION['messages'])} message(s), {len(json.dumps(CONVERSATION))} bytes")
    targets: list[tuple[str, str, str, Proc | None]] = [
        ("direct", f"http://127.0.0.1:{emu.port}/v1/chat/completions", "emulator-1", None)]
    # concurrency-1 latency: the direct baseline's upstream sits on the server core, so a
    # direct request crosses between cores once each way like each hop of a proxied one
    # does (with the upstream beside the load generator, direct requests crossed no core
    # at all and a proxy was charged for two crossings a real direct path also has); the
    # old baseline ("local") is still measured and shown
    far = (start_emulator(b, "server", "emulator-far") if args.upstream == "emulator"
           else start_fast_upstream(b, MAX_TOKENS, "server", "upstream-far"))
    if far is None:
        return 1
    bases = [("direct", f"http://127.0.0.1:{far.port}/v1/chat/completions", "emulator-1"),
             ("local", targets[0][1], "emulator-1")]
    floor = start_floor(b, emu.port) if args.floor else None
    if floor is not None:
        targets.append(("floor", f"http://127.0.0.1:{floor.port}/v1/chat/completions", "emulator-1", floor))
    raw = start_raw_floor(b, emu.port) if args.floor else None
    if raw is not None:
        targets.append(("raw-floor", f"http://127.0.0.1:{raw.port}/v1/chat/completions", "emulator-1", raw))
    hop = start_c_hop(b, emu.port) if args.floor else None
    if hop is not None:
        targets.append(("c-hop", f"http://127.0.0.1:{hop.port}/v1/chat/completions", "emulator-1", hop))
    gw = None if args.no_modelwire else start_modelwire(b, emu.port)
    if gw is not None:
        gw_url = f"http://127.0.0.1:{gw.port}/v1/chat/completions"
        targets.append(("modelwire", gw_url, "emu", gw))
        if args.lane:
            print(f"  mw-lane: x-modelwire-lane = {lane_header(gw_url)!r} (expected 'passthrough')")
            targets.append(("mw-lane", gw_url, "emu-lane", gw))
    if args.other_src:
        other = start_modelwire(b, emu.port, name="mw-other", src=str(Path(args.other_src).resolve() / "src"))
        if other is not None:
            print(f"  mw-other: modelwire serve from {args.other_src}")
            targets.append(("mw-other", f"http://127.0.0.1:{other.port}/v1/chat/completions", "emu", other))
    elif args.other_python:
        other = start_modelwire(b, emu.port, args.other_python, name="mw-other")
        if other is not None:
            probe = subprocess.run([args.other_python, "-c", "import uvloop, httptools"], capture_output=True,
                                   check=False, timeout=60)
            print(f"  mw-other: modelwire serve under {args.other_python}, Python {interpreter(args.other_python)} "
                  f"(uvloop + httptools {'found' if probe.returncode == 0 else 'NOT found'})")
            targets.append(("mw-other", f"http://127.0.0.1:{other.port}/v1/chat/completions", "emu", other))
    lite_exe = None if args.no_litellm else find_litellm(args.litellm)
    if lite_exe is None and not args.no_litellm:
        print("  LiteLLM proxy column skipped: no `litellm` with its proxy extra (see bench/README.md)")
    cells: list[Cell] = []
    paired: dict[bool, dict[str, dict[str, Any]]] = {}
    b.repin(emu, "client")
    for name, url, model, server in targets[1:]:
        warm_up(b, name, url, model, server, emu)
    steal0 = steal_ticks()
    for stream in (False, True):
        if args.interleave == "all":
            paired[stream] = run_paired(b, bases + [(n, u, m) for n, u, m, _ in targets[1:]],
                                        (len(targets) + 1) * seconds, stream)
            continue
        # each target alternated with its own direct run: one server at a time on the
        # server core, as in a deployment (with all of them interleaved, each server's
        # caches are evicted by the others between two of its requests). The time is cut
        # into --blocks rounds over the targets: a slow spell of the host (they last tens
        # of seconds on a shared machine) then falls on every target, not on one
        paired[stream] = {}
        for _ in range(max(1, args.blocks)):
            for name, url, model, _server in targets[1:]:
                pair = run_paired(b, [*bases, (name, url, model)], 3 * seconds / max(1, args.blocks), stream)
                _pool_into(paired[stream], name, pair[name])
                _pool_into(paired[stream], f"direct (with {name})", pair["direct"])
                _pool_into(paired[stream], f"local (with {name})", pair["local"])
    steal1 = steal_ticks()
    # the host's share: time the vCPUs were ready and the host ran another tenant (slow
    # spells with steal are the host's; spells without it are its caches and memory)
    steal_note = (f"host steal {100 * (steal1[0] - steal0[0]) / (steal1[1] - steal0[1]):.1f}% of the cores' time"
                  if steal1[1] > steal0[1] else "host steal unknown")
    for name, url, model, server in targets:
        # the raw floor and the C hop are latency references: one upstream connection per
        # client connection (socat: a process per client), so they are not measured under load
        cells += _target_cells(b, name, url, model, server, emu,
                               [1] if name in ("raw-floor", "c-hop") else concs, seconds)
    if lite_exe:
        lite = start_litellm(b, emu.port, lite_exe)
        if lite is not None:
            print(f"  LiteLLM proxy: {lite_exe} (RSS idle {lite.rss():.0f} MiB), Python "
                  f"{interpreter(str(Path(lite_exe).with_name('python')))}")
            lite_url = f"http://127.0.0.1:{lite.port}/v1/chat/completions"
            b.repin(emu, "client")
            warm_up(b, "litellm", lite_url, "emu", lite, emu)
            for stream in (False, True):
                extra = run_paired(b, [*bases, ("litellm", lite_url, "emu")], 3 * seconds, stream)
                paired[stream]["litellm"] = extra["litellm"]
                paired[stream]["direct (with litellm)"] = extra["direct"]
                paired[stream]["local (with litellm)"] = extra["local"]
            cells += _target_cells(b, "litellm", lite_url, "emu", lite, emu, concs, seconds)
            b.stop(lite)
    how = ("all targets interleaved request by request" if args.interleave == "all" else
           "each target interleaved request by request with its own direct run")
    print(f"\nconcurrency 1, {how} (+ columns: added over that direct run, ms; LiteLLM always has"
          " its own direct run). direct: an upstream on the server core (one core crossing each way,"
          " like each hop through a proxy); local: an upstream on the load generator's core (no"
          " crossing at all: the baseline of earlier runs); own: modelwire's own time by its"
          " x-modelwire-overhead-ms header (its handler before the upstream send and after the answer);"
          f" {steal_note} during these runs")
    rows = []
    for stream in (False, True):
        rows += paired_rows(paired[stream], stream)
    print(table(PAIRED_HEAD, rows))
    for conc in concs:
        print(f"\nconcurrency {conc}  (+ columns: added over direct, ms; CPU% of one core)")
        rows = []
        for stream in (False, True):
            direct = next((c for c in cells if (c.target, c.conc, c.stream) == ("direct", conc, stream)), None)
            rows += [cell_row(c, direct) for c in cells if c.conc == conc and c.stream == stream]
        print(table(HEAD, rows))
    for target in ("modelwire", "mw-lane", "mw-other"):
        if any(c.target == target for c in cells):
            print(f"\nGoals (issue 7, 1 worker) for {target}:")
            for line in goals(cells, paired, target):
                print(line)
    if args.soak and gw is not None:
        soak(b, gw, args.soak)
    return 0


def warm_up(b: Bench, name: str, url: str, model: str, server: Proc | None, emu: Proc) -> None:
    """Discarded load: servers import and build things on their first requests (modelwire's
    Client, LiteLLM's router), which is not steady-state cost."""
    for stream in (False, True):
        run_cell(b, name, url, model, 8, stream, 1.0, server, [emu])


def _target_cells(b: Bench, name: str, url: str, model: str, server: Proc | None, emu: Proc,
                  concs: list[int], seconds: float) -> list[Cell]:
    # the server under test gets its own core; for "direct" that is the upstream itself
    b.repin(emu, "server" if server is None else "client")
    warm_up(b, name, url, model, server, emu)
    out = []
    for conc in concs:
        for stream in (False, True):
            cell = run_cell(b, name, url, model, conc, stream, seconds, server, [emu])
            out.append(cell)
            r = cell.res
            print(f"  {name:9} c={conc:<3} {'stream' if stream else 'json  '} {r['ok'] / r['seconds']:8.0f} req/s "
                  f"err {r['errors']} stall {r['stalls']} {r['error'] or ''}", flush=True)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
