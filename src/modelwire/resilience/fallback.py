"""The fallback chain: which models to try, in order, for one turn.

The primary comes first; then each fallback entry, skipping entries that
name the same endpoint and model as one already in the chain (falling back
to yourself only repeats the failure — hermes #22548) and entries that do not
resolve (an unconfigured name, a provider with no profile). Skipped entries
are kept with their reason so ``modelwire`` can say why a fallback never ran.

The chain is resolved once per Client. Which position a call starts at is
:class:`StickyFallback`'s decision: after a fallback served, later calls go
straight to it for a while, then one call probes the primary.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import ConfigError

__all__ = ["FallbackChain", "Skipped", "StickyFallback", "StickyStart"]

E = TypeVar("E")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Skipped:
    """A fallback entry left out of the chain, and why; ``unusable``: it could not be
    resolved (a duplicate of an earlier entry is skipped but not unusable)."""

    model: str
    reason: str
    unusable: bool = False

    def __str__(self) -> str:
        return f"{self.model} ({self.reason})"


class FallbackChain(Generic[E, R]):
    """``FallbackChain(primary, fallback, resolve, key)``: the resolved entries, in order.

    Entries are model strings or anything ``label`` names (a :class:`~modelwire.Model`:
    its name). ``resolve(entry)`` returns a resolved model or raises
    :class:`~modelwire.ConfigError` (the primary's error propagates; a
    fallback's is recorded in :attr:`skipped`, or raised when ``strict``, naming the
    entry). ``key(resolved)`` identifies an endpoint+model, so duplicates are skipped.
    Resolving does no I/O, so the whole chain is resolved up front.
    """

    def __init__(
        self,
        primary: E,
        fallback: Sequence[E],
        resolve: Callable[[E], R],
        key: Callable[[R], Any],
        *,
        label: Callable[[E], str] = str,
        strict: bool = False,
    ) -> None:
        self.primary = primary
        self.skipped: list[Skipped] = []
        first = resolve(primary)  # the primary's own error is the caller's to see
        self.entries: list[tuple[E, R]] = [(primary, first)]
        seen: set[Any] = {key(first)}
        given: set[Any] = {primary}
        for entry in fallback:
            name = label(entry)
            if entry in given:
                self.skipped.append(Skipped(name, "same as an earlier model in the chain"))
                continue
            given.add(entry)
            try:
                resolved = resolve(entry)
            except ConfigError as exc:
                if strict:
                    raise ConfigError(f"fallback {name!r} cannot be used: {exc}") from exc
                self.skipped.append(Skipped(name, f"not configured: {exc}", unusable=True))
                continue
            k = key(resolved)
            if k in seen:
                self.skipped.append(Skipped(name, "same endpoint and model as an earlier entry"))
                continue
            seen.add(k)
            self.entries.append((entry, resolved))

    @property
    def unusable(self) -> tuple[Skipped, ...]:
        """The skipped entries that could not be resolved (not mere duplicates)."""
        return tuple(s for s in self.skipped if s.unusable)

    def __iter__(self) -> Iterator[tuple[E, R]]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def has_after(self, position: int) -> bool:
        """Whether another entry follows chain position ``position`` (0 = primary)."""
        return position + 1 < len(self.entries)


@dataclass(frozen=True, slots=True)
class StickyStart:
    """Where one call starts in the chain: ``position`` 0 is the primary; ``probe``:
    this call is the one probe of the primary after the window ended."""

    position: int = 0
    probe: bool = False


_AT_PRIMARY = StickyStart()
_PROBE = StickyStart(0, probe=True)


class StickyFallback:
    """Which chain position later calls start at, after a call fell back.

    The seed (4.8): once the primary keeps failing, the rest of the loop uses the
    fallback. Without memory every call paid the primary's whole retry ladder again
    (four backoff sleeps, ~30 s, hermes' 500-every-time case) before falling back.
    So a fallback that served is remembered for ``window`` seconds (0: never); when
    the window ends, exactly one call probes the primary (a success restores it,
    a failure starts a new window) while the others stay on the fallback. While
    held (:meth:`hold`: an Agent run) the window does not end.

    Thread- and task-safe: one lock, held only for a few assignments (never across
    an await), so it serves a sync Client's threads and an async Client's tasks.
    ``clock`` is injected (tests); monotonic seconds.
    """

    def __init__(self, window: float, clock: Callable[[], float]) -> None:
        self.window = window
        self._clock = clock
        self._lock = threading.Lock()
        self._position = 0  # where calls start; 0: the primary
        self._until = 0.0  # when the window ends
        self._probe_since: float | None = None  # a probe is out since then
        self._holds = 0

    @property
    def position(self) -> int:
        return self._position

    def start(self) -> StickyStart:
        """Where the next call starts (and whether it is the probe)."""
        if self._position == 0:  # the usual case: no lock needed to read one int
            return _AT_PRIMARY
        with self._lock:
            if self._position == 0:
                return _AT_PRIMARY
            now = self._clock()
            if now < self._until or self._holds:
                return StickyStart(self._position)
            # a probe that never reported back (an abandoned stream) frees the slot
            # after another window, so the primary is never given up for good
            if self._probe_since is not None and now - self._probe_since < max(self.window, 1.0):
                return StickyStart(self._position)
            self._probe_since = now
            return _PROBE

    def served(self, position: int, *, fell_back: bool) -> None:
        """A call was answered at ``position``; ``fell_back``: it got there by falling
        back during the call (not by starting there)."""
        with self._lock:
            if position == 0:
                self._position, self._probe_since = 0, None  # the primary is back
            elif fell_back and self.window > 0:
                self._position = position
                self._until = self._clock() + self.window
                self._probe_since = None

    def gave_up(self, start: StickyStart) -> None:
        """A call ended without an answer: a probe frees its slot; a call that started
        on the fallback and failed there forgets it (the next call starts fresh)."""
        with self._lock:
            if start.probe:
                self._probe_since = None
                self._until = self._clock() + self.window
            elif start.position and start.position == self._position:
                self._position, self._probe_since = 0, None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """While held, the window does not end (no probe): an Agent run keeps the
        fallback it fell back to for the rest of the run."""
        with self._lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
