"""The raw floor: the least a Python hop adds, for ``bench/gateway.py``.

Run: ``python bench/_rawfloor.py PORT UPSTREAM_BASE``.

A uvloop server parsing requests with httptools, and per client connection one kept-alive
upstream connection whose answers are parsed with httptools and relayed as they arrive
(chunked; what one read of the answer gives goes out in one write). No ASGI, no framework, no auth, no checks: nothing a gateway could leave out.
What it adds over the upstream is the cost of the two extra loopback hops and the event
loop on this machine; ``floor`` (uvicorn + aiohttp) is the same job on stock libraries.
"""

from __future__ import annotations

import asyncio
import sys

import httptools
import uvloop

UPSTREAM: tuple[str, int] = ("127.0.0.1", 0)


class _Up(asyncio.Protocol):
    """The upstream side of one client connection."""

    def __init__(self, down: _Down) -> None:
        self.down = down
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.ctype = b"application/json"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        # what one read of the upstream's answer gives goes to the client in one write
        self.parser.feed_data(data)
        self.down.flush()

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"content-type":
            self.ctype = value

    def on_headers_complete(self) -> None:
        self.down.write(b"HTTP/1.1 %d OK\r\ncontent-type: %s\r\ntransfer-encoding: chunked\r\n\r\n"
                        % (self.parser.get_status_code(), self.ctype))

    def on_body(self, body: bytes) -> None:
        self.down.write(b"%x\r\n%s\r\n" % (len(body), body))

    def on_message_complete(self) -> None:
        self.down.write(b"0\r\n\r\n")


class _Down(asyncio.Protocol):
    """One client connection."""

    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.up: _Up | None = None
        self.url = b""
        self.body: list[bytes] = []
        self.out: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.out.append(data)

    def flush(self) -> None:
        if self.out and self.transport is not None:
            self.transport.write(b"".join(self.out))
        self.out = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.up is not None and self.up.transport is not None:
            self.up.transport.close()

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_url(self, url: bytes) -> None:
        self.url = url

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        body = b"".join(self.body)
        self.body = []
        if self.parser.get_method() == b"GET":
            self.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            self.flush()
            return
        request = (b"POST %s HTTP/1.1\r\nhost: upstream\r\ncontent-type: application/json\r\n"
                   b"content-length: %d\r\n\r\n%s" % (self.url, len(body), body))
        if self.up is None:
            self.up = _Up(self)
            asyncio.get_running_loop().create_task(self._connect(request))
        else:
            self.up.parser = httptools.HttpResponseParser(self.up)
            assert self.up.transport is not None
            self.up.transport.write(request)

    async def _connect(self, request: bytes) -> None:
        assert self.up is not None
        up = self.up
        await asyncio.get_running_loop().create_connection(lambda: up, *UPSTREAM)
        assert up.transport is not None
        up.transport.write(request)


async def _main(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(_Down, "127.0.0.1", port)
    await server.serve_forever()


if __name__ == "__main__":
    host_port = sys.argv[2].split("://", 1)[-1].rstrip("/").rsplit(":", 1)
    UPSTREAM = (host_port[0], int(host_port[1]))
    uvloop.run(_main(int(sys.argv[1])))
