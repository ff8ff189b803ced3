"""``EmbeddingSpec`` lives on the bottom floor (:mod:`modelwire.wire.embedding`) with the
profile that carries it; this path stays for the catalog rows and callers."""

from __future__ import annotations

from ..wire.embedding import EmbeddingEncoding, EmbeddingSpec, InputType

__all__ = ["EmbeddingEncoding", "EmbeddingSpec", "InputType"]
