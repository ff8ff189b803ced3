"""What the SQLite limiter (``serve --workers N`` on one machine) adds to a request, next to
the in-process limiter (``--workers 1``): ``reserve`` (awaited before the upstream call)
and ``finish`` (the settle and the spend row, queued; a thread writes them in batches).

Prints, per limiter: wall time of a request's wait (median and p99 over ``--requests``
sequential requests) and the process's CPU per request, the settle thread's included;
then the same with ``--processes`` processes sharing one state file, each running 32
concurrent requests (what the workers of one machine do). The key has an rpm, a tpm and
a monthly budget, and belongs to a team with its own budget: the heaviest admission.

    .venv/bin/python bench/teams_sqlite.py [--requests 3000] [--processes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from modelwire.teams import Budget, Demand, SpendRow, Team, VirtualKey
from modelwire.teams.limiter import LocalLimiter
from modelwire.teams.sqlite import SQLiteKeyStore
from modelwire.teams.sqlite_limiter import SQLiteLimiter


def demand() -> Demand:
    team = Team(id="team_bench", name="bench", budget=Budget(1e9, "month"), rpm=10**9, tpm=10**12)
    key = VirtualKey(id="key_bench", name="bench", key_hash="h", prefix="mw-…",
                     team_id=team.id, budget=Budget(1e9, "month"), rpm=10**9, tpm=10**12)
    return Demand(key, team, 0.01, 1200, "bench", "req_bench")


ROW = SpendRow(0.0, "req_bench", "key_bench", "team_bench", "bench", "bench", "emulator",
               300, 100, cost_usd=0.004)


async def request(limiter: LocalLimiter | SQLiteLimiter, d: Demand) -> None:
    reservation = await limiter.reserve(d)
    if isinstance(limiter, SQLiteLimiter):
        await limiter.finish(reservation, 0.004, 400, ROW)
    else:
        await limiter.settle(reservation, 0.004, 400)


async def sequential(label: str, limiter: LocalLimiter | SQLiteLimiter, n: int) -> None:
    d = demand()
    for _ in range(min(200, n)):
        await request(limiter, d)
    if isinstance(limiter, SQLiteLimiter):
        await limiter.drain()
    walls = []
    cpu0 = time.process_time()
    for _ in range(n):
        t = time.perf_counter()
        await request(limiter, d)
        walls.append(time.perf_counter() - t)
    if isinstance(limiter, SQLiteLimiter):
        await limiter.drain()  # the settles' CPU counts too
    cpu = (time.process_time() - cpu0) / n
    walls.sort()
    print(f"  {label:<40} median {statistics.median(walls) * 1e6:7.1f} µs   "
          f"p99 {walls[int(len(walls) * 0.99)] * 1e6:8.1f} µs   cpu {cpu * 1e6:6.1f} µs/request")


def _worker(path: str, n: int, width: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    async def run() -> tuple[float, float, int]:
        limiter = SQLiteLimiter(path)
        d = demand()

        async def one(count: int) -> None:
            for _ in range(count):
                await request(limiter, d)

        cpu0, t = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(n // width) for _ in range(width)))
        await limiter.drain()
        wall, cpu = time.perf_counter() - t, time.process_time() - cpu0
        await limiter.close()
        return wall, cpu, (n // width) * width

    out.put(asyncio.run(run()))


def shared(path: str, processes: int, n: int) -> None:
    out: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    workers = [multiprocessing.Process(target=_worker, args=(path, n, 32, out))
               for _ in range(processes)]
    t = time.perf_counter()
    for w in workers:
        w.start()
    results = [out.get() for _ in workers]
    for w in workers:
        w.join()
    wall = time.perf_counter() - t
    done = sum(r[2] for r in results)
    cpu = sum(r[1] for r in results)
    print(f"  {processes} processes x 32 concurrent on one file  {done / wall:8.0f} requests/s   "
          f"cpu {cpu / done * 1e6:6.1f} µs/request")


async def main(n: int, processes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "state.db")
        SQLiteKeyStore(path).close()
        print(f"sequential, {n} requests each")
        await sequential("LocalLimiter (--workers 1)", LocalLimiter(), n)
        limiter = SQLiteLimiter(path)
        await sequential("SQLiteLimiter (--workers N)", limiter, n)
        await limiter.close()
        shared(path, processes, n)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.processes))
