"""StickyFallback as pure policy: an injected clock, no sleeps."""

from __future__ import annotations

import threading

from modelwire.resilience import StickyFallback, StickyStart


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_starts_at_the_fallback_until_the_window_ends_then_one_probe():
    clock = Clock()
    sticky = StickyFallback(300, clock)
    assert sticky.start() == StickyStart(0)
    sticky.served(1, fell_back=True)
    clock.now = 299.9
    assert sticky.start() == StickyStart(1)
    clock.now = 300.0
    assert sticky.start() == StickyStart(0, probe=True)
    assert sticky.start() == StickyStart(1)  # the probe is out: others stay on the fallback
    sticky.served(0, fell_back=False)
    assert sticky.start() == StickyStart(0)


def test_a_zero_window_never_sticks():
    sticky = StickyFallback(0, Clock())
    sticky.served(1, fell_back=True)
    assert sticky.start() == StickyStart(0)


def test_an_abandoned_probe_frees_its_slot_after_another_window():
    clock = Clock()
    sticky = StickyFallback(10, clock)
    sticky.served(1, fell_back=True)
    clock.now = 10
    assert sticky.start().probe
    clock.now = 19
    assert sticky.start() == StickyStart(1)
    clock.now = 20
    assert sticky.start().probe


def test_a_chain_exhausted_from_the_sticky_start_forgets_it():
    sticky = StickyFallback(300, Clock())
    sticky.served(1, fell_back=True)
    sticky.gave_up(StickyStart(1))
    assert sticky.start() == StickyStart(0)


def test_many_threads_at_the_window_end_send_exactly_one_probe():
    clock = Clock()
    sticky = StickyFallback(5, clock)
    sticky.served(2, fell_back=True)
    clock.now = 5
    barrier = threading.Barrier(16)
    starts: list[StickyStart] = []
    lock = threading.Lock()

    def call() -> None:
        barrier.wait()
        got = sticky.start()
        with lock:
            starts.append(got)

    threads = [threading.Thread(target=call) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(s.probe for s in starts) == 1
    assert sorted(s.position for s in starts) == [0] + [2] * 15
