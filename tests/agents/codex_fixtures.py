"""Recording Codex CLI's requests as test fixtures (``MODELWIRE_RECORD_CODEX_FIXTURES=1``).

:class:`RecordingProxy` sits between Codex and the gateway and keeps each request body;
:func:`write_fixture` writes one with its structure exact (fields, item order, tool names,
schema shapes) and Codex's own prose (developer instructions, context blocks, tool and
schema descriptions) replaced by placeholders of the same length; the test's paths, the
loopback host and per-run ids are replaced by fixed stand-ins.
"""

from __future__ import annotations

import http.server
import json
import pathlib
import re
import sys
import threading
from typing import Any, Self

import httpx

__all__ = ["FIXTURES", "RecordingProxy", "placeholder", "sanitize", "write_fixture"]

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "codex"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MILLIS = re.compile(r"(?<![0-9])1[0-9]{12}(?![0-9])")  # Unix times in ms (turn metadata)
_HOST = re.compile(r"127\.0\.0\.1:[0-9]+")
_HOP = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding"}


def placeholder(text: str) -> str:
    """Prose of the same length, so size-dependent code sees the same request."""
    return ("prose " * (len(text) // 6 + 1))[:len(text)]


def _scrub(value: str, paths: dict[str, str]) -> str:
    for path, stand_in in paths.items():
        value = value.replace(path, stand_in)
    value = _HOST.sub("127.0.0.1:0", _UUID.sub("00000000-0000-0000-0000-000000000000", value))
    return _MILLIS.sub("1000000000000", value)


def _strings(value: Any, paths: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _scrub(value, paths)
    if isinstance(value, list):
        return [_strings(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _strings(v, paths) for k, v in value.items()}
    return value


def _descriptions(value: Any) -> Any:
    """Every ``description`` in a tool (its own and its schema's) as a placeholder."""
    if isinstance(value, list):
        return [_descriptions(v) for v in value]
    if isinstance(value, dict):
        return {k: placeholder(v) if k == "description" and isinstance(v, str) else _descriptions(v)
                for k, v in value.items()}
    return value


def _is_codex_prose(item: dict[str, Any], text: str) -> bool:
    # developer messages are Codex's instructions; user-role blocks it writes itself are
    # tagged (<environment_context>, AGENTS.md instructions...); the test's prompts are not
    return item.get("role") == "developer" or text.lstrip().startswith(("<", "# AGENTS.md"))


def sanitize(body: dict[str, Any], paths: dict[str, str]) -> dict[str, Any]:
    out = dict(body)
    if isinstance(out.get("instructions"), str):
        out["instructions"] = placeholder(out["instructions"])
    out["tools"] = _descriptions(out.get("tools") or [])
    items = []
    for item in out.get("input") or ():
        if item.get("type") == "message" and isinstance(item.get("content"), list):
            item = dict(item, content=[
                dict(p, text=placeholder(p["text"])) if isinstance(p.get("text"), str)
                and _is_codex_prose(item, p["text"]) else p for p in item["content"]])
        items.append(item)
    out["input"] = items
    return _strings(out, paths)


def write_fixture(path: pathlib.Path, body: dict[str, Any], cwd: pathlib.Path, home: pathlib.Path) -> None:
    paths = {str(cwd): "/work", str(home): "/home/codex", sys.executable: "python3"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sanitize(body, paths), indent=1, ensure_ascii=False) + "\n")


class RecordingProxy:
    """``with RecordingProxy(target) as proxy``: forwards to ``target`` over loopback,
    streaming answers back as they come, and keeps each JSON request body in ``bodies``."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.bodies: list[dict[str, Any]] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if body[:1] == b"{":
                    proxy.bodies.append(json.loads(body))
                self._forward(body)

            def do_GET(self) -> None:
                self._forward(b"")

            def _forward(self, body: bytes) -> None:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                with httpx.stream(self.command, proxy.target + self.path, headers=headers, content=body or None,
                                  timeout=60) as answer:
                    self.send_response(answer.status_code)
                    for key, value in answer.headers.items():
                        if key.lower() not in _HOP | {"content-encoding"}:
                            self.send_header(key, value)
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for chunk in answer.iter_raw():
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
