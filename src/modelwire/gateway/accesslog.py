"""The access log's handler: one line per request, written without a ``LogRecord``.

The access log is a ``logging`` logger (``modelwire.gateway.access``), so any logging
setup can take it over. ``modelwire serve`` gives it an :class:`AccessHandler` on stderr;
while that handler is the logger's only one, with its own format and no filters, a line
is formatted and written directly: the same text the logging machinery would produce, at
a fraction of its cost (docs/performance, "Why the code is as it is"). Any other setup
goes through ``logging`` as usual.
"""

from __future__ import annotations

import logging
import time
from typing import Any, TextIO

__all__ = ["DATEFMT", "FORMAT", "AccessHandler", "write"]

FORMAT = "%(asctime)s.%(msecs)03d access %(message)s"
DATEFMT = "%Y-%m-%dT%H:%M:%S"
_MESSAGE = "%s %s model=%s upstream=%s status=%d latency_ms=%.1f tokens=%d"


class AccessHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A ``StreamHandler`` the access log may write to directly (see the module)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self._own = logging.Formatter(FORMAT, DATEFMT)
        self.setFormatter(self._own)
        self._second = -1
        self._stamp = ""

    def direct(self) -> bool:
        """Whether a line may skip ``logging``: the handler still formats as it was made."""
        return not self.filters and self.formatter is self._own

    def write_line(self, message: str) -> None:
        now = time.time()
        second = int(now)
        if second != self._second:  # local time, as the Formatter's converter
            self._second, self._stamp = second, time.strftime(DATEFMT, time.localtime(second))
        line = f"{self._stamp}.{int((now - second) * 1000):03d} access {message}{self.terminator}"
        with self.lock:  # type: ignore[union-attr]
            try:
                self.stream.write(line)
                self.flush()
            except (OSError, ValueError):  # a closed or broken stream must not stop the server
                self.handleError(logging.makeLogRecord({"msg": message}))


def write(logger: logging.Logger, args: tuple[Any, ...]) -> None:
    """One access line for ``args`` (request id, door, model, upstream, status, latency
    in ms, tokens): directly when ``logger``'s setup allows it, else through logging."""
    handlers = logger.handlers
    if (len(handlers) == 1 and type(handlers[0]) is AccessHandler and not logger.filters
            and not logger.propagate and handlers[0].level <= logging.INFO and handlers[0].direct()):
        handlers[0].write_line(_MESSAGE % args)
        return
    logger.info(_MESSAGE, *args)
