"""The gateway's own ASGI layer: exact-path dispatch, Starlette for the rest, startup
warm-up, and a client that disconnects mid-request."""

from __future__ import annotations

import socket

import httpx
import orjson

GATEWAY_KEY = "gw-test-key-0123456789"  # tests/gateway/conftest.py

AUTH = {"authorization": f"Bearer {GATEWAY_KEY}"}


def test_unknown_path_and_wrong_method_still_answered_by_starlette(gateway):
    assert httpx.post(gateway.base_url + "/v2/chat/completions", headers=AUTH, json={}).status_code == 404
    r = httpx.get(gateway.base_url + "/v1/chat/completions", headers=AUTH)
    assert r.status_code == 405
    assert "POST" in r.headers["allow"]


def test_configured_clients_are_built_at_startup(emulator, tmp_path):
    from modelwire.config import load_config
    from modelwire.gateway.testing import RunningGateway

    path = tmp_path / "modelwire.yaml"
    path.write_text(f"models:\n  a: {{provider: emulator, model: emulator-1, base_url: '{emulator.openai_base_url()}'}}\n"
                    f"  b: {{provider: emulator-anthropic, model: claude-sonnet-4-6, "
                    f"base_url: '{emulator.anthropic_base_url()}'}}\n")
    with RunningGateway(load_config(str(path)), environ={}) as gw:
        # both clients exist before any request named their model
        assert set(gw.gateway._clients) == {"a", "b"}


def test_repeated_header_first_value_wins(gateway):
    # two Authorization headers: the first is the gateway key and is the one checked
    r = httpx.post(gateway.base_url + "/v1/chat/completions",
                   headers=[("authorization", f"Bearer {GATEWAY_KEY}"), ("authorization", "Bearer wrong"),
                            ("content-type", "application/json")],
                   content=orjson.dumps({"model": "emu-chat", "messages": [{"role": "user", "content": "hi"}]}))
    assert r.status_code == 200, r.text


def test_client_gone_before_body_complete_leaves_server_serving(gateway):
    # announce 10,000 bytes, send 10, hang up: nobody to answer, and the next request works
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                  b"authorization: Bearer " + GATEWAY_KEY.encode() + b"\r\ncontent-length: 10000\r\n\r\n{\"model\":")
    r = httpx.post(gateway.base_url + "/v1/chat/completions", headers=AUTH,
                   json={"model": "emu-chat", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200
    assert r.json()["choices"][0]["message"]["role"] == "assistant"
    assert r.headers["content-length"] == str(len(r.content))


def test_body_limit_is_a_413_in_each_doors_shape_declared_or_streamed(emulator, tmp_path):
    from modelwire.config import load_config
    from modelwire.gateway.testing import RunningGateway

    path = tmp_path / "modelwire.yaml"
    path.write_text(f"models:\n  m: {{provider: emulator, model: emulator-1, base_url: '{emulator.openai_base_url()}'}}\n"
                    "gateway: {max_body_bytes: 4096}\n")
    pad = "x" * 5000
    big = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": pad}]})
    small = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "y" * 3000}]})

    def pieces(data: bytes):  # no content-length: chunked, arriving as several body messages
        for i in range(0, len(data), 700):
            yield data[i:i + 700]

    with RunningGateway(load_config(str(path)), environ={}) as gw:
        url = gw.base_url + "/v1/chat/completions"
        for content in (big, pieces(big)):
            r = httpx.post(url, content=content, headers={"content-type": "application/json"})
            assert r.status_code == 413, r.text
            assert "4096 bytes" in r.json()["error"]["message"]
        r = httpx.post(gw.base_url + "/v1/messages", content=pieces(big),
                       headers={"content-type": "application/json", "anthropic-version": "2023-06-01"})
        assert r.status_code == 413 and r.json()["type"] == "error"
        # under the limit, in pieces: reassembled whole
        r = httpx.post(url, content=pieces(small), headers={"content-type": "application/json"})
        assert r.status_code == 200, r.text
        assert "y" * 50 in r.json()["choices"][0]["message"]["content"]
