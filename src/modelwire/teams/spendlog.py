"""The spend record, written off the request path: a bounded queue and one thread that
writes it to the store in batches.

A request only appends a row (a deque append, safe across threads). The writer wakes
when a batch is full or every ``interval`` seconds, writes up to ``batch`` rows in one
transaction, and keeps rows it could not write for the next try. ``close`` (the
gateway's shutdown) writes what is left. When the queue is full (the store is down
for long) new rows are counted in ``dropped`` and logged, never allowed to hold
requests or grow memory without bound.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

from .model import SpendRow
from .store import KeyStore

__all__ = ["SpendWriter"]

log = logging.getLogger("modelwire.teams")


class SpendWriter:
    def __init__(self, store: KeyStore, *, max_rows: int = 100_000, batch: int = 500,
                 interval: float = 0.5) -> None:
        self._store = store
        self._rows: deque[SpendRow] = deque()
        self._max, self._batch, self._interval = max_rows, batch, interval
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one writer at a time (the thread, or close/flush)
        self.dropped = 0
        self.written = 0
        self._warned = 0.0

    def record(self, row: SpendRow) -> None:
        """Queue one request's row (never blocks, never raises)."""
        if len(self._rows) >= self._max:
            self.dropped += 1
            now = time.monotonic()
            if now - self._warned > 60:
                self._warned = now
                log.warning("spend queue full (%d rows): the store is not keeping up; "
                            "%d rows dropped so far", self._max, self.dropped)
            return
        self._idle.clear()
        self._rows.append(row)
        if self._thread is None:
            self._start()
        elif len(self._rows) >= self._batch:
            self._wake.set()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None and not self._stop:
                self._thread = threading.Thread(target=self._run, name="modelwire-spend",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait(self._interval)
            self._wake.clear()
            self._write_all()

    def _write_all(self) -> bool:
        """Write every queued row, a batch at a time; False when the store refused."""
        with self._lock:
            while self._rows:
                rows = [self._rows.popleft() for _ in range(min(self._batch, len(self._rows)))]
                try:
                    self._store.add_spend(rows)
                except Exception:  # kept for the next try; the gateway serves on
                    log.warning("spend record: writing %d rows failed; retrying", len(rows),
                                exc_info=True)
                    self._rows.extendleft(reversed(rows))
                    return False
                self.written += len(rows)
            self._idle.set()
            return True

    def flush(self, timeout: float = 10.0) -> bool:
        """Write what is queued now (in this thread); whether everything was written."""
        deadline = time.monotonic() + timeout
        while not self._write_all():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread and write what is left (the gateway's shutdown)."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if not self.flush(timeout):
            log.error("spend record: %d rows could not be written at shutdown",
                      len(self._rows))

    @property
    def pending(self) -> int:
        return len(self._rows)
