"""A canned upstream for gateway tests that need an answer the emulator does not give:
``canned_upstream(answer)`` serves ``answer(path, request_json) -> (content_type, body)``
on a free loopback port, in a thread, for the ``with`` block."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

Answer = Callable[[str, dict[str, Any]], tuple[str, bytes]]


@contextlib.contextmanager
def canned_upstream(answer: Answer) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT/v1``) of a server answering every POST."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # the stdlib handler calls it by this name
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            kind, body = answer(self.path, json.loads(raw or b"{}"))
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
