"""Upstream error texts reach gateway clients without key-like strings, whole or masked.

Every error recording in tests/corpus is replayed by a small upstream, its message
first as recorded (OpenAI's own quotes a masked key: ``invalid-*****2345``), then with
the key forms providers quote planted in it; every door must answer without them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from conftest import corpus_files

from modelwire.config import config_from_dict
from modelwire.gateway.scrub import scrub
from modelwire.gateway.testing import RunningGateway

RECORDINGS = [p for p in corpus_files() if json.loads(p.read_text())["response"]["status"] >= 400]
# fake keys in the forms upstream messages quote them (tails chosen to appear nowhere else)
PLANTED = ("sk-proj-AbCdEf0123456789QzQz", "sk-ant-" + "api03-AbCdEf0123456789-QzQy", "sk-*****Q7Z9",
           "invalid-*****Qx42", "****Qw17", "AIzaSyA0123456789abcdefQzQv", "sk-…Qk88",
           "Bearer gw0123456789abcdefQzQu", "xai-AbCdEf0123456789QzQt")
TAILS = ("QzQz", "QzQy", "Q7Z9", "Qx42", "Qw17", "QzQv", "Qk88", "QzQu", "QzQt", "*2345")


def _message_of(body: dict[str, Any]) -> str:
    error = body.get("error")
    return str(error.get("message", "")) if isinstance(error, dict) else ""


def _with_keys(body: dict[str, Any]) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    body["error"]["message"] = f"{_message_of(body)} Keys: {', '.join(PLANTED)}."
    return body


class _Upstream(BaseHTTPRequestHandler):

    def do_POST(self) -> None:  # http.server calls it by this name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        status, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("content-type", "application/json")
        if status == 429:  # longer than gateway.max_retry_wait: the client gets the 429 at once
            self.send_header("retry-after", "3600")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def upstream() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


DOORS = ("/v1/chat/completions", "/v1/messages", "/v1/responses")
APIS = ("chat_completions", "anthropic_messages", "responses")


@pytest.fixture
def gw(upstream: ThreadingHTTPServer, monkeypatch) -> Iterator[RunningGateway]:
    """A model per (upstream protocol, attempt), each with its own key: a 401 marks a key
    dead, and every attempt must reach the upstream."""
    base = f"http://127.0.0.1:{upstream.server_address[1]}"
    models = {}
    for api in APIS:
        for attempt in range(len(DOORS) * 2):
            monkeypatch.setenv(f"UPSTREAM_KEY_{attempt}", f"sk-upstream-{attempt}-0123456789abcdef")
            models[f"{api}-{attempt}"] = {
                "provider": "custom", "model": "m", "api_mode": api, "api_key_env": f"UPSTREAM_KEY_{attempt}",
                "base_url": base if api == "anthropic_messages" else base + "/v1"}
    config = config_from_dict({"models": models, "gateway": {"max_retry_wait": 1}})
    with RunningGateway(config, environ={}) as running:
        yield running


def test_scrub_replaces_whole_and_masked_keys() -> None:
    text = scrub("Incorrect API key provided: " + ", ".join(PLANTED))
    assert not any(tail in text for tail in TAILS), text
    assert scrub("model `gpt-5` not found (request req_011CVa2k)") == "model `gpt-5` not found (request req_011CVa2k)"


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_no_key_reaches_a_client_from_any_recorded_upstream_error(gw, upstream, recording) -> None:
    record = json.loads(recording.read_text())
    status, body = record["response"]["status"], record["response"]["body"]
    attempts = [(door, served) for door in DOORS for served in (body, _with_keys(body))]
    for attempt, (door, served) in enumerate(attempts):
        upstream.answer = (status, json.dumps(served).encode())  # type: ignore[attr-defined]
        r = httpx.post(gw.base_url + door, timeout=30, json={
            "model": f"{record['api']}-{attempt}", "max_tokens": 5, "input": "hi",
            "messages": [{"role": "user", "content": "hi"}]})
        assert 400 <= r.status_code < 600
        assert not any(tail in r.text for tail in TAILS), r.text
        if served is body and "*****" not in _message_of(body):
            # the provider's own wording still reaches the client (it says what went wrong)
            assert _message_of(body)[:30] in r.text


@pytest.mark.parametrize("door", ["chat_completions", "anthropic_messages", "responses"])
def test_a_mid_stream_error_event_carries_no_key(door: str) -> None:
    from modelwire.codecs import codec_for
    from modelwire.errors import ServerError
    from modelwire.events import StreamError
    from modelwire.gateway.errors import scrubbed

    exc = ServerError("upstream failed for key sk-*****Q7Z9 (Bearer gw0123456789abcdefQzQu)", status=500)
    encoder = codec_for(door).StreamEncoder(model="m", request={"model": "m", "messages": []})
    frame = encoder.feed(StreamError(scrubbed(exc))) + encoder.close()
    assert b"upstream failed" in frame and not any(t.encode() in frame for t in TAILS)
