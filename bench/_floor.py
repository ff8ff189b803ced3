"""The floor: a bare uvicorn + aiohttp proxy, for ``bench/gateway.py``.

Run: ``python bench/_floor.py PORT UPSTREAM_BASE``.

It forwards every POST body to ``UPSTREAM_BASE`` + the request path and streams the
answer back, and does nothing else: no auth, no parsing, no translation, no retries.
It runs on the gateway's own stack (uvicorn with uvloop + httptools, one aiohttp
session), so what it adds over the upstream is the least any gateway built on that
stack can add on this machine; the bench reports modelwire's figures against it.
"""

from __future__ import annotations

import sys
from typing import Any


def make_app(upstream: str) -> Any:
    import aiohttp

    session: list[aiohttp.ClientSession] = []

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    if session:
                        await session[0].close()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] == "GET":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
            return
        if not session:
            session.append(aiohttp.ClientSession())
        async with session[0].post(upstream + scope["path"], data=body,
                                   headers={"content-type": "application/json"}) as resp:
            ctype = resp.headers.get("content-type", "application/json").encode()
            await send({"type": "http.response.start", "status": resp.status,
                        "headers": [(b"content-type", ctype)]})
            async for chunk in resp.content.iter_any():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

    return app


def main() -> None:
    import uvicorn

    port, upstream = int(sys.argv[1]), sys.argv[2].rstrip("/")
    uvicorn.run(make_app(upstream), host="127.0.0.1", port=port, access_log=False, log_level="warning")


if __name__ == "__main__":
    main()
