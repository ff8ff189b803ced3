"""``Client.warm()`` does the one-time work (imports, the HTTP stack's and the codecs' first
use) so the first request costs about what later ones do; construction leaves it to
``warm()`` or the first request, neither opens a connection before that request, and a
sync Client never loads asyncio.

Each check runs in a fresh interpreter: what a process has already imported is exactly
what is under test."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys

import pytest

from modelwire import Client

KEY = "sk-test-0123456789abcdef"

_FIRST = r"""
import json, logging, sys
from modelwire import AsyncClient, Client

warnings = []  # the dry run in warm() logs (never raises) when it fails


class Record(logging.Handler):
    def emit(self, record):
        warnings.append(record.getMessage())


log = logging.getLogger("modelwire.client")
log.setLevel(logging.DEBUG)
log.addHandler(Record())

url, mode, model, kind = sys.argv[1:5]
cls = AsyncClient if kind == "async" else Client
client = cls(f"custom/{model}", base_url=url, api_mode=mode, api_key=sys.argv[5])
construction_imported_httpx = "httpx" in sys.modules
client.warm()
after_construction = set(sys.modules)
asyncio_loaded = "asyncio" in after_construction
msgs = [{"role": "user", "content": "hi"}]

if kind == "async":
    import asyncio

    async def first():
        done = await client.complete(msgs, max_tokens=20)
        await client.close()
        return done
    done = asyncio.run(first())
else:
    done = client.complete(msgs, max_tokens=20)
    client.close()
print(json.dumps({"text": done.text, "asyncio_after_construction": asyncio_loaded,
                  "construction_imported_httpx": construction_imported_httpx,
                  "imported_by_first_request": sorted(set(sys.modules) - after_construction),
                  "construction_log": warnings}))
"""


def _first_request(emulator, mode: str, kind: str) -> dict:
    url = emulator.anthropic_base_url() if mode == "anthropic_messages" else \
        emulator.openai_base_url()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run(
        [sys.executable, "-c", _FIRST, url, mode, f"first-{mode}", kind, KEY],
        check=False, capture_output=True, text=True, timeout=60, env=env,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("mode", ["chat_completions", "anthropic_messages", "responses"])
def test_after_warm_the_first_sync_request_imports_nothing_new(emulator, mode):
    seen = _first_request(emulator, mode, "sync")
    assert seen["text"].startswith('You asked: "hi"')
    assert seen["construction_log"] == []  # the offline dry run went through
    assert seen["imported_by_first_request"] == []
    assert seen["construction_imported_httpx"] is False  # the work is warm()'s, not the constructor's
    # asyncio is 30-100 ms of imports that the sync path never uses
    assert seen["asyncio_after_construction"] is False


def test_after_warm_the_first_async_request_imports_nothing_new(emulator):
    # asyncio itself runs the script here; the aiohttp session is made in its loop
    seen = _first_request(emulator, "chat_completions", "async")
    assert seen["text"].startswith('You asked: "hi"')
    assert seen["construction_log"] == []
    assert seen["imported_by_first_request"] == []


def test_construction_and_warm_open_no_connection():
    # a listening socket nobody accepts on: a connection attempt would complete the
    # handshake in the kernel and leave it readable (a pending connection)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        for mode, base in (("chat_completions", "/v1"), ("anthropic_messages", "")):
            client = Client("custom/m", base_url=f"http://127.0.0.1:{port}{base}",
                            api_mode=mode, api_key=KEY)
            client.warm()
            readable, _, _ = select.select([listener], [], [], 0)
            client.close()
            assert readable == [], f"{mode}: the constructor or warm() connected"
