"""Retry hints are facts about the wire, so they live on the bottom floor
(:mod:`modelwire.wire.retry_hints`) where codecs read them too; this path stays for
resilience, credentials and callers."""

from __future__ import annotations

from ..wire.retry_hints import (
    MAX_RESET_HORIZON,
    MAX_RETRY_AFTER,
    parse_duration,
    reset_at,
    retry_after_seconds,
)

__all__ = ["MAX_RESET_HORIZON", "MAX_RETRY_AFTER", "parse_duration", "reset_at", "retry_after_seconds"]
