"""The spend record's writer: batches off the request path, kept across store
failures, bounded, flushed on close."""

from __future__ import annotations

import threading

from modelwire.teams.model import SpendRow
from modelwire.teams.spendlog import SpendWriter


class Store:
    def __init__(self, fail: int = 0) -> None:
        self.batches: list[list[SpendRow]] = []
        self.fail = fail
        self.wrote = threading.Event()

    def add_spend(self, rows):
        if self.fail:
            self.fail -= 1
            raise OSError("database is locked")
        self.batches.append(list(rows))
        self.wrote.set()


def _row(i: int) -> SpendRow:
    return SpendRow(float(i), f"r{i}", "k", None, "m", "m", "p")


def test_rows_are_written_in_batches_by_the_writer_thread():
    store = Store()
    writer = SpendWriter(store, batch=100, interval=0.01)
    for i in range(250):
        writer.record(_row(i))
    assert store.wrote.wait(5)
    writer.close()
    assert [len(b) for b in store.batches] and max(len(b) for b in store.batches) <= 100
    assert [r.request_id for b in store.batches for r in b] == [f"r{i}" for i in range(250)]


def test_rows_a_failing_store_refused_are_written_once_it_recovers():
    store = Store(fail=2)
    writer = SpendWriter(store, interval=0.01)
    writer.record(_row(1))
    writer.record(_row(2))
    assert store.wrote.wait(5)
    writer.close()
    assert [r.request_id for b in store.batches for r in b] == ["r1", "r2"]


def test_a_full_queue_drops_and_counts_instead_of_growing():
    store = Store(fail=10**9)
    writer = SpendWriter(store, max_rows=5, interval=60)
    for i in range(8):
        writer.record(_row(i))
    assert writer.pending == 5 and writer.dropped == 3
    writer.close(timeout=0.1)  # the store never recovers: close gives up, rows still counted
    assert writer.pending == 5 and store.batches == []


def test_close_writes_what_is_left():
    store = Store()
    writer = SpendWriter(store, interval=60)  # the thread would wait a minute
    writer.record(_row(7))
    writer.close()
    assert [r.request_id for b in store.batches for r in b] == ["r7"]


def test_recording_never_waits_for_a_store_that_is_stuck():
    import time

    release = threading.Event()

    class Stuck(Store):
        def add_spend(self, rows):
            release.wait(10)  # a store locked by another process
            super().add_spend(rows)

    store = Stuck()
    writer = SpendWriter(store, batch=10, interval=0.01)
    writer.record(_row(0))
    started = time.monotonic()
    for i in range(1, 2001):  # the writer is blocked in add_spend all along
        writer.record(_row(i))
    assert time.monotonic() - started < 0.5
    release.set()
    writer.close()
    assert sum(len(b) for b in store.batches) == 2001
