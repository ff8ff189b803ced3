"""What the emulator remembers: the request log, counters, stored Responses and the
prompt-cache prefixes it has seen. Shared between the server thread and the
controlling test thread, so every access takes the lock."""

from __future__ import annotations

import copy
import hashlib
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Mapping
from typing import Any

from .wire import TokenCount, tokens

__all__ = ["EmulatorState", "mask_headers"]

_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "cookie", "proxy-authorization")


def mask_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Lower-cased headers with every credential masked (first 6 and last 4 characters)."""
    out = {}
    for key, value in headers.items():
        key = key.lower()
        if key in _SECRET_HEADERS:
            value = f"{value[:6]}…{value[-4:]}" if len(value) > 14 else "…"
        out[key] = value
    return out


class EmulatorState:
    def __init__(self, max_log: int = 2000, max_stored: int = 500) -> None:
        self._lock = threading.Lock()
        self._log: deque[dict[str, Any]] = deque(maxlen=max_log)
        self._n = 0
        self.counters: dict[str, Counter[str]] = {
            "endpoints": Counter(), "status": Counter(), "oauth": Counter(),
            "refresh_tokens": Counter(),
        }
        self._stored: OrderedDict[str, list[Any]] = OrderedDict()
        self._max_stored = max_stored
        self._prefixes: set[str] = set()

    # ------------------------------------------------------------------ log
    def record(self, **fields: Any) -> dict[str, Any]:
        with self._lock:
            self._n += 1
            entry = {"n": self._n, "time": time.time(), "status": None, "completed": False,
                     "disconnected": False, "disconnected_at": None, "fault": None, **fields}
            self._log.append(entry)
            self.counters["endpoints"][fields.get("endpoint", "")] += 1
            return entry

    def update(self, entry: dict[str, Any], **fields: Any) -> None:
        with self._lock:
            entry.update(fields)
            if "status" in fields and fields["status"] is not None:
                self.counters["status"][str(fields["status"])] += 1

    def count(self, group: str, key: str) -> None:
        with self._lock:
            self.counters[group][key] += 1

    def snapshot(self, since: int = 0, endpoint: str | None = None) -> dict[str, Any]:
        """The log (entries numbered above ``since``, of ``endpoint`` if given) and counters."""
        with self._lock:
            entries = [e for e in self._log
                       if e["n"] > since and (endpoint is None or e.get("endpoint") == endpoint)]
            return {
                "requests": copy.deepcopy(entries),
                "counters": {k: dict(v) for k, v in self.counters.items()},
            }

    def reset(self) -> None:
        with self._lock:
            self._log.clear()
            for counter in self.counters.values():
                counter.clear()

    # ------------------------------------------------------------ Responses
    def store_response(self, response_id: str, items: list[Any]) -> None:
        with self._lock:
            self._stored[response_id] = items
            while len(self._stored) > self._max_stored:
                self._stored.popitem(last=False)

    def stored(self) -> dict[str, list[Any]]:
        with self._lock:
            return dict(self._stored)

    # ---------------------------------------------------------------- usage
    def usage(self, prompt_chars: int, prefix_chars: int, prefix_key: bytes, output_chars: int,
              reasoning_chars: int) -> TokenCount:
        """Token counts: ceil(chars / 4); a cache_control prefix is written once, then read."""
        total = tokens(prompt_chars)
        read = write = 0
        if prefix_chars:
            cached = min(tokens(prefix_chars), total)
            digest = hashlib.sha256(prefix_key).hexdigest()
            with self._lock:
                seen = digest in self._prefixes
                self._prefixes.add(digest)
            read, write = (cached, 0) if seen else (0, cached)
        reasoning = tokens(reasoning_chars)
        return TokenCount(total, max(tokens(output_chars) + reasoning, 1), reasoning, read, write)
