"""A canned upstream that speaks Chat Completions and Anthropic Messages, for ``bench/agents.py``.

Run: ``python bench/_agent_upstream.py PORT``.

Answers every ``POST .../chat/completions`` with one ``chat.completion`` (some text and a
tool call) and every ``POST .../messages`` with one Anthropic ``message`` (a thinking block
with its signature, text, a ``tool_use``): what an agent's turn gets back. ``GET
/v1/models`` is the health check; anything else is a 404. HTTP/1.1 keep-alive with ``content-length``; requests
are read just enough to route them. The bodies come from :func:`chat_answer` and
:func:`anthropic_answer`, which ``bench/agents.py`` also feeds its in-process decoders.
"""

from __future__ import annotations

import asyncio
import json
import sys

_CREATED = 1764000000


def chat_answer() -> bytes:
    return json.dumps({
        "id": "chatcmpl-agent", "object": "chat.completion", "created": _CREATED, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "I will read the configuration next.",
            "tool_calls": [{"id": "call_agent_1", "type": "function", "function": {
                "name": "Read", "arguments": json.dumps({"file_path": "/work/src/config.py", "limit": 200})}}]}}],
        "usage": {"prompt_tokens": 24000, "completion_tokens": 180, "total_tokens": 24180,
                  "prompt_tokens_details": {"cached_tokens": 20000}},
    }).encode()


def anthropic_answer() -> bytes:
    return json.dumps({
        "id": "msg_01Agent", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "The test fails in the parser; read it before changing it.",
             "signature": "EqQBCkgIARABGAIiQL" + "s" * 300},
            {"type": "text", "text": "I will read the configuration next."},
            {"type": "tool_use", "id": "toolu_01Agent", "name": "Read",
             "input": {"file_path": "/work/src/config.py", "limit": 200}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 4000, "cache_read_input_tokens": 20000, "cache_creation_input_tokens": 0,
                  "output_tokens": 180},
    }).encode()


_MODELS = json.dumps({"object": "list", "data": [{"id": "bench-1", "object": "model"}]}).encode()
_NOT_FOUND = json.dumps({"error": {"type": "not_found_error", "message": "no such route here"}}).encode()


def _reply(body: bytes, status: bytes = b"200 OK") -> bytes:
    return (b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: keep-alive\r\n\r\n" % (status, len(body))) + body


async def _serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    answers = {b"chat": _reply(chat_answer()), b"messages": _reply(anthropic_answer()), b"models": _reply(_MODELS),
               b"other": _reply(_NOT_FOUND, b"404 Not Found")}
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            target = head.split(b" ", 2)[1]
            kind = (b"chat" if b"/chat/completions" in target else b"messages" if target.endswith(b"/messages")
                    else b"models" if target.endswith(b"/models") else b"other")
            writer.write(answers[kind])
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def serve(port: int) -> None:
    server = await asyncio.start_server(_serve_one, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
