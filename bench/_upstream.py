"""A fast fake Chat Completions upstream for ``bench/gateway.py``.

Run: ``python bench/_upstream.py PORT [--chunks N]``.

The emulator is a full Python ASGI app (about 1,500 requests/s and 19,000 SSE events/s
on one core here), so it cannot feed a gateway that should stream 50,000 events/s. This
server answers from canned bytes on a raw asyncio protocol (uvloop when installed), the
way the issue's own measurement used a fake upstream (15,563 requests/s):

* ``POST .../chat/completions`` without ``"stream": true``: a ~1 KiB ``chat.completion``;
* with it: ``N`` text-delta chunks (first one carries the role), a finish chunk, a usage
  chunk and ``data: [DONE]``, each SSE event written separately (one ``write`` each, as
  a model server produces them; the kernel may still coalesce them). ``N`` is the
  request's ``max_tokens`` (or ``max_completion_tokens``), at most 4,096, else
  ``--chunks``: a model writes about one chunk per token. The first chunk goes out with
  the head, the rest ``--first-gap-ms`` (1) later;
* ``GET /v1/models``: a one-model list (the bench's health check).

HTTP/1.1 keep-alive with ``content-length`` (the bodies are known in advance). The
requests are parsed just enough to route them; this is a load target, not a server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re

_CREATED = 1764000000
_MAX_TOKENS = re.compile(rb'"max(?:_completion)?_tokens"\s*:\s*(\d+)')


def _chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
    body: dict = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": _CREATED,
                  "model": "bench-1", "choices": [] if usage else
                  [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def stream_events(chunks: int) -> list[bytes]:
    words = [f"word{i % 97} " for i in range(chunks)]
    events = [_chunk({"role": "assistant", "content": words[0]})]
    events += [_chunk({"content": w}) for w in words[1:]]
    events.append(_chunk({}, "stop"))
    events.append(_chunk({}, usage={"prompt_tokens": 20, "completion_tokens": chunks,
                                    "total_tokens": 20 + chunks}))
    events.append(b"data: [DONE]\n\n")
    return events


def json_answer() -> bytes:
    text = ("Streaming lets the first words reach the reader while the rest is still being "
            "generated, so the wait feels shorter. It also lets a client stop early. ") * 4
    return json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": _CREATED, "model": "bench-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 60, "total_tokens": 80},
    }, separators=(",", ":")).encode()


def _head(ctype: str, length: int) -> bytes:
    return (f"HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {length}\r\n"
            "connection: keep-alive\r\n\r\n").encode()


class _Answers:
    def __init__(self, chunks: int, first_gap: float) -> None:
        self.default = chunks
        self.first_gap = first_gap
        self._streams: dict[int, tuple[bytes, list[bytes]]] = {}
        body = json_answer()
        self.json = _head("application/json", len(body)) + body
        models = b'{"object":"list","data":[{"id":"bench-1","object":"model","owned_by":"bench"}]}'
        self.models = _head("application/json", len(models)) + models

    def stream(self, body: bytes) -> tuple[bytes, list[bytes]]:
        n = self.default
        m = _MAX_TOKENS.search(body)
        if m:
            n = max(1, min(4096, int(m.group(1))))
        hit = self._streams.get(n)
        if hit is None:
            events = stream_events(n)
            hit = self._streams[n] = (_head("text/event-stream", sum(map(len, events))), events)
        return hit


class KeepAliveHTTP(asyncio.Protocol):
    """HTTP/1.1 requests on a keep-alive connection, parsed just enough to answer them:
    ``answer(request_line_parts, body)`` writes each response (bench servers only)."""

    def __init__(self) -> None:
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buf) < end + 4 + length:
                return
            body = self.buf[end + 4:end + 4 + length]
            self.buf = self.buf[end + 4 + length:]
            self.answer(head.split(" ", 2), body)

    def answer(self, request_line: list[str], body: bytes) -> None:
        raise NotImplementedError


class _Conn(KeepAliveHTTP):
    def __init__(self, answers: _Answers) -> None:
        super().__init__()
        self.a = answers

    def _rest(self, events: list[bytes]) -> None:
        t = self.transport
        if t is None or t.is_closing():
            return
        for event in events[1:]:
            t.write(event)

    def answer(self, request_line: list[str], body: bytes) -> None:
        t = self.transport
        assert t is not None
        if request_line[0] == "GET":
            t.write(self.a.models)
        elif b'"stream":true' in body.replace(b" ", b""):
            head, events = self.a.stream(body)
            t.write(head + events[0])
            # the first token, then the rest a moment later (a model's first token comes
            # before the others; and a burst written at once would let nothing else run
            # on this core, such as a load generator timing its first byte)
            asyncio.get_running_loop().call_later(self.a.first_gap, self._rest, events)
        else:
            t.write(self.a.json)


async def serve(port: int, chunks: int, first_gap: float) -> None:
    answers = _Answers(chunks, first_gap)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Conn(answers), "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description="fast fake Chat Completions upstream")
    ap.add_argument("port", type=int)
    ap.add_argument("--chunks", type=int, default=20, help="text chunks per stream")
    # 1 ms, not less: uvloop (libuv) timers count whole milliseconds, and a 0.5 ms
    # call_later fired on the next loop pass, so the burst went out before anyone
    # could read the first chunk (direct TTFB measured 1.4 ms instead of ~0.4)
    ap.add_argument("--first-gap-ms", type=float, default=1.0,
                    help="pause between a stream's first chunk and the others")
    args = ap.parse_args()
    try:
        from uvloop import run
    except ImportError:
        run = asyncio.run  # type: ignore[assignment]
    run(serve(args.port, args.chunks, args.first_gap_ms / 1000))


if __name__ == "__main__":
    main()
