"""The gateway's own ASGI layer: exact-path dispatch, Starlette for the rest, startup
warm-up, and a client that disconnects mid-request."""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import orjson
import pytest

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


_WARMS = """
import sys
from modelwire import AsyncClient
from modelwire.config import load_config
from modelwire.gateway.app import Gateway

warmed = []
real = AsyncClient.warm
AsyncClient.warm = lambda self: (warmed.append(self.model), real(self))[1]  # this process only
gateway = Gateway(load_config(sys.argv[1]), environ={})
gateway.warm_up()
print(" ".join(sorted(warmed)))
"""


def test_startup_warms_each_configured_client_not_just_builds_it(emulator, tmp_path):
    # a fresh interpreter: what is imported is what is under test
    import os
    import subprocess
    import sys

    path = tmp_path / "modelwire.yaml"
    path.write_text(f"models:\n  a: {{provider: emulator, model: emulator-1, base_url: '{emulator.openai_base_url()}'}}\n"
                    f"  b: {{provider: emulator, model: emulator-1, base_url: '{emulator.openai_base_url()}'}}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", _WARMS, str(path)], capture_output=True, text=True,
                         timeout=60, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["a", "b"]  # each configured model's client, warmed once


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


# ------------------------------------------------------------------ any ASGI server
# `modelwire serve` calls the front doors' handlers from its own HTTP protocol (no ASGI
# scope or messages); the app is still an ASGI app that any server can run. These run the
# same requests through uvicorn's own protocol, i.e. through the ASGI adapter (asgi.Endpoint).


@pytest.fixture(scope="module")
def plain_asgi(emulator, tmp_path_factory):
    from modelwire.config import load_config
    from modelwire.gateway.testing import RunningGateway

    path = tmp_path_factory.mktemp("plain-asgi") / "modelwire.yaml"
    path.write_text(f"models:\n  m: {{provider: emulator, model: emulator-1, base_url: '{emulator.openai_base_url()}'}}\n"
                    f"  slow: {{provider: emulator, model: slow-asgi-model, base_url: '{emulator.openai_base_url()}'}}\n"
                    "gateway: {keys_env: PA_KEYS}\n")
    with RunningGateway(load_config(str(path)), environ={"PA_KEYS": GATEWAY_KEY}, http="httptools") as gw:
        yield gw


def test_uvicorns_protocol_serves_whole_and_streamed_answers(plain_asgi):
    import openai

    client = openai.OpenAI(base_url=plain_asgi.base_url + "/v1", api_key=GATEWAY_KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "Say hello"}])
    answer = raw.parse()
    assert answer.choices[0].message.content and answer.choices[0].finish_reason == "stop"
    assert raw.headers["x-modelwire-model"].endswith("emulator-1")
    assert raw.headers["content-length"] == str(len(raw.content))
    pieces = [c.choices[0].delta.content for c in client.chat.completions.create(
        model="m", stream=True, messages=[{"role": "user", "content": "Say hello"}]) if c.choices]
    assert "".join(p for p in pieces if p) == answer.choices[0].message.content
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=plain_asgi.base_url + "/v1", api_key="wrong", max_retries=0).models.list()
    assert [m.id for m in client.models.list().data] == ["m", "slow"]


def test_uvicorns_protocol_a_disconnect_cancels_the_upstream(plain_asgi, emulator_clean):
    emulator_clean.set_faults([{"fault": "slow_chunks", "model": "slow-asgi-model", "seconds": 0.3, "times": 1}])
    with httpx.stream("POST", plain_asgi.base_url + "/v1/chat/completions", headers=AUTH, timeout=10,
                      json={"model": "slow", "stream": True,
                            "messages": [{"role": "user", "content": "Tell me a long story about a fox"}]}) as resp:
        assert resp.status_code == 200
        next(resp.iter_raw())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        seen = [r for r in emulator_clean.requests()["requests"] if r["model"] == "slow-asgi-model"]
        if seen and seen[0]["disconnected"]:
            break
        time.sleep(0.02)
    else:
        raise AssertionError(f"the upstream request was not cancelled: {seen}")
    assert seen[0]["completed"] is False


def test_the_direct_call_is_used_only_on_the_apps_own_endpoints_unwrapped():
    import uvicorn
    from uvicorn.server import ServerState

    from modelwire.config import Config
    from modelwire.gateway import create_app
    from modelwire.gateway.h1server import GatewayHTTP

    app = create_app(Config(), environ={})
    assert ("/v1/chat/completions", "POST") in app.direct and ("/v1/models", "HEAD") not in app.direct
    for options, direct in (({"proxy_headers": False}, True), ({"proxy_headers": True}, False),
                            ({"proxy_headers": False, "root_path": "/gw"}, False)):
        config = uvicorn.Config(app, http=GatewayHTTP, **options)
        proto = GatewayHTTP(config, ServerState(), {}, _loop=asyncio.new_event_loop())
        assert (proto.direct is not None) is direct, options
        proto.loop.close()


# the direct call (modelwire serve's protocol) keeps what its ASGI path does for HTTP/1.1
def _post(body: bytes, extra: bytes = b"") -> bytes:
    return (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"authorization: Bearer " + GATEWAY_KEY.encode() + b"\r\ncontent-length: %d\r\n" % len(body)
            + extra + b"\r\n")


def _answers(sock: socket.socket, count: int) -> list[bytes]:
    data, out = b"", []
    deadline = time.monotonic() + 10
    while len(out) < count and time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        while b"\r\n\r\n" in data:
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]) if b"content-length" in head.lower() else 0
            if len(rest) < length:
                break
            out.append(head + b"\r\n\r\n" + rest[:length])
            data = rest[length:]
    return out


def test_direct_call_answers_expect_100_continue_before_the_body(gateway):
    body = orjson.dumps({"model": "emu-chat", "messages": [{"role": "user", "content": "hi"}]})
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as s:
        s.sendall(_post(body, b"expect: 100-continue\r\n"))
        assert s.recv(64).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        s.sendall(body)
        (answer,) = _answers(s, 1)
    assert answer.startswith(b"HTTP/1.1 200") and b'"role":"assistant"' in answer


def test_direct_call_answers_pipelined_requests_in_order(gateway):
    bodies = [orjson.dumps({"model": "emu-chat", "messages": [{"role": "user", "content": f"What is {n} times 2?"}]})
              for n in (3, 4)]
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as s:
        s.sendall(b"".join(_post(b) + b for b in bodies))  # both in one write
        answers = _answers(s, 2)
    assert [a.split(b"\r\n")[0] for a in answers] == [b"HTTP/1.1 200 OK"] * 2
    texts = [orjson.loads(a.split(b"\r\n\r\n", 1)[1])["choices"][0]["message"]["content"] for a in answers]
    assert "= 6" in texts[0] and "= 8" in texts[1], texts
