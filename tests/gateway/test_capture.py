"""Request capture: opt-in, time-boxed, redacted, rotated, never blocking a request."""

from __future__ import annotations

import json

import orjson

from modelwire.gateway.capture import Capture, CaptureSettings

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
