"""Resilience: what failed (:mod:`.classify`), when the server says to come back
(:mod:`.retry_after`), what to do (:mod:`.policy`) and which model is next
(:mod:`.fallback`). Pure: no I/O, no clock, no sleeping; tenacity is imported
only when a backoff is computed.

May import the wire floor, the error tree and provider data only.
"""

from __future__ import annotations

from .classify import RETRYABLE, Failure, FailureKind, classify
from .fallback import FallbackChain, Skipped, StickyFallback, StickyStart
from .policy import Action, ActionKind, LadderState, RetryPolicy, backoff, decide

__all__ = [
    "RETRYABLE",
    "Action",
    "ActionKind",
    "Failure",
    "FailureKind",
    "FallbackChain",
    "LadderState",
    "RetryPolicy",
    "Skipped",
    "StickyFallback",
    "StickyStart",
    "backoff",
    "classify",
    "decide",
]
