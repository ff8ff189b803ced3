"""The gateway over TLS: a certificate made for the test, the official openai and anthropic
SDKs verifying it (httpx with the test CA), TLS 1.2 as the floor, HTTP/1.1 keep-alive,
and ``modelwire serve --ssl-certfile/--ssl-keyfile`` (and the config keys) for real."""

from __future__ import annotations

import os
import pathlib
import socket
import ssl
import subprocess
import sys
import time

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner

from modelwire.testing import emulator  # noqa: F401  (the session emulator)

from .tlscerts import make_certs

GATEWAY_KEY = "gw-tls-key-0123456789"
CONFIG = """
models:
  emu-chat:      {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  emu-anthropic: {{provider: emulator-anthropic, model: claude-sonnet-4-6, base_url: "{anthropic}"}}
gateway:
  keys_env: TLS_GATEWAY_KEYS
  aliases: {{claude-sonnet-4-6: emu-anthropic}}
{extra}"""
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_gateway(emulator, certs, tmp_path_factory):  # noqa: F811
    from modelwire.config import load_config
    from modelwire.gateway.testing import RunningGateway

    path = tmp_path_factory.mktemp("gw-tls") / "modelwire.yaml"
    path.write_text(CONFIG.format(openai=emulator.openai_base_url(),
                                  anthropic=emulator.anthropic_base_url(), extra=""))
    with RunningGateway(load_config(str(path)), environ={"TLS_GATEWAY_KEYS": GATEWAY_KEY},
                        ssl_certfile=str(certs.cert), ssl_keyfile=str(certs.key)) as gw:
        yield gw


def _verifying(certs):
    return ssl.create_default_context(cafile=str(certs.ca))


def test_openai_sdk_verifies_the_certificate_and_streams(tls_gateway, certs):
    assert tls_gateway.base_url.startswith("https://127.0.0.1:")
    http = openai.DefaultHttpxClient(verify=_verifying(certs))
    with openai.OpenAI(base_url=tls_gateway.base_url + "/v1", api_key=GATEWAY_KEY,
                       http_client=http, max_retries=0) as client:
        done = client.chat.completions.create(model="emu-chat", messages=HI)
        chunks = list(client.chat.completions.create(model="emu-chat", messages=HI, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert done.choices[0].message.content == text and 'You asked: "hi"' in text


def test_anthropic_sdk_verifies_the_certificate(tls_gateway, certs):
    http = anthropic.DefaultHttpxClient(verify=_verifying(certs))  # the SDK's own httpx
    with anthropic.Anthropic(base_url=tls_gateway.base_url, api_key=GATEWAY_KEY,
                             http_client=http, max_retries=0) as client:
        done = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=HI)
        with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=HI) as s:
            streamed = "".join(s.text_stream)
    assert done.content[0].text == streamed and 'You asked: "hi"' in streamed


def test_a_client_that_does_not_trust_the_ca_refuses_the_gateway(tls_gateway):
    with openai.OpenAI(base_url=tls_gateway.base_url + "/v1", api_key=GATEWAY_KEY,
                       max_retries=0) as client, pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="emu-chat", messages=HI)


def _tls_socket(gw, context):
    raw = socket.create_connection(("127.0.0.1", gw.port), timeout=5)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _read_response(sock, buffer=b""):
    """One HTTP/1.1 response with a content-length: (head, body, the bytes after it)."""
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    head, rest = buffer.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(rest) < length:
        rest += sock.recv(65536)
    return head, rest[:length], rest[length:]


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")  # asked on purpose
def test_tls_1_2_serves_keep_alive_and_the_floor_is_1_2(tls_gateway, certs):
    context = _verifying(certs)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    with _tls_socket(tls_gateway, context) as sock:
        assert sock.version() == "TLSv1.2"
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n" * 2)  # one connection
        head1, body1, rest = _read_response(sock)
        head2, body2, _ = _read_response(sock, rest)
    assert head1.startswith(b"HTTP/1.1 200") and head2.startswith(b"HTTP/1.1 200")
    assert b'"status"' in body1 and body1 == body2
    with _tls_socket(tls_gateway, _verifying(certs)) as sock:
        assert sock.version() == "TLSv1.3"  # the best both sides speak
    # what the server refuses is set on its context, whatever the system's OpenSSL allows
    assert tls_gateway._server.config.ssl.minimum_version == ssl.TLSVersion.TLSv1_2
    old = _verifying(certs)
    old.minimum_version, old.maximum_version = ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    with pytest.raises(ssl.SSLError):
        _tls_socket(tls_gateway, old).close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_takes_tls_from_the_config_keys(emulator, certs, tmp_path):  # noqa: F811
    # relative paths in the file are relative to the file's folder
    (tmp_path / "server.pem").write_bytes(certs.cert.read_bytes())
    (tmp_path / "server.key").write_bytes(certs.key.read_bytes())
    path = tmp_path / "modelwire.yaml"
    path.write_text(CONFIG.format(openai=emulator.openai_base_url(), anthropic=emulator.anthropic_base_url(),
                                  extra="  ssl_certfile: server.pem\n  ssl_keyfile: server.key\n"))
    port = _free_port()
    src = str(pathlib.Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "TLS_GATEWAY_KEYS": GATEWAY_KEY, "PYTHONPATH": src}
    proc = subprocess.Popen([sys.executable, "-m", "modelwire.cli", "serve", "--config", str(path),
                             "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline, answer = time.monotonic() + 30, None
        with httpx.Client(verify=_verifying(certs), timeout=2) as http:
            while answer is None and time.monotonic() < deadline and proc.poll() is None:
                try:
                    answer = http.post(f"https://127.0.0.1:{port}/v1/chat/completions",
                                       headers={"authorization": f"Bearer {GATEWAY_KEY}"},
                                       json={"model": "emu-chat", "messages": HI})
                except httpx.ConnectError:
                    time.sleep(0.05)
        assert answer is not None, proc.stderr.read().decode() if proc.poll() is not None else "no answer"
        assert answer.status_code == 200 and answer.http_version == "HTTP/1.1"
    finally:
        proc.terminate()
        proc.wait(15)
        said = proc.stderr.read()
        proc.stderr.close()
    assert f"modelwire gateway on https://127.0.0.1:{port}".encode() in said


@pytest.mark.parametrize(("args", "message"), [
    (["--ssl-keyfile", "KEY"], "needs --ssl-certfile"),
    (["--ssl-certfile", "missing.pem"], "cannot read the TLS certificate"),
    (["--ssl-certfile", "KEY", "--ssl-keyfile", "KEY"], "do not load"),
], ids=["key-without-cert", "unreadable", "not-a-pair"])
def test_serve_refuses_a_broken_tls_pair_before_listening(certs, tmp_path, args, message):
    from modelwire.cli.serve import command

    cfg = tmp_path / "modelwire.yaml"
    cfg.write_text("models: {}\n")
    args = [str(certs.key) if a == "KEY" else str(tmp_path / a) if a.endswith(".pem") else a
            for a in args]
    result = CliRunner().invoke(command, ["--config", str(cfg), "--port", "1", *args])
    assert result.exit_code == 2 and message in result.output
