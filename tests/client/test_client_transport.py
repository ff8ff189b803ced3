"""The transports on their own: proxies from the environment, error mapping, pooling."""

from __future__ import annotations

import pytest
from client._client_fake import Reply

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


@pytest.mark.parametrize("cls", [Client, AsyncClient], ids=["sync-httpx", "async-aiohttp"])
async def test_both_transports_go_through_the_environments_proxy(fake, monkeypatch, cls):
    # the fake provider plays the proxy: a proxied request arrives in absolute form
    monkeypatch.setenv("HTTP_PROXY", fake.base_url)
    client = cls("custom/fake-1", base_url=UPSTREAM, api_mode="chat_completions", api_key=KEY)
    done = client.complete(HI)
    if cls is AsyncClient:
        done = await done
        await client.close()
    else:
        client.close()
    assert done.text
    assert fake.requests[0]["path"] == UPSTREAM + "/chat/completions"


def _request():
    return EncodedRequest("POST", "/chat/completions", {"content-type": "application/json"},
                          b'{"model": "m", "messages": []}')


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


def test_sync_connections_are_reused(fake):
    fake.push(Reply(), Reply(), Reply())
    transport = SyncHTTPTransport()
    for _ in range(3):
        resp = transport.send(_request(), fake.base_url + "/v1", Timeouts())
        assert resp.status == 200
    transport.close()
    ports = {r["client_port"] for r in fake.requests}
    assert len(ports) == 1  # one pooled connection served all three


async def test_async_connections_are_reused(fake):
    transport = AsyncHTTPTransport()
    for _ in range(3):
        resp = await transport.send(_request(), fake.base_url + "/v1", Timeouts())
        assert resp.status == 200 and resp.headers["content-type"] == "application/json"
    await transport.aclose()
    assert len({r["client_port"] for r in fake.requests}) == 1
