"""Request capture for debugging: the upstream exchanges of chosen requests, on disk.

Opt-in and time-boxed (``gateway.capture`` in the config). An upstream exchange is
captured when its model is listed in ``models`` (the model asked, or the upstream model id
served) **or** the client key the request came with is listed in ``keys`` (a virtual key's
name, or a ``keys_env`` key's :func:`~.auth.key_fingerprint`); both empty captures
nothing. Of those, by default only the exchanges that failed, and only until ``for`` has
passed since the gateway started. Each exchange is one JSON line in ``DIR/capture.jsonl``:
its id, time, model, key name, door and the gateway's request id (the access log's first
field), then the upstream request (method, path, headers, body) and the upstream answer
(status, headers, body), with credentials redacted from headers, key-like strings
scrubbed from every text, and the configured body fields (``redact``) replaced wherever
they appear. Files rotate by size (``capture.1.jsonl`` is the previous file; ``files``
are kept).

The gateway hands the key's name, the request id and the door to the capturing transport
as the request's :attr:`~modelwire.codecs.EncodedRequest.tags` (see :func:`request_tags`).
Lines are written by one background thread from a bounded queue, so a request never
waits on the disk; when the queue is full a capture is dropped and counted.
:meth:`Capture.index` and :meth:`Capture.read` (``GET /admin/captures``, the status page)
list and read them back; ``modelwire emulate --replay DIR`` serves the captured answers to
the same requests (:mod:`modelwire.emulator.replay`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import logging
import mmap
import os
import pathlib
import queue
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from .scrub import REDACTED, scrub

if TYPE_CHECKING:
    from ..codecs import EncodedRequest

__all__ = ["Capture", "CaptureSettings", "CapturingTransport", "api_mode_of", "captures_view",
           "index", "read", "request_tags"]

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
    keys: tuple[str, ...] = ()  # client key names or globs (virtual key names, env-<fingerprint>)
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
        self.folder = pathlib.Path(os.path.expanduser(settings.dir))
        self.folder.mkdir(parents=True, exist_ok=True)
        self._queue: queue.Queue[bytes | threading.Event | None] = queue.Queue(maxsize=queue_size)
        self._redact = frozenset(name.lower() for name in settings.redact)
        self._thread = threading.Thread(target=self._write_all, name="modelwire-capture",
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ deciding
    @property
    def enabled(self) -> bool:
        """Whether exchanges are captured now (inside the time box)."""
        return self.clock() < self.until

    def open_for(self, failed: bool) -> bool:
        """Whether an exchange that ``failed`` (or not) may be captured now: inside the
        time box, and a failure unless ``failing_only`` is off."""
        return self.clock() < self.until and (failed or not self.settings.failing_only)

    def covers(self, *names: str | None) -> bool:
        """Whether any of ``names`` (the model asked, the model served) is listed."""
        return any(fnmatch.fnmatchcase(n, pattern) for n in names if n
                   for pattern in self.settings.models)

    def covers_key(self, key: str | None) -> bool:
        """Whether the client key named ``key`` (None: no checked key) is listed."""
        return key is not None and any(fnmatch.fnmatchcase(key, pattern)
                                       for pattern in self.settings.keys)

    # ------------------------------------------------------------ recording
    def record(self, *, model: str, api_mode: str, method: str, path: str, headers: Mapping[str, str], body: bytes, status: int,
               answer_headers: Mapping[str, str], answer: bytes, failed: bool,
               key: str | None = None, door: str | None = None,
               request_id: str | None = None) -> str | None:
        """Queue one exchange and return its id (never blocks: a full queue drops it,
        counts the drop and returns None). ``key``: the client key's name, never the key."""
        capture_id = os.urandom(6).hex()
        # the summary fields come first and are scalars: index() reads a line's head only
        line = orjson.dumps({
            "v": 2,
            "id": capture_id,
            "time": round(self.clock(), 3),
            "model": model,
            "key": key,
            "door": door,
            "request_id": request_id,
            "api_mode": api_mode,
            "status": status,
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
            return None
        return capture_id

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until what was queued before this call is on disk (False: not in time)."""
        if not self._thread.is_alive():
            return False
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued and stop the writer."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    # ------------------------------------------------------------ reading
    def index(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest ``limit`` captures' summaries, newest first (see :func:`index`),
        this process's queued ones included. Reads files: call it in a thread."""
        self.flush()
        return index(self.folder, limit)

    def read(self, capture_id: str) -> dict[str, Any] | None:
        """One captured exchange, as written (redacted), or None (see :func:`read`)."""
        self.flush()
        return read(self.folder, capture_id)

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
        path = self.folder / "capture.jsonl"
        while True:
            line = self._queue.get()
            if line is None:
                return
            if isinstance(line, threading.Event):
                line.set()  # a flush: everything before it is written
                continue
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
        oldest = self.folder / f"capture.{keep - 1}.jsonl"
        if keep == 1:
            path.unlink(missing_ok=True)
            return
        oldest.unlink(missing_ok=True)
        for n in range(keep - 2, 0, -1):
            older = self.folder / f"capture.{n}.jsonl"
            if older.exists():
                older.rename(self.folder / f"capture.{n + 1}.jsonl")
        path.rename(self.folder / "capture.1.jsonl")


# ---------------------------------------------------------------- reading the files
MAX_LIMIT = 1000
_ID = re.compile(r"[0-9a-f]{12}")
_HEAD_END = b',"request":'  # the first field after a line's summary (no scalar holds it raw)
_SUMMARY = ("id", "time", "model", "key", "door", "status", "failed", "request_id", "api_mode")


def _files(folder: pathlib.Path) -> list[pathlib.Path]:
    """The capture files, newest first: capture.jsonl, then capture.1.jsonl, ..."""
    found = []
    for path in folder.glob("capture*.jsonl"):
        parts = path.name.split(".")
        if len(parts) == 2:
            found.append((0, path))
        elif len(parts) == 3 and parts[1].isdigit():
            found.append((int(parts[1]), path))
    return [path for _, path in sorted(found)]


@contextlib.contextmanager
def _mapped(path: pathlib.Path) -> Iterator[mmap.mmap | None]:
    """The file's bytes as an ``mmap`` (None: empty or gone): read without loading it."""
    try:
        f = path.open("rb")
    except FileNotFoundError:  # rotated away since it was listed
        yield None
        return
    with f:
        if os.fstat(f.fileno()).st_size == 0:
            yield None
            return
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            yield mm


def index(folder: str | os.PathLike[str], limit: int = 100) -> list[dict[str, Any]]:
    """The newest ``limit`` (at most :data:`MAX_LIMIT`) captures in ``folder``, newest
    first: ``id``, ``time``, ``model``, ``key``, ``door``, ``status``, ``failed``,
    ``request_id``, ``api_mode`` and ``bytes`` (the line's size on disk). Files are
    read from their ends and only each line's summary is parsed; lines without an
    ``id`` (written before ids were) are left out."""
    limit = max(0, min(limit, MAX_LIMIT))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()  # a rotation while reading may show a file twice
    root = pathlib.Path(os.path.expanduser(folder))
    for path in _files(root) if root.is_dir() else ():
        if len(out) >= limit:
            break
        with _mapped(path) as mm:
            if mm is not None:
                _summaries(mm, limit, out, seen)
    return out


def _summaries(mm: mmap.mmap, limit: int, out: list[dict[str, Any]], seen: set[str]) -> None:
    end = mm.rfind(b"\n") + 1  # a line still being written has no newline yet: skipped
    while end > 0 and len(out) < limit:
        start = mm.rfind(b"\n", 0, end - 1) + 1
        cut = mm.find(_HEAD_END, start, end)
        if cut > start:
            try:
                head = orjson.loads(mm[start:cut] + b"}")
            except orjson.JSONDecodeError:
                head = None
            capture_id = head.get("id") if isinstance(head, dict) else None
            if isinstance(head, dict) and isinstance(capture_id, str) and capture_id not in seen:
                seen.add(capture_id)
                entry = {name: head.get(name) for name in _SUMMARY}
                entry["bytes"] = end - start
                out.append(entry)
        end = start


def read(folder: str | os.PathLike[str], capture_id: str) -> dict[str, Any] | None:
    """The captured exchange ``capture_id`` in ``folder`` (the whole line, redacted as it
    was written), or None: unknown, or not an id at all (an id is never a path)."""
    if not isinstance(capture_id, str) or not _ID.fullmatch(capture_id):
        return None
    needle = b'{"v":2,"id":"' + capture_id.encode() + b'"'
    root = pathlib.Path(os.path.expanduser(folder))
    for path in _files(root) if root.is_dir() else ():
        with _mapped(path) as mm:
            if mm is None:
                continue
            if mm[:len(needle)] == needle:
                at = 0
            else:
                hit = mm.find(b"\n" + needle)
                if hit < 0:
                    continue
                at = hit + 1
            stop = mm.find(b"\n", at)
            try:
                record = orjson.loads(mm[at:stop if stop >= 0 else len(mm)])
            except orjson.JSONDecodeError:  # still being written
                return None
            return record if isinstance(record, dict) else None
    return None


def captures_view(capture: Capture | None, folder: str | None, limit: int = 100) -> dict[str, Any]:
    """``GET /admin/captures``'s answer (the status page shows the same): ``{"dir",
    "enabled", "captures"}``; ``capture`` None (capture off) still lists ``folder``'s files.
    Reads files: call it in a thread (``asyncio.to_thread``), never on the event loop."""
    if capture is not None:
        return {"dir": str(capture.folder), "enabled": capture.enabled, "captures": capture.index(limit)}
    return {"dir": folder or "", "enabled": False,
            "captures": index(folder, limit) if folder else []}


def request_tags(key: str | None, request_id: str, door: str) -> dict[str, str]:
    """The :attr:`~modelwire.codecs.EncodedRequest.tags` a gateway request's upstream
    exchanges carry to the capturing transport (``key``: the client key's name)."""
    tags = {"request_id": request_id, "door": door}
    if key is not None:
        tags["key"] = key
    return tags


_STREAM_CAP = 4_000_000  # bytes of one streamed answer kept for a capture


def api_mode_of(path: str) -> str:
    """The protocol an upstream request speaks, from its path."""
    if path.endswith("/messages") or "/messages?" in path:
        return "anthropic_messages"
    if path.endswith("/responses"):
        return "responses"
    return "chat_completions"


class CapturingTransport:
    """An async transport handing the exchanges of one configured model's client to a
    :class:`Capture` when it wants them (the wrapped transport does the work): by the
    model, or by the client key named in the request's ``tags``."""

    def __init__(self, inner: Any, capture: Capture, *, model: str) -> None:
        self.inner = inner
        self.capture = capture
        self.model = model

    async def send(self, request: EncodedRequest, base_url: str, timeouts: Any) -> Any:
        resp = await self.inner.send(request, base_url, timeouts)
        if self.wants(request, resp.status >= 400):
            self._record(request, resp.status, resp.headers, resp.body)
        return resp

    @contextlib.asynccontextmanager
    async def stream(self, request: EncodedRequest, base_url: str, timeouts: Any) -> AsyncIterator[Any]:
        async with self.inner.stream(request, base_url, timeouts) as resp:
            # decided at the answer's head: a stream nobody captures keeps none of its bytes
            wanted = self.wants(request, resp.status >= 400)
            tee = _Tee(resp, keep=wanted)
            try:
                yield tee
            finally:
                if wanted:
                    self._record(request, resp.status, resp.headers, b"".join(tee.seen))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def wants(self, request: EncodedRequest, failed: bool) -> bool:
        """Whether this exchange is captured (the module docstring's rule); the body is
        parsed for the served model's id only when nothing cheaper decided."""
        capture = self.capture
        if not capture.open_for(failed):
            return False
        tags = request.tags
        if tags is not None and capture.covers_key(tags.get("key")):
            return True
        if not capture.settings.models:
            return False
        return capture.covers(self.model) or capture.covers(_model_of(request.body))

    def _record(self, request: EncodedRequest, status: int, headers: Mapping[str, str], body: bytes) -> None:
        tags = request.tags or {}
        self.capture.record(model=self.model, api_mode=api_mode_of(request.path), method=request.method,
                            path=request.path, headers=request.headers, body=request.body,
                            status=status, answer_headers=headers, answer=body, failed=status >= 400,
                            key=tags.get("key"), door=tags.get("door"), request_id=tags.get("request_id"))


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
