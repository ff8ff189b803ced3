"""Terminal sparklines: a row of block characters for a series of numbers, or ASCII
where the terminal cannot show them."""

from __future__ import annotations

import codecs
from collections.abc import Sequence

__all__ = ["BLOCKS", "RAMP_ASCII", "sparkline", "unicode_ok"]

BLOCKS = "▁▂▃▄▅▆▇█"
RAMP_ASCII = "_.:-=+*#"


def sparkline(values: Sequence[float], *, ascii: bool = False) -> str:
    """One character per value, scaled to the largest: zero is the lowest mark and any
    value above zero at least the second, so a small spend never reads as none."""
    ramp = RAMP_ASCII if ascii else BLOCKS
    top = max(values, default=0)
    if top <= 0:
        return ramp[0] * len(values)
    steps = len(ramp) - 1
    return "".join(ramp[0] if v <= 0 else ramp[max(1, round(v / top * steps))] for v in values)


def unicode_ok(encoding: str | None) -> bool:
    """Whether a stream with ``encoding`` can print the block characters."""
    if not encoding:
        return False
    try:
        BLOCKS.encode(codecs.lookup(encoding).name)
    except (LookupError, UnicodeEncodeError):
        return False
    return True
