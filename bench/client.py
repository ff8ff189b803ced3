"""modelwire's Client against raw HTTP clients, the official SDKs and LiteLLM.

Run: ``.venv/bin/python bench/client.py [--quick]``. Not a test: it prints numbers.

Every contender talks to the same loopback server, which runs in a *separate
process* so that the CPU measured here (``time.process_time``) is the client's
own: building the request, HTTP, parsing, and for modelwire the conversion into
the internal model and back. Phases:

1. sequential sync requests (non-streaming): p50/p99 latency, CPU per request;
2. 32 concurrent async requests: throughput, CPU per request;
3. streams of 2,000 SSE events: CPU per event, conversion included;
4. the first request vs later ones (fresh process), after constructing a ``Client`` and
   calling ``client.warm()`` (a checkout whose Client has no ``warm()`` warmed up in its
   constructor: its "warm" column is then ~0).

``--only 4`` runs only part 4 (any digits pick parts). ``--other-src DIR`` runs the same
parts for this checkout and for another one (its DIR/src, e.g. a worktree of the commit
before a change), each in a process of its own against the same server, and prints their
ratios side by side.

Goals (issue 4): CPU per request <= 1.5x raw httpx (and >= 5x less than LiteLLM);
async throughput >= 0.5x raw aiohttp; stream CPU per event <= 2x raw; first request
<= 2x a later one. A contender that is not installed is skipped, and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHUNKS = 2000
MSGS = [{"role": "user", "content": "Say hello in one short sentence."}]
KEY = "sk-bench-0000000000000000"

# ----------------------------------------------------------------- the server
_CHAT = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "bench-1",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there! " * 8},
                 "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 24, "total_tokens": 36},
}).encode()
_ANTHROPIC = json.dumps({
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "bench-1",
    "content": [{"type": "text", "text": "Hello there! " * 8}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 24},
}).encode()


def _chat_sse() -> bytes:
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
            "model": "bench-1"}
    out = [b"data: " + json.dumps({**head, "choices": [{"index": 0, "delta": {
        "role": "assistant", "content": ""}, "finish_reason": None}]}).encode() + b"\n\n"]
    for i in range(CHUNKS):
        out.append(b"data: " + json.dumps({**head, "choices": [{"index": 0, "delta": {
            "content": f"tok{i} "}, "finish_reason": None}]}).encode() + b"\n\n")
    out.append(b"data: " + json.dumps({**head, "choices": [{"index": 0, "delta": {},
                                                            "finish_reason": "stop"}]}).encode()
               + b"\n\n")
    out.append(b"data: " + json.dumps({**head, "choices": [], "usage": {
        "prompt_tokens": 12, "completion_tokens": CHUNKS, "total_tokens": CHUNKS + 12}}).encode()
               + b"\n\n")
    return b"".join(out) + b"data: [DONE]\n\n"


def _anthropic_sse() -> bytes:
    def ev(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: ".encode() + json.dumps(data).encode() + b"\n\n"

    out = [ev("message_start", {"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "bench-1",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1}}}),
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "text", "text": ""}})]
    for i in range(CHUNKS):
        out.append(ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": f"tok{i} "}}))
    out += [ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ev("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": CHUNKS}}),
            ev("message_stop", {"type": "message_stop"})]
    return b"".join(out)


def _serve(port_out: Any) -> None:
    """A minimal keep-alive HTTP/1.1 server on asyncio (cheap, so the client dominates)."""
    chat_sse, anth_sse = _chat_sse(), _anthropic_sse()
    stream_re = re.compile(rb'"stream"\s*:\s*true')

    def response(path: bytes, body: bytes) -> bytes:
        anthropic = path.endswith(b"/messages")
        if stream_re.search(body):
            payload = anth_sse if anthropic else chat_sse
            # one chunk of the whole stream: chunked framing so clients parse it as a stream
            return (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n" + b"%x\r\n" % len(payload) + payload
                    + b"\r\n0\r\n\r\n")
        payload = _ANTHROPIC if anthropic else _CHAT
        return (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                + str(len(payload)).encode() + b"\r\n\r\n" + payload)

    from _upstream import KeepAliveHTTP

    class Proto(KeepAliveHTTP):
        def answer(self, request_line: list[str], body: bytes) -> None:
            assert self.transport is not None
            self.transport.write(response(request_line[1].encode(), body))

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Proto, "127.0.0.1", 0,
                                                                 backlog=256)
        port_out.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


# ---------------------------------------------------------------- measuring
def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def sync_phase(name: str, call: Callable[[], Any], n: int) -> dict[str, Any]:
    for _ in range(max(5, n // 10)):
        call()
    lat = []
    cpu0 = time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        lat.append(time.perf_counter() - t0)
    cpu = (time.process_time() - cpu0) / n
    return {"name": name, "p50_ms": statistics.median(lat) * 1e3, "p99_ms": _pct(lat, 0.99) * 1e3,
            "cpu_us": cpu * 1e6}


async def async_phase(name: str, call: Callable[[], Any], n: int, conc: int = 32) -> dict[str, Any]:
    for _ in range(conc):
        await call()
    sem = asyncio.Semaphore(conc)
    lat: list[float] = []

    async def one() -> None:
        async with sem:
            t0 = time.perf_counter()
            await call()
            lat.append(time.perf_counter() - t0)

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    wall = time.perf_counter() - wall0
    return {"name": name, "rps": n / wall, "p50_ms": statistics.median(lat) * 1e3,
            "p99_ms": _pct(lat, 0.99) * 1e3,
            "cpu_us": (time.process_time() - cpu0) / n * 1e6}


def stream_phase(name: str, run: Callable[[], int], n: int) -> dict[str, Any]:
    run()
    cpu0, events = time.process_time(), 0
    for _ in range(n):
        events += run()
    return {"name": name, "cpu_us_per_event": (time.process_time() - cpu0) / events * 1e6,
            "events": events // n}


def _row(result: dict[str, Any], keys: list[str]) -> str:
    return f"  {result['name']:<28}" + "".join(f"{k}={result[k]:>10.2f}  " for k in keys)


def _skip(name: str, why: str) -> None:
    print(f"  {name:<28}skipped: {why}")


# ------------------------------------------------------------------ contenders
def run_sync(base: str, n: int) -> dict[str, dict[str, Any]]:
    import httpx

    out: dict[str, dict[str, Any]] = {}
    body = json.dumps({"model": "bench-1", "messages": MSGS}).encode()
    raw = httpx.Client()
    url = base + "/v1/chat/completions"
    hdrs = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    out["raw httpx"] = sync_phase("raw httpx + json", lambda: json.loads(
        raw.post(url, content=body, headers=hdrs).content), n)

    from modelwire import Client

    mw = Client("custom/bench-1", base_url=base + "/v1", api_mode="chat_completions",
                api_key=KEY)
    out["modelwire"] = sync_phase("modelwire Client (chat)", lambda: mw.complete(MSGS), n)
    mwa = Client("custom/bench-1", base_url=base, api_mode="anthropic_messages", api_key=KEY)
    out["modelwire-anthropic"] = sync_phase("modelwire Client (anthropic)",
                                            lambda: mwa.complete(MSGS, max_tokens=64), n)
    _sdks_sync(base, n, out)
    return out


def _sdks_sync(base: str, n: int, out: dict[str, dict[str, Any]]) -> None:
    try:
        import openai

        oc = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        out["openai"] = sync_phase("openai SDK", lambda: oc.chat.completions.create(
            model="bench-1", messages=MSGS), n)
    except ImportError:
        _skip("openai SDK", "not installed")
    try:
        import anthropic

        ac = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
        out["anthropic"] = sync_phase("anthropic SDK", lambda: ac.messages.create(
            model="bench-1", messages=MSGS, max_tokens=64), n)
    except ImportError:
        _skip("anthropic SDK", "not installed")
    try:
        # the bundled price map: LiteLLM otherwise fetches it from GitHub at import
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        out["litellm"] = sync_phase("LiteLLM", lambda: litellm.completion(
            model="openai/bench-1", api_base=base + "/v1", api_key=KEY, messages=MSGS,
            num_retries=0), max(50, n // 5))
    except ImportError:
        _skip("LiteLLM", "not installed (pip install modelwire[bench])")


async def run_async(base: str, n: int) -> dict[str, dict[str, Any]]:
    import aiohttp

    out: dict[str, dict[str, Any]] = {}
    body = json.dumps({"model": "bench-1", "messages": MSGS}).encode()
    hdrs = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    url = base + "/v1/chat/completions"
    async with aiohttp.ClientSession() as session:
        async def raw() -> Any:
            async with session.post(url, data=body, headers=hdrs) as resp:
                return json.loads(await resp.read())

        out["raw aiohttp"] = await async_phase("raw aiohttp + json", raw, n)

    from modelwire import AsyncClient

    async with AsyncClient("custom/bench-1", base_url=base + "/v1",
                           api_mode="chat_completions", api_key=KEY) as mw:
        out["modelwire"] = await async_phase("modelwire AsyncClient", lambda: mw.complete(MSGS), n)
    import httpx

    async with httpx.AsyncClient() as hx:
        async def rawx() -> Any:
            return json.loads((await hx.post(url, content=body, headers=hdrs)).content)

        out["raw httpx async"] = await async_phase("raw httpx.AsyncClient", rawx, max(200, n // 4))
    try:
        import openai

        async with openai.AsyncOpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0) as oc:
            out["openai"] = await async_phase(
                "openai AsyncOpenAI",
                lambda: oc.chat.completions.create(model="bench-1", messages=MSGS),
                max(200, n // 4))
    except ImportError:
        _skip("openai AsyncOpenAI", "not installed")
    return out


def run_streams(base: str, n: int) -> dict[str, dict[str, Any]]:
    import httpx

    out: dict[str, dict[str, Any]] = {}
    body = json.dumps({"model": "bench-1", "messages": MSGS, "stream": True}).encode()
    hdrs = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    raw = httpx.Client()

    def raw_stream() -> int:
        count = 0
        with raw.stream("POST", base + "/v1/chat/completions", content=body,
                        headers=hdrs) as resp:
            for line in resp.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
                    count += 1
        return count

    out["raw"] = stream_phase("raw httpx iter_lines+json", raw_stream, n)

    from modelwire import Client
    from modelwire.events import TextDelta

    for mode, base_url, label in (("chat_completions", base + "/v1", "modelwire stream (chat)"),
                                  ("anthropic_messages", base, "modelwire stream (anthropic)")):
        mw = Client("custom/bench-1", base_url=base_url, api_mode=mode, api_key=KEY)

        def mw_stream(mw: Any = mw) -> int:
            return sum(1 for e in mw.stream(MSGS, max_tokens=64) if type(e) is TextDelta)

        out[f"modelwire-{mode}"] = stream_phase(label, mw_stream, n)
    out["raw aiohttp"] = asyncio.run(_raw_aiohttp_stream(base, body, hdrs, n))
    out["modelwire async"] = asyncio.run(_mw_async_stream(base, n))
    _sdk_streams(base, n, out)
    return out


async def _raw_aiohttp_stream(base: str, body: bytes, hdrs: dict[str, str], n: int) -> Any:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async def once() -> int:
            count = 0
            async with session.post(base + "/v1/chat/completions", data=body,
                                    headers=hdrs) as resp:
                async for line in resp.content:
                    if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                        json.loads(line[6:])
                        count += 1
            return count

        await once()
        cpu0, events = time.process_time(), 0
        for _ in range(n):
            events += await once()
        return {"name": "raw aiohttp lines+json", "events": events // n,
                "cpu_us_per_event": (time.process_time() - cpu0) / events * 1e6}


async def _mw_async_stream(base: str, n: int) -> Any:
    from modelwire import AsyncClient
    from modelwire.events import TextDelta

    async with AsyncClient("custom/bench-1", base_url=base + "/v1", api_mode="chat_completions",
                           api_key=KEY) as mw:
        async def once() -> int:
            return sum([1 async for e in mw.stream(MSGS) if type(e) is TextDelta])

        await once()
        cpu0, events = time.process_time(), 0
        for _ in range(n):
            events += await once()
        return {"name": "modelwire AsyncClient stream", "events": events // n,
                "cpu_us_per_event": (time.process_time() - cpu0) / events * 1e6}


def _sdk_streams(base: str, n: int, out: dict[str, dict[str, Any]]) -> None:
    try:
        import openai

        oc = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)

        def o_stream() -> int:
            return sum(1 for c in oc.chat.completions.create(model="bench-1", messages=MSGS,
                                                             stream=True)
                       if c.choices and c.choices[0].delta.content)

        out["openai"] = stream_phase("openai SDK stream", o_stream, max(2, n // 4))
    except ImportError:
        _skip("openai SDK stream", "not installed")
    try:
        import anthropic

        ac = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)

        def a_stream() -> int:
            with ac.messages.stream(model="bench-1", messages=MSGS, max_tokens=64) as s:
                return sum(1 for _ in s.text_stream)

        out["anthropic"] = stream_phase("anthropic SDK stream", a_stream, max(2, n // 4))
    except ImportError:
        _skip("anthropic SDK stream", "not installed")
    try:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        def l_stream() -> int:
            resp = litellm.completion(model="openai/bench-1", api_base=base + "/v1",
                                      api_key=KEY, messages=MSGS, stream=True, num_retries=0)
            return sum(1 for c in resp if c.choices and c.choices[0].delta.content)

        out["litellm"] = stream_phase("LiteLLM stream", l_stream, 1)
    except ImportError:
        _skip("LiteLLM stream", "not installed (pip install modelwire[bench])")


# Part 4 scripts print wall and CPU seconds (perf_counter, process_time) for: import,
# construction, warm(), the first request, the median of the 50 requests after it. The
# goal is on wall time (what a caller waits); CPU time is printed too because this
# machine is shared and wall time there mostly measures the queue for a core.
_FIRST = """
import time, sys
def clocks(): return time.perf_counter(), time.process_time()
def since(t): w, c = clocks(); return [w - t[0], c - t[1]]
t = clocks(); import modelwire; t_import = since(t)
from modelwire import Client
t = clocks()
c = Client("custom/bench-1", base_url=sys.argv[1] + "/v1", api_mode="chat_completions",
           api_key="sk-bench-0000000000000000")
t_construct = since(t)
t = clocks(); getattr(c, "warm", lambda: None)(); t_warm = since(t)
msgs = [{"role": "user", "content": "hi"}]
t = clocks(); c.complete(msgs); first = since(t)
later = []
for _ in range(50):
    t = clocks(); c.complete(msgs); later.append(since(t))
mid = len(later) // 2
later = [sorted(x[0] for x in later)[mid], sorted(x[1] for x in later)[mid]]
print(*t_import, *t_construct, *t_warm, *first, *later)
"""


_FIRST_RAW = """
import json, sys, time
def clocks(): return time.perf_counter(), time.process_time()
def since(t): w, c = clocks(); return [w - t[0], c - t[1]]
t = clocks(); import httpx; t_import = since(t)
t = clocks(); c = httpx.Client(); t_construct = since(t)
t_warm = [0.0, 0.0]
body = json.dumps({"model": "bench-1", "messages": [{"role": "user", "content": "hi"}]}).encode()
url = sys.argv[1] + "/v1/chat/completions"
def call():
    return json.loads(c.post(url, content=body, headers={"content-type": "application/json"}).content)
t = clocks(); call(); first = since(t)
later = []
for _ in range(50):
    t = clocks(); call(); later.append(since(t))
mid = len(later) // 2
later = [sorted(x[0] for x in later)[mid], sorted(x[1] for x in later)[mid]]
print(*t_import, *t_construct, *t_warm, *first, *later)
"""
_PHASES = ("import", "construct", "warm", "first", "later")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")  # --src moves it


def first_request(base: str, script: str = _FIRST, runs: int = 9) -> dict[str, tuple[float, float]]:
    """Medians over ``runs`` fresh processes: phase -> (wall s, CPU s)."""
    env = dict(os.environ, PYTHONPATH=SRC)
    rows = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", script, base], capture_output=True,
                             text=True, check=True, env=env)
        rows.append([float(x) for x in out.stdout.split()])
    med = [statistics.median(r[i] for r in rows) for i in range(2 * len(_PHASES))]
    return {name: (med[2 * k], med[2 * k + 1]) for k, name in enumerate(_PHASES)}


def report_first(base: str, runs: int) -> tuple[float, float]:
    print(f"\n4. first request after constructing a Client and an explicit client.warm() "
          f"(fresh processes, medians of {runs}; wall ms / CPU ms)")
    rows = {"modelwire": first_request(base, _FIRST, runs),
            "raw httpx": first_request(base, _FIRST_RAW, runs)}
    for name, r in rows.items():
        print(f"  {name:<10}" + "  ".join(f"{k} {r[k][0] * 1e3:.2f}/{r[k][1] * 1e3:.2f}"
                                          for k in _PHASES)
              + f"  first/later {r['first'][0] / r['later'][0]:.2f}x wall, "
                f"{r['first'][1] / r['later'][1]:.2f}x CPU")
    mw, raw = rows["modelwire"], rows["raw httpx"]
    return mw["first"][0] / mw["later"][0], raw["first"][0] / raw["later"][0]


# ------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--only", default="1234", help="parts to run, e.g. 4 or 13")
    parser.add_argument("--other-src", metavar="DIR",
                        help="also run the parts for another checkout (its DIR/src), side by side")
    parser.add_argument("--base", help=argparse.SUPPRESS)  # a child of --other-src: the server
    parser.add_argument("--src", help=argparse.SUPPRESS)  # a child of --other-src: its src
    args = parser.parse_args()
    global SRC
    if args.src:
        SRC = args.src
    n_sync, n_async, n_stream = (200, 800, 5) if args.quick else (1000, 4000, 20)
    if args.base:
        report(args.base, n_sync, n_async, n_stream, args.only, 5 if args.quick else 9)
        return
    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    base = f"http://127.0.0.1:{ports.get(timeout=10)}"
    try:
        if args.other_src:
            side_by_side(base, args)
        else:
            report(base, n_sync, n_async, n_stream, args.only, 5 if args.quick else 9)
    finally:
        server.terminate()
        server.join(5)


def side_by_side(base: str, args: argparse.Namespace) -> None:
    """This checkout and ``--other-src``, each in a child process against ``base``; then
    every ratio of both, and how the other's compares."""
    ratios: list[dict[str, float]] = []
    other = str(Path(args.other_src).resolve() / "src")
    for label, src in (("this checkout", os.path.abspath(SRC)), (f"other: {other}", other)):
        cmd = [sys.executable, os.path.abspath(__file__), "--base", base, "--only", args.only,
               "--src", src] + (["--quick"] if args.quick else [])
        out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONPATH=src)).stdout
        print(f"=== {label}\n{out}")
        ratios.append({m[1].strip(): float(m[2]) for m in re.finditer(
            r"^  \s*(\S.*?)\s+(-?[\d.]+)x  goal", out, re.MULTILINE)})
    print("side by side (this checkout | other | this / other)")
    for label, mine in ratios[0].items():
        theirs = ratios[1].get(label)
        if theirs:
            print(f"  {label:<42}{mine:>7.2f}x {theirs:>7.2f}x  {mine / theirs:>6.2f}")


def report(base: str, n_sync: int, n_async: int, n_stream: int, only: str = "1234",
           runs: int = 9) -> None:
    print(f"loopback server in a separate process at {base}; {os.cpu_count()} CPUs")
    s: dict[str, Any] = {}
    a: dict[str, Any] = {}
    st: dict[str, Any] = {}
    first = None
    if "1" in only:
        print(f"\n1. sequential sync requests (n={n_sync})")
        s = run_sync(base, n_sync)
        for r in s.values():
            print(_row(r, ["p50_ms", "p99_ms", "cpu_us"]))
    if "2" in only:
        print(f"\n2. 32 concurrent async requests (n={n_async})")
        a = asyncio.run(run_async(base, n_async))
        for r in a.values():
            print(_row(r, ["rps", "p50_ms", "p99_ms", "cpu_us"]))
    if "3" in only:
        print(f"\n3. streams of {CHUNKS} SSE events (n={n_stream} streams each)")
        st = run_streams(base, n_stream)
        for r in st.values():
            print(_row(r, ["cpu_us_per_event"]))
    if "4" in only:
        first = report_first(base, runs)
    goals(s, a, st, first)


def goals(s: dict[str, Any], a: dict[str, Any], st: dict[str, Any],
          first: tuple[float, float] | None) -> None:
    print("\nratios and goals")
    checks = []
    if s:
        checks.append(("sync CPU/request vs raw httpx",
                       s["modelwire"]["cpu_us"] / s["raw httpx"]["cpu_us"], "<=", 1.5))
    if a:
        checks.append(("async throughput vs raw aiohttp",
                       a["modelwire"]["rps"] / a["raw aiohttp"]["rps"], ">=", 0.5))
    if st:
        checks += [
            ("stream CPU/event vs raw httpx (sync)",
             st["modelwire-chat_completions"]["cpu_us_per_event"] / st["raw"]["cpu_us_per_event"],
             "<=", 2.0),
            ("stream CPU/event vs raw aiohttp (async)",
             st["modelwire async"]["cpu_us_per_event"] / st["raw aiohttp"]["cpu_us_per_event"],
             "<=", 2.0),
        ]
    if first is not None:
        first_ratio, raw_first_ratio = first
        checks += [("first request vs later (wall)", first_ratio, "<=", 2.0),
                   ("  same ratio, relative to raw httpx's", first_ratio / raw_first_ratio,
                    "<=", 2.0)]
    if "litellm" in s:
        checks.append(("LiteLLM CPU/request vs modelwire",
                       s["litellm"]["cpu_us"] / s["modelwire"]["cpu_us"], ">=", 5.0))
    for label, value, op, goal in checks:
        ok = value <= goal if op == "<=" else value >= goal
        print(f"  {label:<42}{value:>7.2f}x  goal {op} {goal}x  {'ok' if ok else 'MISSED'}")
    for name in ("openai", "anthropic"):
        if name in s:
            print(f"  {name + ' SDK CPU/request vs modelwire':<42}"
                  f"{s[name]['cpu_us'] / s['modelwire']['cpu_us']:>7.2f}x")


if __name__ == "__main__":
    main()
