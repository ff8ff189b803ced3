"""What an upstream says can end up in the gateway's own response headers (the model that
served, in x-modelwire-model): a value with a line break must not add headers to the
answer, and one outside ASCII must not turn the answer into a 500."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import httpx
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

NASTY = "模型-1\r\nx-injected: yes"


class _Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # the stdlib handler calls it by this name
        self.rfile.read(int(self.headers.get("content-length", "0")))
        body = json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": NASTY,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def gateway(tmp_path_factory) -> Iterator[RunningGateway]:
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=upstream.serve_forever, daemon=True)
    thread.start()
    path = tmp_path_factory.mktemp("gw-headers") / "modelwire.yaml"
    path.write_text(
        "models:\n  odd: {provider: custom, api_mode: chat_completions, model: m, "
        f"base_url: 'http://127.0.0.1:{upstream.server_address[1]}/v1', api_key_env: ODD_KEY}}\n"
    )
    mp = pytest.MonkeyPatch()
    mp.setenv("ODD_KEY", "sk-odd-0123456789")  # the upstream key is read from the environment
    try:
        with RunningGateway(load_config(str(path))) as gw:
            yield gw
    finally:
        mp.undo()
        upstream.shutdown()


def test_an_upstreams_line_break_or_non_ascii_model_name_is_encoded_not_sent_raw(gateway):
    resp = httpx.post(f"{gateway.base_url}/v1/chat/completions", timeout=30,
                      json={"model": "odd", "messages": [{"role": "user", "content": "hi"}]})
    assert resp.status_code == 200, resp.text
    assert "x-injected" not in resp.headers  # no header smuggled in by the upstream
    served = resp.headers["x-modelwire-model"]
    assert served.isascii() and "\r" not in served and "\n" not in served
    assert "%0D%0Ax-injected" in served and "%E6%A8%A1%E5%9E%8B-1" in served  # percent-encoded
    assert resp.json()["model"] == NASTY  # the body carries it as it is (JSON escapes it)
