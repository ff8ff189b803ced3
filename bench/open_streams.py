"""Memory per open stream: 1,000 / 5,000 / 10,000 slow streams held through one gateway worker.

Run: ``.venv/bin/python bench/open_streams.py [--counts 1000,5000,10000] [--gap 2]``.
Not a test: it prints a table and the goal (<= 64 KB per open stream, linear) with PASS/MISS.

Processes (each its own session, killed at the end; loopback only, free ports):
* a slow Chat Completions upstream (this script with ``--_upstream``): each streamed answer
  sends a chunk every ``--gap`` seconds and never ends on its own;
* ``modelwire serve`` (1 worker, ``gateway.max_connections`` raised for the run);
* the clients (this script with ``--_clients``): raw asyncio connections, each sending one
  streamed request and reading what comes, opened in steps up to each count.

The script raises its open-file limit (children inherit it): each stream holds two
descriptors in the gateway, one toward the client and one toward the upstream. At each
count it waits until every stream has had its first chunk, then reads the gateway's RSS
and descriptors from /proc; RSS per stream is the growth over the idle gateway divided by
the count. The table also says how many streams had their first chunk and how many upstream streams
were open (a stream waiting for an upstream connection holds its client connection only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import free_port, goal_line, machine, rss_mib, table, wait_http

FILES = 65536  # wanted; the hard limit may allow less (a container's is often 20,000)


# ------------------------------------------------------------------ upstream
async def _upstream(port: int, gap: float) -> None:
    open_streams = 0

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_streams
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                body = await reader.readexactly(length) if length else b""
                if head.startswith(b"GET"):
                    reply = json.dumps({"object": "list", "data": [], "open": open_streams}).encode()
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                                 % (len(reply), reply))
                    await writer.drain()
                    continue
                del body
                open_streams += 1
                try:
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                 b"transfer-encoding: chunked\r\n\r\n")
                    n = 0
                    while True:
                        chunk = json.dumps({"id": "chatcmpl-slow", "object": "chat.completion.chunk",
                                            "created": 1764000000, "model": "slow-1", "choices": [
                                                {"index": 0, "delta": {"role": "assistant", "content": f"w{n} "},
                                                 "finish_reason": None}]}).encode()
                        event = b"data: " + chunk + b"\n\n"
                        writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                        await writer.drain()
                        n += 1
                        await asyncio.sleep(gap)
                finally:
                    open_streams -= 1
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(one, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


# ------------------------------------------------------------------- clients
async def _clients(port: int, counts: list[int], key: str) -> None:
    """Open streams up to each count; print a line when all have their first chunk, then
    wait for a line on stdin before the next step."""
    body = json.dumps({"model": "slow", "stream": True, "messages": [{"role": "user", "content": "go"}]}).encode()
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
               b"authorization: Bearer %s\r\ncontent-length: %d\r\n\r\n%s" % (key.encode(), len(body), body))
    first = 0
    failed = 0
    tasks: list[asyncio.Task[None]] = []

    async def hold() -> None:
        nonlocal first, failed
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 60)
            writer.write(request)
            got = False
            while True:
                data = await reader.read(4096)
                if not data:
                    break
                if not got and b"data:" in data:
                    got = True
                    first += 1
        except (OSError, TimeoutError):
            failed += 1

    loop = asyncio.get_running_loop()
    for count in counts:
        while len(tasks) < count:
            for _ in range(min(250, count - len(tasks))):
                tasks.append(asyncio.create_task(hold()))
            await asyncio.sleep(0.05)
        deadline = time.monotonic() + 120
        seen, still = -1, time.monotonic()
        while first + failed < count and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if first + failed != seen:
                seen, still = first + failed, time.monotonic()
            elif time.monotonic() - still > 10:  # no progress for 10 s: report what flows
                break
        print(json.dumps({"count": count, "first": first, "failed": failed}), flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)
    for t in tasks:
        t.cancel()


# ---------------------------------------------------------------------- main
def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--counts", default="1000,5000,10000")
    ap.add_argument("--gap", type=float, default=2.0, help="seconds between an upstream stream's chunks")
    ap.add_argument("--_upstream", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--_clients", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._upstream:
        asyncio.run(_upstream(int(args._upstream[0]), float(args._upstream[1])))
        return 0
    if args._clients:
        port, counts, key = args._clients
        asyncio.run(_clients(int(port), [int(c) for c in counts.split(",")], key))
        return 0

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = FILES if hard == resource.RLIM_INFINITY else min(FILES, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))  # inherited by every child
    counts = [int(c) for c in args.counts.split(",")]
    print(f"open streams through one gateway worker — {machine()}; open-file limit {files}")
    work = Path(tempfile.mkdtemp(prefix="mw-streams-"))
    key = "sk-bench-" + os.urandom(8).hex()
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], name: str, env: dict[str, str] | None = None, **kw: object) -> subprocess.Popen[bytes]:
        log = (work / f"{name}.log").open("wb")
        proc = subprocess.Popen(argv, stdout=kw.pop("stdout", log), stderr=log, start_new_session=True,  # type: ignore[call-overload]
                                env={**os.environ, **(env or {})}, **kw)
        procs.append(proc)
        return proc

    try:
        up_port, gw_port = free_port(), free_port()
        start([sys.executable, __file__, "--_upstream", str(up_port), str(args.gap)], "upstream")
        cfg = work / "modelwire.yaml"
        cfg.write_text("models:\n  slow: {provider: openai, model: slow-1, "
                       f"base_url: 'http://127.0.0.1:{up_port}/v1', api_key_env: MW_BENCH_KEY}}\n"
                       f"gateway:\n  max_connections: {max(counts) + 1000}\n")
        exe = Path(sys.executable).with_name("modelwire")
        argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "modelwire.cli"]
        gw = start([*argv, "serve", "--config", str(cfg), "--port", str(gw_port)], "modelwire",
                   env={"MW_BENCH_KEY": key, "MODELWIRE_GATEWAY_KEYS": key, "XDG_CONFIG_HOME": str(work),
                        "XDG_DATA_HOME": str(work)})
        if not wait_http(f"http://127.0.0.1:{gw_port}/health", timeout=60, proc=gw):
            print("gateway did not start; log:", (work / "modelwire.log").read_text()[-800:])
            return 1
        wait_http(f"http://127.0.0.1:{up_port}/v1/models", timeout=30)
        # warm: a few streams open and closed, so the idle figure has the imports and pools
        warm = start([sys.executable, __file__, "--_clients", str(gw_port), "20", key], "warm",
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert warm.stdout is not None and warm.stdin is not None
        warm.stdout.readline()
        warm.stdin.write(b"\n")
        warm.stdin.flush()
        warm.wait(timeout=60)
        time.sleep(3)
        base_rss, base_fds = rss_mib(gw.pid), _fds(gw.pid)
        clients = start([sys.executable, __file__, "--_clients", str(gw_port), args.counts, key], "clients",
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert clients.stdout is not None and clients.stdin is not None
        rows = []
        per: list[float] = []
        for _ in counts:
            line = clients.stdout.readline()
            if not line:
                print("clients ended early; log:", (work / "clients.log").read_text()[-800:])
                break
            step = json.loads(line)
            time.sleep(args.gap + 1)  # every stream past its first chunk, buffers at rest
            rss, fds = rss_mib(gw.pid), _fds(gw.pid)
            upstream_open = _upstream_open(up_port)
            n = step["count"]
            kb = (rss - base_rss) * 1024 / n
            per.append(kb)
            rows.append([n, step["first"], upstream_open, step["failed"], rss, kb, fds])
            clients.stdin.write(b"\n")
            clients.stdin.flush()
        print(f"\nidle gateway (after 20 warm-up streams): RSS {base_rss:.1f} MiB, {base_fds} descriptors")
        print(table(["streams held", "had a first chunk", "open upstream", "failed", "gateway RSS MiB",
                     "KB per stream", "gateway fds"], rows))
        if per:
            linear = max(per) <= 1.25 * min(per) if len(per) > 1 else True
            print("\nGoal (issue 23):")
            print(goal_line("RSS per open stream <= 64 KB and linear", max(per) <= 64 and linear,
                            f"{', '.join(f'{k:.1f}' for k in per)} KB per stream at {', '.join(map(str, counts))}"))
    finally:
        for proc in procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, 15)
                except ProcessLookupError:
                    pass
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
    return 0


def _upstream_open(port: int) -> int:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as resp:
            return int(json.loads(resp.read())["open"])
    except (OSError, ValueError, KeyError):
        return -1


if __name__ == "__main__":
    raise SystemExit(main())
