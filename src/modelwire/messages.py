"""Message rules (placeholder until prepare_conversation lands)."""

from __future__ import annotations

from ._thinktags import ThinkTagSplitter, split_think_tags

__all__ = ["ThinkTagSplitter", "split_think_tags"]
