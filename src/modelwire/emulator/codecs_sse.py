"""SSE framing for the emulator: modelwire's own ``encode_event`` (framing only; the
event contents are rendered here, independently of modelwire's codecs)."""

from __future__ import annotations

from ..codecs.sse import encode_event

__all__ = ["DONE", "sse"]

DONE = b"data: [DONE]\n\n"


def sse(data: str, event: str | None = None) -> bytes:
    return encode_event(data, event)
