"""The transports on their own: proxies from the environment, error mapping, pooling."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from modelwire import AsyncClient, Client, ConnectError
from modelwire.codecs import EncodedRequest
from modelwire.transport import (
    AsyncHTTPTransport,
    SyncHTTPTransport,
    Timeouts,
    env_proxy,
)

HI = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
UPSTREAM = "http://llm.example.invalid/v1"


def test_env_proxy_follows_https_proxy_and_no_proxy(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.local:3128")
    assert env_proxy("https://api.openai.com") == "http://proxy.local:3128"
    assert env_proxy("http://api.openai.com") is None  # no HTTP_PROXY set
    monkeypatch.setenv("NO_PROXY", "openai.com,localhost")
    assert env_proxy("https://api.openai.com") is None
    assert env_proxy("https://api.anthropic.com") == "http://proxy.local:3128"


class ForwardProxy:
    """The smallest HTTP forward proxy: records each request target and relays the request
    to the emulator. The emulator is an origin server (an absolute-form target does not
    route there), so this is the one test-only server left: it plays the proxy only."""

    def __init__(self, upstream: str) -> None:
        self.targets: list[str] = []
        up = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                proxy.targets.append(self.path)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=5)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "proxy-connection", "connection")}
                conn.request("POST", urlsplit(self.path).path, body, headers)
                answer = conn.getresponse()
                data = answer.read()
                conn.close()
                self.send_response(answer.status)
                self.send_header("content-type", answer.getheader("content-type", ""))
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.mark.parametrize("cls", [Client, AsyncClient], ids=["sync-httpx", "async-aiohttp"])
async def test_both_transports_go_through_the_environments_proxy(wire, monkeypatch, cls):
    # a proxied request arrives at the proxy in absolute form; the emulator answers it
    proxy = ForwardProxy(wire.emu.base_url)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    client = cls(f"custom/{wire.model}", base_url=UPSTREAM, api_mode="chat_completions",
                 api_key=KEY)
    try:
        done = client.complete(HI)
        if cls is AsyncClient:
            done = await done
            await client.close()
        else:
            client.close()
    finally:
        proxy.close()
    assert done.text.startswith('You asked: "hi"')
    assert proxy.targets == [UPSTREAM + "/chat/completions"]
    assert [r["model"] for r in wire.requests()] == [wire.model]


def _request(model="m"):
    body = b'{"model": "%s", "messages": [{"role": "user", "content": "hi"}]}' % model.encode()
    return EncodedRequest("POST", "/chat/completions", {"content-type": "application/json",
                                                        "authorization": f"Bearer {KEY}"}, body)


def test_connection_refused_maps_to_connect_error_with_the_url_and_no_secret():
    transport = SyncHTTPTransport()
    request = EncodedRequest("POST", "/chat/completions",
                             {"authorization": f"Bearer {KEY}"}, b"{}")
    with pytest.raises(ConnectError) as info:
        transport.send(request, "http://127.0.0.1:9", Timeouts(connect=1.0))
    assert "127.0.0.1:9/chat/completions" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(request)
    assert info.value.__cause__ is not None  # chained from the httpx error
    transport.close()


async def test_async_connection_refused_maps_to_connect_error():
    transport = AsyncHTTPTransport()
    with pytest.raises(ConnectError) as info:
        await transport.send(_request(), "http://127.0.0.1:9", Timeouts(connect=1.0))
    assert info.value.__cause__ is not None
    await transport.aclose()


def test_sync_connections_are_reused(wire):
    transport = SyncHTTPTransport()
    for _ in range(3):
        resp = transport.send(_request(wire.model), wire.base_url("chat_completions"), Timeouts())
        assert resp.status == 200
    transport.close()
    ports = {r["client_port"] for r in wire.requests()}
    assert len(wire.requests()) == 3
    assert len(ports) == 1  # one pooled connection served all three


async def test_async_connections_are_reused(wire):
    transport = AsyncHTTPTransport()
    for _ in range(3):
        resp = await transport.send(_request(wire.model), wire.base_url("chat_completions"),
                                    Timeouts())
        assert resp.status == 200 and resp.headers["content-type"] == "application/json"
    await transport.aclose()
    assert len(wire.requests()) == 3
    assert len({r["client_port"] for r in wire.requests()}) == 1


def test_the_dry_run_goes_through_a_real_loopback_socket_or_memory_when_none_is_allowed(monkeypatch):
    # Client construction sends one request through the HTTP stack offline: to a listener of
    # its own on 127.0.0.1 (so the socket path is warm), or from memory where binding fails
    import socket

    transport = SyncHTTPTransport()
    answer = b'{"ok": 1}'
    opened = []
    real = socket.socket

    class Watching(real):
        def bind(self, address):
            opened.append(address)
            return super().bind(address)

    monkeypatch.setattr(socket, "socket", Watching)
    assert transport.warm(_request(), UPSTREAM, Timeouts(), answer) == answer
    assert opened and opened[0][0] == "127.0.0.1"  # never the upstream (llm.example.invalid)

    class Refusing(real):
        def bind(self, address):
            raise PermissionError("binding is not allowed here")

    monkeypatch.setattr(socket, "socket", Refusing)
    assert transport.warm(_request(), UPSTREAM, Timeouts(), answer) == answer
    transport.close()
