"""The counts behind :class:`~modelwire.observe.Metrics`, kept as plain dicts between
scrapes: a counter is ``{label values: value}``, a histogram ``{label values: [count per
bucket..., count above the last, sum]}``. prometheus-client's own metric objects cost a
lock and a call per change; these cost a dict update (docs/performance/index.md, metrics).

With several worker processes each writes its tally to a file of its own in the run's
directory (every second, and when it exits); a scrape of any worker
adds them all up.
"""

from __future__ import annotations

import contextlib
import os
import threading
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

__all__ = ["Tally", "observe", "read_dir"]

_PREFIX = "modelwire-"


def observe(table: dict[tuple[str, ...], list[float]], key: tuple[str, ...], value: float,
            bounds: Sequence[float]) -> None:
    """One value into histogram ``table`` under ``key``."""
    row = table.get(key)
    if row is None:
        row = table[key] = [0.0] * (len(bounds) + 2)
    row[bisect_left(bounds, value)] += 1
    row[-1] += value


class Tally:
    """One process's counters, histograms and gauges, by name."""

    def __init__(self, counters: Sequence[str], histograms: Sequence[str], gauges: Sequence[str]) -> None:
        self.counters: dict[str, dict[tuple[str, ...], float]] = {n: {} for n in counters}
        self.histograms: dict[str, dict[tuple[str, ...], list[float]]] = {n: {} for n in histograms}
        self.gauges: dict[str, float] = dict.fromkeys(gauges, 0.0)
        self.lock = threading.Lock()  # a library Client may be called from many threads

    # ------------------------------------------------------------- files
    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "pid": os.getpid(),
                "counters": {n: [[*k, v] for k, v in t.items()] for n, t in self.counters.items()},
                "histograms": {n: [[*k, row] for k, row in t.items()] for n, t in self.histograms.items()},
                "gauges": dict(self.gauges),
            }

    def write(self, directory: str, *, final: bool = False) -> None:
        """This process's tally into ``directory`` (``final``: its gauges end at zero)."""
        data = self.snapshot()
        if final:
            data["gauges"] = dict.fromkeys(data["gauges"], 0.0)
        path = os.path.join(directory, f"{_PREFIX}{os.getpid()}.json")
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps(data))
        os.replace(tmp, path)  # a reader never sees half a file


def read_dir(directory: str, own: Tally) -> Tally:
    """Every worker's tally in ``directory`` added up, with ``own`` (this process) live
    rather than as last written. Gauges only of the workers still running."""
    total = Tally(list(own.counters), list(own.histograms), list(own.gauges))
    _add(total, own.snapshot(), gauges=True)
    me = os.getpid()
    for data in _files(directory):
        if data.get("pid") != me:
            _add(total, data, gauges=_alive(data.get("pid")))
    return total


def _files(directory: str) -> Iterator[dict[str, Any]]:
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(directory):
            if name.startswith(_PREFIX) and name.endswith(".json"):
                try:
                    with open(os.path.join(directory, name), "rb") as f:
                        yield orjson.loads(f.read())
                except (OSError, orjson.JSONDecodeError):
                    continue  # a worker's file being replaced: its next one counts


def _add(total: Tally, data: dict[str, Any], *, gauges: bool) -> None:
    for name, rows in data.get("counters", {}).items():
        table = total.counters.get(name)
        if table is not None:
            for row in rows:
                key = tuple(row[:-1])
                table[key] = table.get(key, 0.0) + row[-1]
    for name, rows in data.get("histograms", {}).items():
        table = total.histograms.get(name)
        if table is not None:
            for row in rows:
                key, values = tuple(row[:-1]), row[-1]
                mine = table.get(key)
                table[key] = list(values) if mine is None else [a + b for a, b in zip(mine, values, strict=True)]
    if gauges:
        for name, value in data.get("gauges", {}).items():
            if name in total.gauges:
                total.gauges[name] += value


def _alive(pid: object) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
