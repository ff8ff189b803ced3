"""Benchmark: decode a 2,000-chunk Chat Completions stream into a Completion.

``bench_chat_stream(n)`` builds an OpenAI-shaped stream (role chunk, text
deltas, a streamed tool call, finish, usage, ``[DONE]``), then times
``StreamDecoder`` + ``Accumulator`` over it, fed in network-sized pieces.
Prints and returns microseconds per SSE event. Run: ``python bench/_chat.py``.
"""

from __future__ import annotations

import json
import time

import orjson

from modelwire.accumulate import Accumulator
from modelwire.codecs.chat_completions import StreamDecoder

try:
    from modelwire.codecs.sse import SSEDecoder
except ImportError:  # codecs.py --other-src: a checkout from before the codecs' subpackages
    from modelwire.codecs._sse import SSEDecoder  # type: ignore[no-redef]


def build_stream(n: int = 2000) -> bytes:
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x"}

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    text_chunks = n - 4 - n // 4
    parts += [chunk({"content": f"word{i} "}) for i in range(text_chunks)]
    parts.append(chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                        "function": {"name": "search", "arguments": ""}}]}))
    parts += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": f'"k{i}": {i}, '}}]})
              for i in range(n // 4)]
    parts.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": n + 10}
    parts.append(b"data: " + json.dumps({**head, "choices": [], "usage": usage}).encode() + b"\n\n")
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def _decode(data: bytes, piece: int = 4096) -> int:
    dec = StreamDecoder()
    acc = Accumulator()
    feed = acc.feed
    for i in range(0, len(data), piece):
        for event in dec.feed(data[i:i + piece]):
            feed(event)
    for event in dec.close():
        feed(event)
    acc.result()
    return acc.events


def _framing_only(data: bytes, piece: int = 4096) -> int:
    """The floor: SSE framing plus orjson.loads, no event mapping."""
    dec = SSEDecoder()
    n = 0
    for i in range(0, len(data), piece):
        for event in dec.feed(data[i:i + piece]):
            if event.data != "[DONE]":
                orjson.loads(event.data)
            n += 1
    return n


def _best(fn, data: bytes, repeat: int) -> float:
    fn(data)  # warm up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(data)
        best = min(best, time.perf_counter() - start)
    return best


def bench_chat_stream(n: int = 2000, repeat: int = 20) -> float:
    """µs per SSE event for StreamDecoder + Accumulator (framing and JSON included)."""
    data = build_stream(n)
    sse_events = data.count(b"\n\n")
    total = _best(_decode, data, repeat) / sse_events * 1e6
    floor = _best(_framing_only, data, repeat) / sse_events * 1e6
    print(f"chat_completions stream: {sse_events} SSE events -> Completion: {total:.2f} µs/event "
          f"(SSE framing + orjson alone {floor:.2f} µs/event; event mapping, think-tag "
          f"splitting and accumulation {total - floor:.2f} µs/event; best of {repeat})")
    return total


if __name__ == "__main__":
    bench_chat_stream()
