"""``python -m modelwire.cli``."""

from . import run

run()
