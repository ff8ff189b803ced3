"""Request capture: opt-in, time-boxed, redacted, rotated, never blocking a request."""

from __future__ import annotations

import json

import orjson
import pytest

from modelwire.gateway.capture import Capture, CaptureSettings, captures_view, index, read

FAKE_KEY = "sk-" + "ant-" + "capturetest0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(capture: Capture, **over: object) -> None:
    fields: dict[str, object] = {
        "model": "cheap", "api_mode": "anthropic_messages", "method": "POST", "path": "/v1/messages",
        "headers": {"x-api-key": FAKE_KEY, "anthropic-version": "2023-06-01"},
        "body": orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                           "metadata": {"user_id": "alice@example.com"}}),
        "status": 429, "answer_headers": {"content-type": "application/json", "retry-after": "2"},
        "answer": orjson.dumps({"error": {"message": f"key {FAKE_KEY} is rate limited"}}),
        "failed": True}
    fields.update(over)
    capture.record(**fields)  # type: ignore[arg-type]


def _lines(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "capture.jsonl").read_text().splitlines()]


def test_a_failing_request_for_a_listed_model_is_written_with_secrets_redacted(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("cheap",), redact=("user_id",)))
    assert capture.open_for(True) and capture.covers("cheap", None)
    _record(capture)
    capture.close()
    [line] = _lines(tmp_path)
    text = (tmp_path / "capture.jsonl").read_text()
    assert FAKE_KEY not in text and "alice@example.com" not in text
    assert line["request"]["headers"]["x-api-key"] == "[redacted]"
    assert line["request"]["headers"]["anthropic-version"] == "2023-06-01"
    assert line["request"]["body"]["metadata"] == {"user_id": "[redacted]"}
    assert line["request"]["body"]["messages"] == [{"role": "user", "content": "hi"}]
    assert line["answer"]["status"] == 429 and line["answer"]["headers"]["retry-after"] == "2"
    assert "[redacted]" in line["answer"]["body"] and line["failed"] is True
    assert (line["api_mode"], line["model"]) == ("anthropic_messages", "cheap")


def test_only_listed_models_and_only_failures_unless_asked(tmp_path):
    failing = Capture(CaptureSettings(dir=str(tmp_path / "a"), models=("claude-*", "cheap")))
    assert failing.covers("claude-sonnet-4-6") and failing.covers("other", "claude-haiku")
    assert failing.covers("cheap", None) and not failing.covers("other", None)
    assert failing.open_for(True) and not failing.open_for(False)
    everything = Capture(CaptureSettings(dir=str(tmp_path / "b"), models=("m",), failing_only=False))
    assert everything.open_for(False)
    nothing = Capture(CaptureSettings(dir=str(tmp_path / "c")))
    assert not nothing.covers("m", "m")
    for c in (failing, everything, nothing):
        c.close()


def test_capture_stops_when_its_time_box_ends(tmp_path):
    clock = Clock()
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("m",), for_s=60), clock=clock)
    clock.now += 59
    assert capture.open_for(True)
    clock.now += 1
    assert not capture.open_for(True)
    capture.close()


def test_files_rotate_by_size_and_only_the_configured_number_is_kept(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("m",), max_bytes=1500, files=3))
    for i in range(12):
        _record(capture, model=f"m{i}")
    capture.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["capture.1.jsonl", "capture.2.jsonl", "capture.jsonl"]
    assert all(p.stat().st_size <= 1500 for p in tmp_path.iterdir())
    newest = _lines(tmp_path)[-1]["model"]
    assert newest == "m11" and capture.written == 12


def test_a_full_queue_drops_and_counts_instead_of_blocking(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("m",)), queue_size=1)
    capture.close()  # the writer is gone: nothing drains the queue of one
    for _ in range(50):
        _record(capture)
    assert capture.dropped == 49


def test_a_body_that_is_not_json_is_kept_as_scrubbed_text(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("m",)))
    _record(capture, body=f"key={FAKE_KEY} not json".encode())
    capture.close()
    [line] = _lines(tmp_path)
    assert line["request"]["body"] == "key=[redacted] not json"


def test_a_listed_key_name_or_glob_is_covered_and_no_key_never_is(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), keys=("alice", "ci-*")))
    assert capture.covers_key("alice") and capture.covers_key("ci-nightly")
    assert not capture.covers_key("bob") and not capture.covers_key(None)
    assert not capture.covers("alice")  # a key list is not a model list
    capture.close()


def test_a_line_names_the_key_door_and_request_id_and_its_id_is_returned(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), keys=("alice",)))
    capture_id = capture.record(model="cheap", api_mode="chat_completions", method="POST",
                                path="/chat/completions", headers={}, body=b"{}", status=200,
                                answer_headers={}, answer=b"{}", failed=False, key="alice",
                                door="anthropic_messages", request_id="req_0001")
    capture.close()
    [line] = _lines(tmp_path)
    assert line["id"] == capture_id and len(capture_id) == 12
    assert (line["key"], line["door"], line["request_id"]) == ("alice", "anthropic_messages", "req_0001")
    assert (line["status"], line["failed"]) == (200, False)


def test_the_index_lists_captures_newest_first_across_rotated_files(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("m",), max_bytes=1500, files=3))
    ids = []
    for i in range(8):
        ids.append(capture.record(model=f"m{i}", api_mode="chat_completions", method="POST",
                                  path="/chat/completions", headers={}, body=b'{"x": "' + b"y" * 300 + b'"}',
                                  status=429 if i % 2 else 200, answer_headers={}, answer=b"{}",
                                  failed=bool(i % 2), key=f"k{i}", door="chat_completions"))
    listed = capture.index(limit=100)  # flushes what is queued first
    capture.close()
    assert len(list(tmp_path.iterdir())) == 3  # rotated: the oldest lines are gone
    assert [e["id"] for e in listed] == ids[::-1][:len(listed)] and len(listed) >= 4
    newest = listed[0]
    assert (newest["model"], newest["key"], newest["status"], newest["failed"]) == ("m7", "k7", 429, True)
    assert listed[1]["status"] == 200 and listed[1]["failed"] is False
    on_disk = (tmp_path / "capture.jsonl").read_bytes().splitlines(keepends=True)
    assert newest["bytes"] == len(on_disk[-1])
    assert [e["id"] for e in index(tmp_path, limit=2)] == ids[:-3:-1]


def test_the_index_skips_a_line_still_being_written_and_lines_without_an_id(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("m",)))
    _record(capture)
    capture.close()
    path = tmp_path / "capture.jsonl"
    whole = path.read_bytes()
    old = orjson.dumps({"v": 1, "time": 1.0, "model": "m", "api_mode": "chat_completions",
                        "failed": True, "request": {}, "answer": {}}) + b"\n"
    path.write_bytes(old + whole + whole[: len(whole) // 2])  # the last line is half written
    listed = index(tmp_path)
    assert [e["id"] for e in listed] == [json.loads(whole)["id"]]


def test_reading_by_id_returns_the_exchange_as_written(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("cheap",)))
    first = capture.record(model="cheap", api_mode="anthropic_messages", method="POST", path="/v1/messages",
                           headers={"x-api-key": FAKE_KEY}, body=b'{"model": "m"}', status=529,
                           answer_headers={}, answer=b"overloaded", failed=True, key="alice")
    _record(capture)
    found = capture.read(first)
    capture.close()
    assert found is not None and found["id"] == first
    assert found == json.loads((tmp_path / "capture.jsonl").read_text().splitlines()[0])
    assert found["request"]["headers"]["x-api-key"] == "[redacted]" and FAKE_KEY not in json.dumps(found)


@pytest.mark.parametrize("capture_id", ["0123456789ab", "../capture", "capture.jsonl", "..", "",
                                        "0123456789AB", "0123456789abc"],
                         ids=["unknown", "traversal", "a-file-name", "dot-dot", "empty", "upper-case",
                              "too-long"])
def test_an_unknown_or_malformed_id_reads_nothing(tmp_path, capture_id):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("cheap",)))
    _record(capture)
    capture.close()
    assert read(tmp_path, capture_id) is None


def test_with_capture_off_the_view_still_lists_what_the_folder_holds(tmp_path):
    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("cheap",)))
    _record(capture)
    on = captures_view(capture, None)
    capture.close()
    assert on["enabled"] is True and on["dir"] == str(tmp_path) and len(on["captures"]) == 1
    off = captures_view(None, str(tmp_path))
    assert off == {**on, "enabled": False}
    assert captures_view(None, None) == {"dir": "", "enabled": False, "captures": []}


def test_the_capture_is_disabled_once_its_time_box_ends(tmp_path):
    clock = Clock()
    capture = Capture(CaptureSettings(dir=str(tmp_path), keys=("alice",), for_s=10), clock=clock)
    assert capture.enabled
    clock.now += 10
    assert not capture.enabled and not capture.open_for(True)
    capture.close()


class _Answer:
    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.headers, self.body = status, {"content-type": "text/event-stream"}, body
        self._chunks = [body[:5], body[5:]]

    async def aiter_chunks(self):
        for chunk in self._chunks:
            yield chunk

    async def read(self) -> bytes:
        return self.body

    def close(self) -> None:
        pass


class _Upstream:
    """A transport that answers every request with one fixed answer."""

    def __init__(self, status: int = 200, body: bytes = b"data: {}\n\ndata: [DONE]\n\n") -> None:
        self.status, self.body = status, body

    async def send(self, request, base_url, timeouts):
        return _Answer(self.status, self.body)

    def stream(self, request, base_url, timeouts):
        import contextlib

        @contextlib.asynccontextmanager
        async def streamed():
            yield _Answer(self.status, self.body)

        return streamed()

    async def aclose(self) -> None:
        pass


def _request(model: str = "served-id", tags=None):
    from modelwire.codecs import EncodedRequest

    return EncodedRequest("POST", "/chat/completions", {"authorization": "Bearer " + FAKE_KEY},
                          orjson.dumps({"model": model, "messages": []}), tags)


def test_the_transport_captures_by_the_key_in_the_tags_or_by_the_model_asked_or_served(tmp_path):
    import asyncio

    from modelwire.gateway.capture import CapturingTransport

    capture = Capture(CaptureSettings(dir=str(tmp_path), models=("served-*",), keys=("alice",),
                                      failing_only=False))
    asked = CapturingTransport(_Upstream(), capture, model="asked")

    async def run():
        await asked.send(_request("other", {"key": "alice", "request_id": "req_1", "door": "responses"}), "", None)
        await asked.send(_request("other", {"key": "bob", "request_id": "req_2", "door": "responses"}), "", None)
        await asked.send(_request("served-id", {"key": "bob", "request_id": "req_3", "door": "responses"}), "", None)
        await asked.send(_request("other"), "", None)

    asyncio.run(run())
    listed = capture.index()
    capture.close()
    assert [(e["request_id"], e["key"]) for e in listed] == [("req_3", "bob"), ("req_1", "alice")]
    assert FAKE_KEY not in (tmp_path / "capture.jsonl").read_text()


def test_a_stream_no_rule_captures_keeps_none_of_its_bytes(tmp_path):
    import asyncio

    from modelwire.gateway.capture import CapturingTransport

    capture = Capture(CaptureSettings(dir=str(tmp_path), keys=("alice",), failing_only=False))
    transport = CapturingTransport(_Upstream(), capture, model="m")
    kept = {}

    async def run():
        for key in ("bob", "alice"):
            async with transport.stream(_request(tags={"key": key}), "", None) as resp:
                read = b"".join([chunk async for chunk in resp.aiter_chunks()])
                kept[key] = (read, b"".join(resp.seen))

    asyncio.run(run())
    listed = capture.index()
    capture.close()
    assert kept["bob"][0] == kept["alice"][0] == _Upstream().body  # the client reads it all either way
    assert kept["bob"][1] == b"" and kept["alice"][1] == _Upstream().body
    [entry] = listed
    assert entry["key"] == "alice"
    assert capture.read(entry["id"])["answer"]["body"] == _Upstream().body.decode()


def test_a_gateway_key_is_named_by_its_fingerprint_only_when_keys_are_checked():
    from modelwire.gateway.auth import GatewayKeys, key_fingerprint

    gateway_key = "gw-" + "fingerprint-test-0123456789"
    keys = GatewayKeys.from_env("K", {"K": f"other,{gateway_key}"})
    name = keys.identity({"authorization": f"Bearer {gateway_key}"})
    assert name == key_fingerprint(gateway_key) and gateway_key not in name
    assert name.startswith("env-") and len(name) == 16 and name != key_fingerprint("other")
    # passthrough: the provider key goes upstream; the gateway key is the one named
    both = {"authorization": f"Bearer {FAKE_KEY}", "x-modelwire-key": gateway_key}
    assert keys.identity(both, passthrough=True) == name
    # no keys configured: whatever a client sent was never checked, so it names nothing
    assert GatewayKeys.from_env("K", {}).identity({"authorization": f"Bearer {gateway_key}"}) is None
