"""What the Redis limiter adds to a request: ``reserve`` (before the upstream call) and
``settle`` (after the answer) against a redis-server on loopback, next to one Redis
round trip (``PING``, and ``EVALSHA`` of an empty script) and to the in-process limiter.

Prints, per operation: wall time per call (median and p99 over ``--requests`` sequential
calls) and the gateway process's CPU per call; then the same at 32 concurrent requests
on one event loop (calls per second). "A request's wait" is reserve (awaited) plus
sending the settle (it returns before Redis answers); "both scripts answered" waits for
the settle too. The key has an rpm, a tpm and a monthly budget,
and belongs to a team with its own budget: the heaviest admission (two scopes).

    .venv/bin/python bench/teams_redis.py [--requests 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from modelwire.teams import Budget, Demand, Team, VirtualKey
from modelwire.teams.limiter import LocalLimiter
from modelwire.teams.redis_limiter import RedisLimiter


def start_redis(workdir: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (apt-get install -y redis-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.02)
    proc.kill()
    sys.exit("redis-server did not start")


def demand(i: int = 0) -> Demand:
    team = Team(id="team_bench", name="bench", budget=Budget(1e9, "month"), rpm=10**9, tpm=10**12)
    key = VirtualKey(id=f"key_bench{i}", name=f"bench{i}", key_hash=f"h{i}", prefix="mw-…",
                     team_id=team.id, budget=Budget(1e9, "month"), rpm=10**9, tpm=10**12)
    return Demand(key, team, 0.01, 1200)


async def timed(label: str, op, n: int) -> list[float]:
    for _ in range(min(200, n)):  # warm: connections made, scripts loaded
        await op()
    walls = []
    cpu0 = time.process_time()
    for _ in range(n):
        t = time.perf_counter()
        await op()
        walls.append(time.perf_counter() - t)
    cpu = (time.process_time() - cpu0) / n
    walls.sort()
    print(f"  {label:<34} median {statistics.median(walls) * 1e6:7.1f} µs   "
          f"p99 {walls[int(len(walls) * 0.99)] * 1e6:7.1f} µs   cpu {cpu * 1e6:6.1f} µs/call")
    return walls


async def concurrent(label: str, op, n: int, width: int = 32) -> None:
    async def worker(count: int) -> None:
        for _ in range(count):
            await op()

    cpu0, t = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(n // width) for _ in range(width)))
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu0
    done = (n // width) * width
    print(f"  {label:<34} {done / wall:9.0f} calls/s   cpu {cpu / done * 1e6:6.1f} µs/call")


async def main(n: int) -> None:
    import redis.asyncio

    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_redis(tmp)
        try:
            raw = redis.asyncio.Redis.from_url(url)
            empty = raw.register_script("return 1")
            limiter = RedisLimiter(url, prefix="bench:", hold_ttl=900)
            local = LocalLimiter()
            d = demand()

            async def path(lim):  # what a request waits for: reserve, and sending the settle
                await lim.settle(await lim.reserve(d), 0.004, 400)

            async def full(lim):  # both scripts answered
                await path(lim)
                await lim.drain()

            print(f"sequential, {n} calls each")
            ping = await timed("redis PING (one round trip)", raw.ping, n)
            await timed("redis EVALSHA 'return 1'", lambda: empty(keys=[], args=[]), n)
            walls = await timed("RedisLimiter: a request's wait", lambda: path(limiter), n)
            await limiter.drain()
            await timed("RedisLimiter: both scripts answered", lambda: full(limiter), n)
            await timed("LocalLimiter reserve + settle", lambda: path(local), n)
            print(f"  a request waits {statistics.median(walls) / statistics.median(ping):.2f} "
                  f"PING round trips (median)")
            print("32 concurrent requests on one event loop")
            await concurrent("redis PING", raw.ping, n)
            await concurrent("RedisLimiter: a request's wait", lambda: path(limiter), n)
            await limiter.drain()
            await limiter.close()
            await raw.aclose()
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main(args.requests))
