"""The nginx configuration in docs/guides/exposing-the-gateway.md, run as written in front
of a gateway: TLS at nginx, a streamed answer arriving event by event (no buffering). Skips when nginx is not installed (.ci/run installs it)."""

from __future__ import annotations

import pathlib
import re
import shutil
import socket
import subprocess
import time

import openai
import pytest

from modelwire.emulator import Emulator

from .tlscerts import make_certs

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guides" / "exposing-the-gateway.md"
GATEWAY_KEY = "gw-nginx-key-0123456789"
NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if pathlib.Path(p).exists()), None)
pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")


def doc_config() -> str:
    """The one ``nginx`` fence of the guide."""
    (block,) = re.findall(r"```nginx\n(.*?)```", DOC.read_text(), re.DOTALL)
    return block


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _main_config(server: str, tmp: pathlib.Path) -> str:
    """What nginx.conf around conf.d/ gives a server block, with every path in ``tmp``."""
    temp = "\n".join(f"    {kind}_temp_path {tmp / kind};" for kind in
                     ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"worker_processes 1;\npid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'} warn;\n"
            f"daemon off;\nevents {{ worker_connections 64; }}\n"
            f"http {{\n    access_log {tmp / 'access.log'};\n{temp}\n"
            # the gateway's X-Accel-Buffering: no would hide a buffering config: ignored
            # here, so the doc's own proxy_buffering line is what keeps a stream flowing
            f"    proxy_ignore_headers X-Accel-Buffering;\n{server}\n}}\n")


@pytest.fixture
def stack(tmp_path):
    from modelwire.config import config_from_dict
    from modelwire.gateway.testing import RunningGateway

    certs = make_certs(tmp_path)
    with Emulator() as emu:
        # every chunk of a stream 0.15 s apart: a buffering proxy would deliver them together
        emu.set_faults([{"fault": "slow_chunks", "endpoint": "chat_completions", "seconds": 0.15}])
        config = config_from_dict({"models": {"chat": {"provider": "emulator", "model": "emulator-1",
                                                       "base_url": emu.openai_base_url()}},
                                   "gateway": {"keys_env": "NGINX_GATEWAY_KEYS"}})
        with RunningGateway(config, environ={"NGINX_GATEWAY_KEYS": GATEWAY_KEY}) as gw:
            port = _free_port()
            server = (doc_config()
                      .replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
                      .replace("server 127.0.0.1:4000;", f"server 127.0.0.1:{gw.port};")
                      .replace("/etc/letsencrypt/live/gateway.example.com/fullchain.pem", str(certs.cert))
                      .replace("/etc/letsencrypt/live/gateway.example.com/privkey.pem", str(certs.key)))
            assert str(certs.cert) in server and f":{gw.port};" in server  # the doc's lines held
            conf = tmp_path / "nginx.conf"
            conf.write_text(_main_config(server, tmp_path))
            proc = subprocess.Popen([NGINX, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"),
                                     "-c", str(conf)], stderr=subprocess.PIPE)
            try:
                _wait_listening(port, proc, tmp_path)
                yield port, certs, emu
            finally:
                proc.terminate()
                proc.wait(10)
                proc.stderr.close()


def _wait_listening(port: int, proc: subprocess.Popen, tmp: pathlib.Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = (tmp / "error.log").read_text() if (tmp / "error.log").exists() else ""
            pytest.fail(f"nginx exited: {proc.stderr.read().decode()} {log}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    pytest.fail("nginx did not start listening")


def test_the_guides_nginx_config_streams_through_tls_without_buffering(stack):
    import ssl

    port, certs, _ = stack
    trust = ssl.create_default_context(cafile=str(certs.ca))
    with openai.OpenAI(base_url=f"https://127.0.0.1:{port}/v1", api_key=GATEWAY_KEY, max_retries=0,
                       http_client=openai.DefaultHttpxClient(verify=trust)) as client:
        arrivals, text = [], []
        for chunk in client.chat.completions.create(
                model="chat", messages=[{"role": "user", "content": "hi"}], stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                arrivals.append(time.monotonic())
                text.append(chunk.choices[0].delta.content)
        again = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}])
    assert 'You asked: "hi"' in "".join(text) and len(arrivals) >= 4
    # events arrive spread out as the upstream sends them, not in one burst at the end
    assert arrivals[-1] - arrivals[0] > 0.15 * (len(arrivals) - 2)
    assert again.choices[0].message.content == "".join(text)
