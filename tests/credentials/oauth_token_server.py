"""A tiny OAuth 2 server for tests: PKCE S256 codes and single-use refresh tokens.

Stands in for the emulator's ``/oauth/authorize`` and ``/oauth/token`` (same
shapes: form-encoded token requests, RFC 6749 error bodies).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import secrets
import threading
import urllib.parse
from typing import Any


class TokenServer:
    def __init__(self, expires_in: int = 3600) -> None:
        self.expires_in = expires_in
        self.codes: dict[str, tuple[str, str]] = {}  # code -> (challenge, redirect_uri)
        self.live_refresh: set[str] = set()
        self.counts = {"authorize": 0, "authorization_code": 0, "refresh_token": 0,
                       "refresh_rejected": 0}
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                if url.path != "/oauth/authorize" or q.get("code_challenge_method") != "S256":
                    self.send_error(400)
                    return
                code = secrets.token_urlsafe(12)
                with server.lock:
                    server.counts["authorize"] += 1
                    server.codes[code] = (q["code_challenge"], q["redirect_uri"])
                target = q["redirect_uri"] + "?" + urllib.parse.urlencode(
                    {"code": code, "state": q.get("state", "")})
                self.send_response(302)
                self.send_header("location", target)
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                status, body = server.token(form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def issue(self) -> dict[str, Any]:
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.live_refresh.add(refresh)
        return {"access_token": "at-" + secrets.token_urlsafe(24), "refresh_token": refresh,
                "expires_in": self.expires_in, "token_type": "Bearer"}

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            grant = form.get("grant_type")
            if grant == "authorization_code":
                challenge, redirect = self.codes.pop(form.get("code", ""), ("", ""))
                digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
                expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                if not challenge or expected != challenge or redirect != form.get("redirect_uri"):
                    return 400, {"error": "invalid_grant"}
                self.counts["authorization_code"] += 1
                return 200, self.issue()
            if grant == "refresh_token":
                token = form.get("refresh_token", "")
                if token not in self.live_refresh:  # single use: a replay is refused
                    self.counts["refresh_rejected"] += 1
                    return 400, {"error": "invalid_grant", "error_description": "reused"}
                self.live_refresh.discard(token)
                self.counts["refresh_token"] += 1
                return 200, self.issue()
            return 400, {"error": "unsupported_grant_type"}

    def __enter__(self) -> TokenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
