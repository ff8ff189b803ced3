"""Timing, process and table helpers shared by ``bench/codecs.py`` and ``bench/gateway.py``.

Benchmarks are scripts that print numbers, never timed tests. The machine they run on
is shared (2 cores, other people's processes), so single runs are noisy: micro timings
take the best of several repeats (what ``timeit`` does: the least disturbed run), and
process-level figures take the median of several fresh processes.
"""

from __future__ import annotations

import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "best_seconds",
    "busy_pct",
    "cpu_seconds",
    "free_port",
    "goal_line",
    "loadavg",
    "machine",
    "machine_ticks",
    "pct",
    "rss_mib",
    "table",
    "wait_http",
]


def best_seconds(fn: Callable[[], Any], *, repeat: int = 7, min_time: float = 0.2,
                 timer: Callable[[], float] = time.process_time) -> float:
    """CPU seconds per call of ``fn``: calls are looped until a run lasts ``min_time``, and
    the fastest of ``repeat`` runs is kept (the one least disturbed by other processes).

    The default timer is this process's CPU time, not wall time: on a shared machine wall
    time mostly measures the queue for a core (load average 10 on 2 cores was seen here),
    while CPU time measures the work. Pass ``timer=time.perf_counter`` for wall time."""
    fn()  # warm up: imports, caches, first-call allocations
    loops = 1
    while True:
        start = timer()
        for _ in range(loops):
            fn()
        elapsed = timer() - start
        if elapsed >= min_time / 4 or loops >= 1 << 16:
            break
        loops *= 2
    best = elapsed / loops
    for _ in range(repeat - 1):
        start = timer()
        for _ in range(loops):
            fn()
        best = min(best, (timer() - start) / loops)
    return best


def pct(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, *, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> bool:
    """Poll ``url`` until it answers any HTTP status, the process dies, or ``timeout``."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=1.0):
                return True
        except urllib.error.HTTPError:
            return True  # it answered: up
        except OSError:
            time.sleep(0.05)
    return False


def _proc_status(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def rss_mib(pid: int | None = None, *, peak: bool = False) -> float:
    """Resident memory of a process in MiB (``peak``: its high-water mark), from /proc."""
    return _proc_status(pid or os.getpid(), "VmHWM:" if peak else "VmRSS:") / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _all_cores_ticks() -> list[int]:
    """/proc/stat's first line (all cores, clock ticks since boot): user, nice, system,
    idle, iowait, irq, softirq, steal; [] where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            return [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return []


def machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores since boot, from /proc/stat."""
    vals = _all_cores_ticks()
    if not vals:
        return 0, 0
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    return sum(vals) - idle, sum(vals)


def steal_ticks() -> tuple[int, int]:
    """(steal, total) clock ticks of all cores since boot: steal is the time this virtual
    machine's vCPUs were ready to run and the host ran something else."""
    vals = _all_cores_ticks()
    return (vals[7] if len(vals) > 7 else 0), sum(vals)


def busy_pct(before: tuple[int, int], after: tuple[int, int]) -> float:
    """Share of all cores busy between two :func:`machine_ticks` samples (0-100)."""
    total = after[1] - before[1]
    return 100 * (after[0] - before[0]) / total if total > 0 else float("nan")


def loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = _proc_meminfo_gib()
    return (f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, {platform.system()} "
            f"{platform.release()}, Python {interpreter()}")


def interpreter(python: str | None = None) -> str:
    """An interpreter's version, base executable and how libpython is linked, e.g.
    ``3.11.2 (/usr/bin/python3.11, libpython static)``: the same code runs ~20-30% slower
    on a build without PGO and LTO (pyenv's default, shared) than on a distribution's.
    ``python``: another interpreter, asked in a child process; default this one."""
    if python is None:
        try:
            with open("/proc/self/maps", encoding="utf-8") as f:
                link = "libpython shared" if "libpython" in f.read() else "libpython static"
        except OSError:
            link = "libpython ?"
        return f"{sys.version.split()[0]} ({sys._base_executable}, {link})"  # type: ignore[attr-defined]
    here = os.path.dirname(os.path.abspath(__file__))
    code = f"import sys; sys.path.insert(0, {here!r}); import _util; print(_util.interpreter())"
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"? ({exc})"
    return done.stdout.strip() or f"? ({done.stderr.strip()[-200:]})"


def _proc_meminfo_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            return int(f.readline().split()[1]) / 1024 / 1024
    except (OSError, ValueError, IndexError):
        return 0.0


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with right-aligned numbers (also valid Markdown)."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("| " + " | ".join(parts) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.2f}"
    return str(v)


def goal_line(name: str, ok: bool | None, detail: str) -> str:
    mark = "n/a " if ok is None else ("PASS" if ok else "MISS")
    return f"  [{mark}] {name}: {detail}"
