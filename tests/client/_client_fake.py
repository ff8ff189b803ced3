"""A scripted provider on loopback for Client tests: real HTTP/1.1, real codec bytes.

Each POST takes the next scripted :class:`Reply` (default: a normal answer) and
answers in the protocol its path names (``/chat/completions``, ``/v1/messages``,
``/responses``), framed by the codecs' own encoders, so the Client decodes what a
real provider would send. Faults: error statuses with headers, a reset before or
after the first byte, a stall, malformed SSE, an empty stream, slow chunks.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from modelwire.codecs import codec_for
from modelwire.completion import Completion
from modelwire.events import (
    Finish,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from modelwire.types import empty_usage


@dataclass
class Reply:
    kind: str = "ok"  # ok | json | status | reset_before | reset_after | stall | malformed | empty
    text: str = "Hello from the fake provider"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    after: int = 2  # events sent before a reset / stall mid-stream
    gap: float = 0.0  # seconds between chunks (slow streams)
    tool: tuple[str, str] | None = None  # (name, arguments JSON) to call


def _mode(path: str) -> str:
    if path.endswith("/messages"):
        return "anthropic_messages"
    if path.endswith("/responses"):
        return "responses"
    return "chat_completions"


def _events(reply: Reply) -> list[Any]:
    words = reply.text.split(" ")
    events: list[Any] = [TextDelta(w if i == 0 else " " + w) for i, w in enumerate(words)]
    if reply.tool is not None:
        name, args = reply.tool
        half = len(args) // 2
        events += [ToolCallStart(0, "call_fake123", name), ToolCallDelta(0, args[:half]),
                   ToolCallDelta(0, args[half:]), ToolCallEnd(0)]
    usage = empty_usage()
    usage.update(prompt_tokens=5, completion_tokens=len(words), total_tokens=5 + len(words))
    events += [UsageEvent(usage), Finish("tool_calls" if reply.tool else "stop")]
    return events


class FakeProvider:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.disconnects = 0
        self.release = threading.Event()  # ends stalls early at teardown
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def close(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        """Poll observable state (never a blind sleep)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.005)
        return predicate()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                fake.requests.append({"path": self.path, "body": body,
                                      "headers": {k.lower(): v for k, v in self.headers.items()},
                                      "client_port": self.client_address[1]})
                reply = fake.replies.popleft() if fake.replies else Reply()
                try:
                    fake._answer(self, reply, body)
                except (BrokenPipeError, ConnectionResetError):
                    fake.disconnects += 1

        return Handler

    # ------------------------------------------------------------------ replies
    def _answer(self, h: BaseHTTPRequestHandler, reply: Reply, body: dict[str, Any]) -> None:
        mode = _mode(h.path)
        if reply.kind == "reset_before":
            h.connection.shutdown(socket.SHUT_RDWR)
            h.close_connection = True
            return
        if reply.kind == "stall" and reply.after == 0:
            self.release.wait(5.0)  # bounded; the client's read timeout fires first
            h.close_connection = True
            return
        if reply.kind == "status":
            data = json.dumps(reply.body).encode() if not isinstance(reply.body, bytes) else reply.body
            h.send_response(reply.status)
            h.send_header("content-type", "application/json")
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.send_header("content-length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            return
        model = body.get("model", "fake-1")
        if not body.get("stream") or reply.kind == "json":  # "json": ignores stream: true
            self._json(h, mode, reply, model)
            return
        self._sse(h, mode, reply, model)

    def _json(self, h: BaseHTTPRequestHandler, mode: str, reply: Reply, model: str) -> None:
        from modelwire.accumulate import Accumulator

        acc = Accumulator(model=model, id="fake-id-1")
        for event in _events(reply):
            acc.feed(event)
        completion: Completion = acc.result()
        data = json.dumps(codec_for(mode).encode_response(completion)).encode()
        h.send_response(200)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _sse(self, h: BaseHTTPRequestHandler, mode: str, reply: Reply, model: str) -> None:
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()

        def chunk(data: bytes) -> None:
            if data:
                h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                h.wfile.flush()

        if reply.kind == "empty":
            chunk(b": nothing to say\n\n")
            h.wfile.write(b"0\r\n\r\n")
            return
        if reply.kind == "malformed":
            chunk(b"data: {this is not json\n\n")
            h.wfile.write(b"0\r\n\r\n")
            return
        encoder = codec_for(mode).StreamEncoder(model=model, id="fake-id-1")
        for i, event in enumerate(_events(reply)):
            if reply.kind in ("reset_after", "stall") and i == reply.after:
                if reply.kind == "stall":
                    self.release.wait(5.0)
                h.connection.shutdown(socket.SHUT_RDWR)  # no terminating chunk: a cut body
                h.close_connection = True
                return
            chunk(encoder.feed(event))
            if reply.gap:
                time.sleep(reply.gap)  # a slow provider (server side), not test waiting
        chunk(encoder.close())
        h.wfile.write(b"0\r\n\r\n")
