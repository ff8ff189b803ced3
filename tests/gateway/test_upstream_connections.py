"""Many concurrent streams toward one provider each get an upstream connection at once."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Self

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

STREAMS = 130  # past the transport's default of 100 connections per origin
KEY = "gw-test-key-streams-0123456789"


class HeldStreams:
    """A Chat Completions upstream on 127.0.0.1 that sends each stream's first chunk and
    then holds it open until :attr:`release` is set; counts the streams it holds."""

    def __init__(self) -> None:
        self.open = 0
        self.port = 0
        self.release: asyncio.Event | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self.release = asyncio.Event()
        server = self._loop.run_until_complete(asyncio.start_server(self._one, "127.0.0.1", 0, backlog=512))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        held = asyncio.all_tasks(self._loop)  # the streams still held: ended here, in their loop
        for task in held:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*held, return_exceptions=True))
        self._loop.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            chunk = json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"},
                                             "finish_reason": None}]}).encode()
            event = b"data: " + chunk + b"\n\n"
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                         + b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
            self.open += 1
            assert self.release is not None
            await self.release.wait()
            writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(b"data: [DONE]\n\n"), b"data: [DONE]\n\n"))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def _first_chunks(port: int, count: int) -> int:
    body = json.dumps({"model": "held", "stream": True, "messages": [{"role": "user", "content": "go"}]}).encode()
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
               b"authorization: Bearer %s\r\ncontent-length: %d\r\n\r\n%s" % (KEY.encode(), len(body), body))
    writers = []

    async def one() -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writers.append(writer)
        writer.write(request)
        seen = b""
        while b'"hi"' not in seen:
            data = await reader.read(4096)
            if not data:
                return False
            seen += data
        return True

    try:
        results = await asyncio.wait_for(asyncio.gather(*(one() for _ in range(count)), return_exceptions=True), 60)
    finally:
        for w in writers:
            w.close()
    return sum(1 for r in results if r is True)


def test_more_streams_than_the_transports_default_pool_all_flow_toward_one_provider(tmp_path, monkeypatch):
    with HeldStreams() as upstream:
        path = tmp_path / "modelwire.yaml"
        path.write_text("models:\n  held: {provider: openai, model: held-1, "
                        f"base_url: 'http://127.0.0.1:{upstream.port}/v1', api_key_env: HELD_KEY}}\n"
                        "gateway:\n  keys_env: HELD_GATEWAY_KEYS\n  max_connections: 400\n")
        monkeypatch.setenv("HELD_KEY", "sk-" + "held-test")  # the upstream key: read by the Client
        with RunningGateway(load_config(str(path)), environ={"HELD_GATEWAY_KEYS": KEY}) as gw:
            flowing = asyncio.run(_first_chunks(gw.port, STREAMS))
    assert flowing == STREAMS
    assert upstream.open == STREAMS
