"""Request capture for debugging: the upstream exchanges of chosen requests, on disk.

Opt-in and time-boxed (``gateway.capture`` in the config): only requests for the listed
models (asked, or the upstream model id served) are captured, by default only
those that failed, and only until ``for`` has passed since the gateway started. Each
exchange is one JSON line in ``DIR/capture.jsonl`` — the upstream request (method, path,
headers, body) and the upstream answer (status, headers, body) — with credentials
redacted from headers, key-like strings scrubbed from every text, and the configured
body fields (``redact``) replaced wherever they appear. Files rotate by size
(``capture.1.jsonl`` is the previous file; ``files`` are kept).

Lines are written by one background thread from a bounded queue, so a request never
waits on the disk; when the queue is full a capture is dropped and counted.
``modelwire emulate --replay DIR`` serves the captured answers to the same requests
(:mod:`modelwire.emulator.replay`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import logging
import os
import pathlib
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .scrub import REDACTED, scrub

__all__ = ["Capture", "CaptureSettings", "CapturingTransport", "api_mode_of"]

log = logging.getLogger("modelwire.gateway")

# header names that carry credentials, and words that mark one
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key",
                             "cookie", "set-cookie", "x-goog-api-key"})
_SECRET_WORDS = ("key", "token", "secret", "auth", "password")


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    """What to capture (``gateway.capture``): see the module docstring."""

    dir: str
    models: tuple[str, ...] = ()  # model names or globs, asked or served
    failing_only: bool = True
    for_s: float = 3600.0  # the time box, from the gateway's start
    max_bytes: int = 10_000_000  # per file, before it rotates
    files: int = 5  # rotated files kept, the current one included
    redact: tuple[str, ...] = ()  # body field names replaced wherever they appear


class Capture:
    """The capture of one gateway process; :meth:`close` writes what is queued."""

    def __init__(self, settings: CaptureSettings, *, clock: Callable[[], float] = time.time,
                 queue_size: int = 256) -> None:
        self.settings = settings
        self.clock = clock
        self.until = clock() + settings.for_s
        self.dropped = 0
        self.written = 0
        self._folder = pathlib.Path(os.path.expanduser(settings.dir))
        self._folder.mkdir(parents=True, exist_ok=True)
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=queue_size)
        self._redact = frozenset(name.lower() for name in settings.redact)
        self._thread = threading.Thread(target=self._write_all, name="modelwire-capture",
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ deciding
    def open_for(self, failed: bool) -> bool:
        """Whether an exchange that ``failed`` (or not) may be captured now: inside the
        time box, and a failure unless ``failing_only`` is off."""
        return self.clock() < self.until and (failed or not self.settings.failing_only)

    def covers(self, *names: str | None) -> bool:
        """Whether any of ``names`` (the model asked, the model served) is listed."""
        return any(fnmatch.fnmatchcase(n, pattern) for n in names if n
                   for pattern in self.settings.models)

    # ------------------------------------------------------------ recording
    def record(self, *, model: str, api_mode: str, method: str, path: str, headers: Mapping[str, str], body: bytes, status: int,
               answer_headers: Mapping[str, str], answer: bytes, failed: bool) -> None:
        """Queue one exchange (never blocks: a full queue drops it and counts the drop)."""
        line = orjson.dumps({
            "v": 1,
            "time": round(self.clock(), 3),
            "model": model,
            "api_mode": api_mode,
            "failed": failed,
            "request": {"method": method, "path": path, "headers": self._headers(headers),
                        "body": self._body(body)},
            "answer": {"status": status, "headers": self._headers(answer_headers),
                       "body": scrub(answer.decode("utf-8", "replace"))},
        }) + b"\n"
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued and stop the writer."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def _headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in headers.items():
            low = name.lower()
            secret = low in _SECRET_HEADERS or any(word in low for word in _SECRET_WORDS)
            out[low] = REDACTED if secret else scrub(value)
        return out

    def _body(self, body: bytes) -> Any:
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            return scrub(body.decode("utf-8", "replace"))
        return self._clean(data)

    def _clean(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if str(k).lower() in self._redact else self._clean(v)
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        if isinstance(value, str):
            return scrub(value)
        return value

    # ------------------------------------------------------------ writing
    def _write_all(self) -> None:
        path = self._folder / "capture.jsonl"
        while True:
            line = self._queue.get()
            if line is None:
                return
            try:
                if path.exists() and path.stat().st_size + len(line) > self.settings.max_bytes:
                    self._rotate(path)
                with path.open("ab") as out:
                    out.write(line)
                self.written += 1
            except OSError as exc:  # a full disk loses captures, never a request
                self.dropped += 1
                log.warning("capture: cannot write %s: %s", path, exc)

    def _rotate(self, path: pathlib.Path) -> None:
        keep = max(1, self.settings.files)
        oldest = self._folder / f"capture.{keep - 1}.jsonl"
        if keep == 1:
            path.unlink(missing_ok=True)
            return
        oldest.unlink(missing_ok=True)
        for n in range(keep - 2, 0, -1):
            older = self._folder / f"capture.{n}.jsonl"
            if older.exists():
                older.rename(self._folder / f"capture.{n + 1}.jsonl")
        path.rename(self._folder / "capture.1.jsonl")


_STREAM_CAP = 4_000_000  # bytes of one streamed answer kept for a capture


def api_mode_of(path: str) -> str:
    """The protocol an upstream request speaks, from its path."""
    if path.endswith("/messages") or "/messages?" in path:
        return "anthropic_messages"
    if path.endswith("/responses"):
        return "responses"
    return "chat_completions"


class CapturingTransport:
    """An async transport handing each exchange of one configured model to a
    :class:`Capture` when it wants it (the wrapped transport does the work)."""

    def __init__(self, inner: Any, capture: Capture, *, model: str) -> None:
        self.inner = inner
        self.capture = capture
        self.model = model

    async def send(self, request: Any, base_url: str, timeouts: Any) -> Any:
        resp = await self.inner.send(request, base_url, timeouts)
        self._record(request, resp.status, resp.headers, resp.body)
        return resp

    @contextlib.asynccontextmanager
    async def stream(self, request: Any, base_url: str, timeouts: Any) -> AsyncIterator[Any]:
        async with self.inner.stream(request, base_url, timeouts) as resp:
            tee = _Tee(resp, keep=self.capture.open_for(resp.status >= 400))
            try:
                yield tee
            finally:
                self._record(request, resp.status, resp.headers, b"".join(tee.seen))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _record(self, request: Any, status: int, headers: Mapping[str, str], body: bytes) -> None:
        failed = status >= 400
        if not self.capture.open_for(failed):
            return  # decided before the body is parsed for the served model's name
        if not self.capture.covers(self.model, _model_of(request.body)):
            return
        self.capture.record(model=self.model, api_mode=api_mode_of(request.path), method=request.method,
                            path=request.path, headers=request.headers, body=request.body,
                            status=status, answer_headers=headers, answer=body,
                            failed=failed)


class _Tee:
    """A streamed answer whose bytes are kept (up to a bound) as the Client reads them."""

    def __init__(self, resp: Any, *, keep: bool) -> None:
        self._resp = resp
        self._keep_bytes = keep  # False: this answer cannot be captured, nothing is kept
        self.status = resp.status
        self.headers = resp.headers
        self.seen: list[bytes] = []
        self._size = 0

    def _keep(self, data: bytes) -> None:
        if self._keep_bytes and self._size < _STREAM_CAP:
            self.seen.append(data[: _STREAM_CAP - self._size])
            self._size += len(data)

    async def read(self) -> bytes:
        data = await self._resp.read()
        self._keep(data)
        return data

    async def aiter_chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self._resp.aiter_chunks():
            self._keep(chunk)
            yield chunk

    def close(self) -> None:
        self._resp.close()


def _model_of(body: bytes) -> str | None:
    try:
        data = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else None
