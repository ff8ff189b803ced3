"""The gateway's own cost per request, without sockets: CPU time and bytecodes.

Run: ``.venv/bin/python bench/gateway_path.py [--turns N] [--requests N] [--by]``;
``--other-src DIR`` runs it for this checkout and another (DIR/src) and prints both.

``bench/gateway.py`` measures the gateway as deployed, and at concurrency 1 most of what
it sees is the machine's: sockets, wake-ups across cores, cold caches after each wait,
and a shared host's slow spells (its numbers move by 10-20% between runs). This script
isolates the gateway's Python: one process, the gateway's own HTTP protocol fed the bytes
of an openai-SDK request (its 16 headers), the real app behind it, and each model's
Client with its real transport on a stand-in socket that answers, on the next turn of the
loop, with the bytes the benchmark's upstream sends (so the transport's pool, request head
and httptools parse are counted too). Per request it prints

* CPU µs: the best of 7 runs (``time.process_time``), still subject to the host's speed;
* bytecodes: instructions the interpreter ran for one request, counted with a trace
  function: the same on any machine and in any run, so a change's effect on the work done
  shows exactly (a C call counts as one, so compare it with the CPU figure too), split
  into the three parts of a request: up to the upstream write, from the upstream's answer
  to the write to the client (these two are the latency a client sees), and after it
  (hidden at concurrency 1: the client is still reading).

Two models: ``emu`` (the translating path: decode, Client, encode) and ``emu-lane`` (the
same-protocol lane: the client's bytes forwarded). ``--turns N`` sends an agent's
conversation as ``bench/gateway.py --turns`` does; ``--by`` lists the functions that ran
the most bytecodes; ``--stream`` sends streamed requests (a 20-chunk answer whose first event
comes in one read and the rest in the next: "back to the client" then ends at the first
event's write, the part a client's time to first byte waits for).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gateway as bench_gateway  # this directory's gateway.py
from _upstream import json_answer, stream_events

ANSWER = json_answer()
ANSWER_WIRE = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
               b"connection: keep-alive\r\n\r\n" % len(ANSWER)) + ANSWER
# --stream: the benchmark upstream's streamed answer (20 chunks), its head and first event
# in one read, the rest in a later one
EVENTS = stream_events(20)
STREAM_WIRE = [(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n"
                b"connection: keep-alive\r\n\r\n" % sum(map(len, EVENTS))) + EVENTS[0], b"".join(EVENTS[1:])]
STREAM = False
METRICS_OFF = ""  # --metrics off: ", metrics: {enabled: false}" in the gateway's config
# --teams: teams on (SQLite store in the work folder) and every request sent with a virtual
# key that has a budget, rpm and tpm, so each request is looked up, admitted and settled
TEAMS = False
# what the openai Python SDK sends (its x-stainless-* set), in its order
SDK_HEADERS = [
    ("host", "127.0.0.1:4000"), ("accept-encoding", "gzip, deflate"), ("connection", "keep-alive"),
    ("accept", "application/json"), ("content-type", "application/json"), ("user-agent", "OpenAI/Python 1.99.0"),
    ("x-stainless-lang", "python"), ("x-stainless-package-version", "1.99.0"), ("x-stainless-os", "Linux"),
    ("x-stainless-arch", "x64"), ("x-stainless-runtime", "CPython"), ("x-stainless-runtime-version", "3.11.7"),
    ("authorization", "Bearer sk-bench"), ("x-stainless-async", "false"), ("x-stainless-retry-count", "0"),
    ("x-stainless-read-timeout", "600"),
]


class _StubSocket:
    """What an asyncio protocol asks of its transport, beside ``write``: never closing,
    reading never paused."""

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class _Socket(_StubSocket):
    """The gateway protocol's transport: keeps the last write, wakes the waiting request."""

    def __init__(self) -> None:
        self.done: asyncio.Future[None] | None = None
        self.first = b""  # the answer's first write: its head

    def write(self, data: bytes) -> None:
        _phase.mark(2)
        if not self.first:
            self.first = data
        # a JSON answer is one write; a stream's last write ends the chunked body
        if self.done is not None and not self.done.done() and (not STREAM or data.endswith(b"0\r\n\r\n")):
            self.done.set_result(None)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name in ("sockname", "peername") else default

    def close(self) -> None:
        pass


class _UpstreamSocket(_StubSocket):
    """The socket under the Client's own HTTP/1.1 connection: each request written to it is
    answered, on the next turn of the loop, with the bytes the benchmark's upstream sends;
    so the transport's Python (pool, request head, httptools parse) is counted too."""

    def __init__(self, conn: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._conn = conn
        self._loop = loop

    def write(self, data: bytes) -> None:
        _phase.mark(1)
        if STREAM:
            self._loop.call_soon(self._first)
        else:
            self._loop.call_soon(self._conn.data_received, ANSWER_WIRE)

    def _first(self) -> None:
        self._conn.data_received(STREAM_WIRE[0])
        self._loop.call_soon(self._conn.data_received, STREAM_WIRE[1])

    def abort(self) -> None:
        raise SystemExit("the gateway dropped its upstream connection")

    close = abort


def _plug_upstream(client: Any, base_url: str, loop: asyncio.AbstractEventLoop) -> None:
    """Give the model's Client one kept-alive upstream connection on a stand-in socket."""
    try:
        from modelwire.transport.h1 import H1Conn
    except ImportError:  # a tree from before transport/ was a package
        from modelwire._h1 import H1Conn  # type: ignore[no-redef]

    transport = client._transport
    pool, _prefix = transport._route(base_url)
    conn = H1Conn(loop)
    conn.connection_made(_UpstreamSocket(conn, loop))
    conn.idle_since = loop.time()
    pool._idle.append(conn)


class _Phases:
    """Which part of a request the interpreter is in: 0 up to the upstream write, 1 from
    there to the answer's write to the client, 2 after it (hidden at concurrency 1: the
    client is still reading). An instance, not class attributes: setting a class's
    attribute invalidates its type's lookup cache, which showed in the instruction count."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0

    def mark(self, phase: int) -> None:
        if phase == self.now + 1:
            self.now = phase


_phase = _Phases()


def _request_bytes(model: str) -> bytes:
    body = json.dumps({"model": model, **bench_gateway.CONVERSATION, "max_tokens": bench_gateway.MAX_TOKENS,
                       **({"stream": True} if STREAM else {})}).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in SDK_HEADERS
                   if not (TEAMS and k == "authorization"))
    if TEAMS:
        head += f"authorization: Bearer {_TEAMS_KEY}\r\n"
    return f"POST /v1/chat/completions HTTP/1.1\r\n{head}content-length: {len(body)}\r\n\r\n".encode() + body


async def _gateway(workdir: Path, model: str) -> tuple[Any, bool, Any]:
    """The gateway in this process, warmed up: (one request, whether it took the lane,
    the lifespan to shut down)."""
    import uvicorn
    from uvicorn.lifespan.on import LifespanOn
    from uvicorn.server import ServerState

    from modelwire.config import load_config
    from modelwire.gateway import create_app
    from modelwire.gateway.h1server import GatewayHTTP

    cfg = workdir / "modelwire.yaml"
    # the base URL is never connected to: the stand-in transport answers
    cfg.write_text("models:\n  emu: {provider: emulator, model: emulator-1, base_url: 'http://127.0.0.1:9/v1'}\n"
                   "  emu-lane: {provider: openai, model: emulator-1, base_url: 'http://127.0.0.1:9/v1', "
                   "api_key_env: MW_BENCH_KEY}\ndefault_model: emu\n"
                   f"gateway: {{access_log: false{METRICS_OFF}}}\n"
                   + (f"teams: {{enabled: true, store: 'sqlite:///{workdir}/state.db'}}\n"
                      "prices: {'emulator/emulator-1': {input: 1, output: 2}, "
                      "'openai/emulator-1': {input: 1, output: 2}}\n" if TEAMS else ""))
    if TEAMS:
        _make_key(cfg)
    app = create_app(load_config(str(cfg)))
    config = uvicorn.Config(app, http=GatewayHTTP, lifespan="on", log_level="critical", proxy_headers=False)
    config.load()
    lifespan = LifespanOn(config)
    await lifespan.startup()
    loop = asyncio.get_running_loop()
    proto = GatewayHTTP(config, ServerState(), {}, loop)
    sock = _Socket()
    proto.connection_made(sock)
    wire = _request_bytes(model)

    async def one() -> None:
        _phase.now = 0
        sock.done = loop.create_future()
        sock.first = b""
        proto.data_received(wire)
        await sock.done

    gateway = app.state.gateway
    _plug_upstream(gateway.client(model), "http://127.0.0.1:9/v1", loop)  # the shared client
    for _ in range(500):
        await one()
    if not sock.first.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"{model}: the gateway did not answer 200: {sock.first[:300]!r}")
    return one, b"x-modelwire-lane: passthrough" in sock.first, lifespan


_TEAMS_KEY = ""


def _make_key(cfg: Path) -> None:
    """--teams: one virtual key (made once per work folder) that no request will exhaust."""
    global _TEAMS_KEY
    if _TEAMS_KEY:
        return
    from modelwire.config import load_config
    from modelwire.teams.admin import KeyAdmin
    from modelwire.teams.backends import open_store, store_url

    store = open_store(store_url(load_config(str(cfg))))
    _key, _TEAMS_KEY = KeyAdmin(store).create_key(
        {"name": "bench", "budget": "1000000000/month", "rpm": 10**9, "tpm": 10**12})
    store.close()


# --cold: the simulated last-level cache, and what is read between two requests so that it
# holds none of the path's lines
COLD_LL = 4 << 20
COLD_FLUSH = 2 * COLD_LL


async def _count(workdir: Path, model: str, n: int, cold: bool) -> None:
    """Under callgrind: its counters zeroed on entering zlib's ``adler32`` and dumped on
    entering its ``crc32`` (options given by :func:`_instructions`), which nothing on the
    gateway's path calls, so the dump holds exactly ``n`` requests. ``cold``: before each
    request a buffer twice the simulated cache's size is read by ``bytearray.rfind``, whose
    C function (``_Py_bytes_rfind``) callgrind is told not to count: the cache starts
    every request empty of it, as a request does at concurrency 1 on a shared host."""
    import zlib

    one, _lane, lifespan = await _gateway(workdir, model)
    flush = bytearray(COLD_FLUSH if cold else 0)
    zlib.adler32(b"")
    for _ in range(n):
        if cold:
            flush.rfind(1)
        await one()
    zlib.crc32(b"")
    await lifespan.shutdown()


async def _measure(workdir: Path, model: str, n: int, by: bool) -> None:
    one, lane, lifespan = await _gateway(workdir, model)
    best = float("inf")
    for _ in range(7):
        start = time.process_time()
        for _ in range(n):
            await one()
        best = min(best, (time.process_time() - start) / n)

    counts: collections.Counter[tuple[int, str]] = collections.Counter()

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
        elif event == "opcode":
            code = frame.f_code
            counts[(_phase.now, f"{Path(code.co_filename).name}:{code.co_name}")] += 1
        return trace

    traced = 100
    sys.settrace(trace)
    try:
        for _ in range(traced):
            await one()
    finally:
        sys.settrace(None)
    total = sum(counts.values()) / traced
    path = "lane" if lane else "translating"
    phases = [sum(n for (phase, _), n in counts.items() if phase == p) / traced for p in range(3)]
    print(f"  {model:9} ({path:11}) {best * 1e6:7.1f} µs CPU, {total:7,.0f} bytecodes per request"
          f" ({phases[0]:,.0f} to the upstream, {phases[1]:,.0f} back to the client, {phases[2]:,.0f} after)")
    if by:
        for (phase, name), count in counts.most_common(int(os.environ.get("MW_TOP", "30"))):
            print(f"      {count / traced:8,.1f}  {('to', 'back', 'after')[phase]:5} {name}")
    await lifespan.shutdown()


def _instructions(python: str, model: str, n: int, turns: int, workdir: Path, cold: bool = False) -> str:
    """Machine instructions per request (interpreter and C extensions alike), counted by
    valgrind's callgrind over ``n`` requests in a child process: the same count in every
    run whatever the host is doing, and unlike bytecodes it weighs a C call by its work.
    ``cold``: with callgrind's cache simulation, each request starting from a cache that
    holds none of its lines; then it counts the 64-byte lines a request brings in from
    memory (instruction and data, the simulated last level's misses): what a request costs
    at concurrency 1 when the host has emptied the caches, the same in every run too."""
    import shutil
    import subprocess
    import sysconfig

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return "no valgrind on PATH"
    out = workdir / f"cg-{model}.out"
    here = Path(__file__).resolve()
    # a PYTHONPATH given first (--other-src's tree), else this checkout's src
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    paths = [*given, str(here.parent.parent / "src"), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    sim = ["--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", f"--LL={COLD_LL},16,64",
           "--toggle-collect=_Py_bytes_rfind", "--collect-atstart=yes"] if cold else []
    argv = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", "--zero-before=zlib_adler32",
            "--dump-before=zlib_crc32", *sim, python, str(here), "--turns", str(turns), "--_count", model, str(n),
            *(["--stream"] if STREAM else []), *(["--cold"] if cold else []),
            *(["--metrics", "off"] if METRICS_OFF else []), *(["--teams"] if TEAMS else [])]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800, check=False)
    dumps = list(workdir.glob(f"{out.name}.*"))
    if done.returncode != 0 or len(dumps) != 1:
        tail = " ".join(done.stderr.strip().splitlines()[-2:])[-300:]
        why = tail if done.returncode != 0 else (
            f"callgrind saw no zlib_adler32 / zlib_crc32 in {python} (a stripped build?); pass an "
            "interpreter of the same Python version built with symbols, e.g. pyenv's" if not dumps else
            f"{len(dumps)} dumps: something on the path calls zlib.crc32")
        return f"not counted: {why}"
    dump = dumps[0]
    names: list[str] = []
    for line in dump.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        if line.startswith("summary:"):  # the dump's cost, as callgrind_annotate shows it
            got = dict(zip(names, (int(v) / n for v in line.split()[1:])))
            if not cold:
                return f"{got['Ir']:,.0f} instructions per request"
            lines = got["ILmr"] + got["DLmr"] + got["DLmw"]
            return (f"{lines:,.0f} lines from memory per request, cold ({got['ILmr']:,.0f} code, "
                    f"{got['DLmr'] + got['DLmw']:,.0f} data; {got['I1mr'] + got['D1mr'] + got['D1mw']:,.0f} "
                    f"first-level misses, {got['Ir']:,.0f} instructions)")
    return f"not counted: no summary in {dump}"


def _side_by_side(other: Path, metrics: str) -> int:
    """This script's run for this checkout, then for ``other``, and the figures' ratios
    (``other`` runs with ``--metrics legacy``: an older tree's config has no metrics key)."""
    import re
    import subprocess

    argv: list[str] = []  # this run's options, but --other-src and --metrics
    rest = iter(sys.argv[1:])
    for arg in rest:
        if arg in ("--other-src", "--metrics"):
            next(rest, None)
        elif not arg.startswith(("--other-src=", "--metrics=")):
            argv.append(arg)
    here = Path(__file__).resolve()
    runs = []
    for label, src, extra in (("this checkout", here.parent.parent / "src", ["--metrics", metrics]),
                              (f"other: {other}", other, ["--metrics", "legacy"])):
        out = subprocess.run([sys.executable, str(here), *argv, *extra], capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONPATH": str(src)}).stdout
        print(f"=== {label}\n{out}")
        runs.append({m[1]: (float(m[2]), float(m[3].replace(",", ""))) for m in re.finditer(
            r"^  (\S+)\s.*?([\d.]+) µs CPU,\s+([\d,]+) bytecodes", out, re.MULTILINE)})
    print("side by side (this checkout / other)")
    for model, (cpu, codes) in runs[0].items():
        if model in runs[1]:
            o_cpu, o_codes = runs[1][model]
            print(f"  {model:9} CPU {cpu:7.1f} / {o_cpu:7.1f} µs = {cpu / o_cpu:.3f}   "
                  f"bytecodes {codes:7,.0f} / {o_codes:7,.0f} = {codes / o_codes:.3f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=0, help="an agent's conversation of N exchanges (default 0)")
    ap.add_argument("--requests", type=int, default=2000, help="requests per timed run (default 2000)")
    ap.add_argument("--by", action="store_true", help="list the functions that ran the most bytecodes")
    ap.add_argument("--stream", action="store_true",
                    help="streamed requests: a 20-chunk answer, its first event in one read and the rest "
                         "in the next (the part 'back to the client' then ends at the first event's write)")
    ap.add_argument("--instructions", nargs="?", const=sys.executable, metavar="PYTHON",
                    help="count machine instructions per request under valgrind instead (slow: minutes), "
                         "with PYTHON (default this one; it needs its symbols: distributions strip theirs)")
    ap.add_argument("--cold", action="store_true",
                    help="with --instructions: count the cache lines each request brings in from memory "
                         "when it starts with none of them cached (callgrind's cache simulation)")
    ap.add_argument("--metrics", choices=("on", "off", "legacy"), default="on",
                    help="the gateway's Prometheus metrics (default on, as on loopback); a source "
                         "tree from before metrics takes neither")
    ap.add_argument("--other-src", metavar="DIR",
                    help="first run the same measurement with the modelwire of DIR/src (an older "
                         "checkout), for a side-by-side comparison")
    ap.add_argument("--teams", action="store_true",
                    help="teams on: each request carries a virtual key with a budget, rpm and tpm "
                         "(looked up, admitted, settled, its spend row written in batches)")
    ap.add_argument("--_count", nargs=2, metavar=("MODEL", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.other_src:
        return _side_by_side(Path(args.other_src).resolve() / "src", args.metrics)
    if args.cold and not args.instructions:
        ap.error("--cold counts cache lines under callgrind: give --instructions [PYTHON] too")
    global STREAM, METRICS_OFF, TEAMS
    STREAM = args.stream
    TEAMS = args.teams
    if args.metrics == "off":
        METRICS_OFF = ", metrics: {enabled: false}"
    bench_gateway.CONVERSATION = bench_gateway.conversation(max(0, args.turns))
    os.environ.setdefault("MW_BENCH_KEY", "sk-bench")
    os.environ["MODELWIRE_GATEWAY_KEYS"] = ""
    try:
        import uvloop

        run = uvloop.run
    except ImportError:
        run = asyncio.run  # type: ignore[assignment]
    messages = len(bench_gateway.CONVERSATION["messages"])
    with tempfile.TemporaryDirectory(prefix="mw-bench-path-") as tmp:
        if args._count:  # the child of --instructions, under valgrind
            run(_count(Path(tmp), args._count[0], int(args._count[1]), args.cold))
            return 0
        print(f"the gateway's path in one process, no sockets ({messages} message(s), an openai-SDK request):")
        for model in ("emu", "emu-lane"):
            if args.instructions:
                n = min(args.requests, 200)
                print(f"  {model:9} {_instructions(args.instructions, model, n, args.turns, Path(tmp), args.cold)} "
                      f"(callgrind, {n} requests, {args.instructions})")
            else:
                run(_measure(Path(tmp), model, max(1, args.requests), args.by))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
