"""What an upstream says can end up in the gateway's own response headers (the model that
served, in x-modelwire-model): a value with a line break must not add headers to the
answer, and one outside ASCII must not turn the answer into a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

from .canned import canned_upstream

NASTY = "模型-1\r\nx-injected: yes"


def _answer(path: str, request: dict) -> tuple[str, bytes]:
    return "application/json", json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": NASTY,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory) -> Iterator[RunningGateway]:
    path = tmp_path_factory.mktemp("gw-headers") / "modelwire.yaml"
    mp = pytest.MonkeyPatch()
    mp.setenv("ODD_KEY", "sk-odd-0123456789")  # the upstream key is read from the environment
    try:
        with canned_upstream(_answer) as base_url:
            # a fallback keeps the request on the translating path (a custom upstream
            # alone takes the same-protocol lane, where the gateway reads no model name)
            entry = f"{{provider: custom, api_mode: chat_completions, model: m, base_url: '{base_url}', api_key_env: ODD_KEY}}"
            path.write_text(f"models:\n  odd: {entry}\n  spare: {entry}\nfallback: [spare]\n")
            with RunningGateway(load_config(str(path))) as gw:
                yield gw
    finally:
        mp.undo()


def test_an_upstreams_line_break_or_non_ascii_model_name_is_encoded_not_sent_raw(gateway):
    resp = httpx.post(f"{gateway.base_url}/v1/chat/completions", timeout=30,
                      json={"model": "odd", "messages": [{"role": "user", "content": "hi"}]})
    assert resp.status_code == 200, resp.text
    assert "x-injected" not in resp.headers  # no header smuggled in by the upstream
    served = resp.headers["x-modelwire-model"]
    assert served.isascii() and "\r" not in served and "\n" not in served
    assert "%0D%0Ax-injected" in served and "%E6%A8%A1%E5%9E%8B-1" in served  # percent-encoded
    # the body names the model the client asked for, as the streamed answer does
    assert resp.json()["model"] == "odd"
