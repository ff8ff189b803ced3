from __future__ import annotations

from typing import Any

import pytest

from modelwire import errors as E
from modelwire.events import ReasoningBlock, ReasoningDelta, TextDelta
from modelwire.gateway.auth import GatewayKeys, is_loopback, presented_key
from modelwire.gateway.doors import DOORS, open_sealed, seal_events, seal_message
from modelwire.gateway.errors import GatewayError, error_body, from_exception
from modelwire.gateway.models import ModelTable
from modelwire.gateway.seal import Sealer

SEALER = Sealer("a-long-enough-gateway-secret")


@pytest.mark.parametrize(
    "exc, door, status",
    [
        (E.AuthenticationError("bad key", status=401), "chat_completions", 502),
        (E.PermissionDeniedError("no", status=403), "anthropic_messages", 502),
        (E.OverloadedError("busy", status=529), "chat_completions", 503),
        (E.OverloadedError("busy", status=529), "anthropic_messages", 529),
        (E.RateLimitError("slow", status=429, retry_after=7.2), "responses", 429),
        (E.ContextLengthError("prompt is too long", status=400), "anthropic_messages", 400),
        (E.MessageError("messages[2]: orphan tool result", index=2), "chat_completions", 400),
        (E.FallbackExhaustedError([E.ServerError("x", status=500)]), "chat_completions", 502),
        (E.PoolExhaustedError("all cooling", next_available_at=None), "chat_completions", 429),
        (E.ConnectError("refused"), "responses", 502),
        (E.ReadTimeoutError("stale"), "responses", 504),
        (RuntimeError("bug"), "chat_completions", 500),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v),
)
def test_error_status_never_blames_the_client_for_upstream_failures(exc, door, status):
    assert from_exception(exc, door).status == status


def test_error_bodies_in_each_door_shape():
    err = from_exception(E.OverloadedError("busy", status=529), "anthropic_messages")
    body = error_body(err, "anthropic_messages", "req_1")
    assert body == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}, "request_id": "req_1"}
    body = error_body(from_exception(GatewayError(404, "unknown model 'x'"), "chat_completions"), "chat_completions", "r")
    assert body["error"]["type"] == "not_found_error" and body["error"]["message"] == "unknown model 'x'"


def test_model_table_aliases_names_and_provider_strings():
    table = ModelTable(names=("claude", "cheap"), aliases={"claude-sonnet-4-6": "claude"}, allow_provider_models=False)
    assert table.resolve("claude-sonnet-4-6") == "claude"
    assert table.resolve("cheap") == "cheap"
    with pytest.raises(GatewayError) as info:
        table.resolve("openai/gpt-5")
    assert info.value.http.status == 404 and "allow_provider_models" in info.value.http.message
    open_table = ModelTable(names=(), aliases={}, allow_provider_models=True)
    assert open_table.resolve("openai/gpt-5") == "openai/gpt-5"
    listing = table.listing(anthropic=True)
    assert [m["id"] for m in listing["data"]] == ["claude", "cheap", "claude-sonnet-4-6"]
    assert table.listing(anthropic=False)["object"] == "list"


def test_keys_constant_time_check_and_header_forms():
    keys = GatewayKeys.from_env("K", {"K": "alpha, beta"})
    keys.check({"authorization": "Bearer beta"})
    keys.check({"x-api-key": "alpha"})
    for headers in ({}, {"authorization": "Bearer gamma"}, {"x-api-key": ""}):
        with pytest.raises(GatewayError) as info:
            keys.check(headers)
        assert info.value.http.status == 401
    assert not GatewayKeys.from_env("K", {}).required
    assert presented_key({"authorization": "bearer  x "}) == "x"
    assert is_loopback("127.0.0.1") and is_loopback("::1") and not is_loopback("0.0.0.0")


def test_foreign_reasoning_is_sealed_for_anthropic_clients_and_restored_on_echo():
    native = {"type": "reasoning_content", "text": "add the numbers"}
    msg = {"role": "assistant", "content": "4", "reasoning_content": "add the numbers",
           "reasoning_details": [{"issuer": "deepseek", "block": native}]}
    sealed = seal_message(msg, DOORS["anthropic_messages"], SEALER)
    block = sealed["reasoning_details"][0]["block"]
    assert block["type"] == "thinking" and block["thinking"] == "add the numbers"
    assert Sealer.is_sealed(block["signature"])
    # the client echoes it (decode_request gives issuer "anthropic"); the gateway restores it
    echoed = [{"role": "assistant", "content": "4",
               "reasoning_details": [{"issuer": "anthropic", "block": block}]}]
    restored = open_sealed(echoed, SEALER)
    assert restored[0]["reasoning_details"] == [{"issuer": "deepseek", "block": native}]


def test_native_blocks_pass_untouched_and_tampered_seals_are_dropped():
    anthropic_block = {"type": "thinking", "thinking": "t", "signature": "EqQBCkYIBxgC"}
    msg = {"role": "assistant", "content": "x", "reasoning_details": [{"issuer": "anthropic", "block": anthropic_block}]}
    assert seal_message(msg, DOORS["anthropic_messages"], SEALER) == msg
    sealed = seal_message({**msg, "reasoning_details": [{"issuer": "openrouter", "block": {"type": "reasoning.text", "text": "t"}}]},
                          DOORS["responses"], SEALER)
    item = sealed["reasoning_details"][0]["block"]
    assert item["type"] == "reasoning" and Sealer.is_sealed(item["encrypted_content"])
    item = {**item, "encrypted_content": item["encrypted_content"][:-4] + "AAAA"}
    out = open_sealed([{"role": "assistant", "content": "x", "reasoning_details": [{"issuer": "openai", "block": item}]}], SEALER)
    assert "reasoning_details" not in out[0]


def test_stream_events_get_a_signature_before_the_sealed_block():
    events = [ReasoningDelta("hmm"), ReasoningBlock("deepseek", {"type": "reasoning_content", "text": "hmm"}), TextDelta("hi")]
    out = seal_events(events, DOORS["anthropic_messages"], SEALER)
    assert isinstance(out[1], ReasoningDelta) and Sealer.is_sealed(out[1].signature)
    assert isinstance(out[2], ReasoningBlock) and out[2].block["signature"] == out[1].signature
    assert seal_events(events, DOORS["chat_completions"], SEALER) == events


def test_request_ids_are_unique_in_a_process_and_across_a_fork():
    import os
    import re

    from modelwire.gateway.request import request_id

    ids = [request_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"req_[0-9a-f]{16}[0-9]{10}", i) for i in ids)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a uvicorn worker made by fork must not repeat the parent's ids
        os.write(write, request_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    os.close(write)
    assert child[:20] != request_id()[:20]  # another 64-bit prefix


def _asgi_messages(reply: Any) -> list[dict[str, Any]]:
    """What an ASGI server is sent for ``reply`` (the gateway's ASGI adapter)."""
    import asyncio

    from modelwire.gateway.asgi import Endpoint

    sent: list[dict[str, Any]] = []

    async def handler(request: Any) -> Any:
        return reply

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(Endpoint(handler)({"type": "http", "headers": []}, receive, send))
    return sent


def test_reply_headers_are_wire_safe_in_the_head_and_through_asgi():
    from modelwire.gateway.serving import Reply

    reply = Reply(200, b"{}", {"x-modelwire-model": "p/模型\r\nx-evil: 1", "x-request-id": "req_1"})
    head, sized = reply.head()  # for the gateway's own protocol
    assert head == (b"content-length: 2\r\ncontent-type: application/json\r\n"
                    b"x-modelwire-model: p/%E6%A8%A1%E5%9E%8B%0D%0Ax-evil: 1\r\n"
                    b"x-request-id: req_1\r\n")
    assert sized is True
    start, body = _asgi_messages(reply)  # for any ASGI server: the same lines as pairs
    assert start["type"] == "http.response.start" and start["status"] == 200
    assert start["headers"] == [(b"content-length", b"2"), (b"content-type", b"application/json"),
                                (b"x-modelwire-model", b"p/%E6%A8%A1%E5%9E%8B%0D%0Ax-evil: 1"),
                                (b"x-request-id", b"req_1")]
    assert body == {"type": "http.response.body", "body": b"{}", "more_body": False}
    assert Reply(204).head()[1] is False  # no length on a 204
    # a value that is not a string still goes out as text, never a failed answer
    head, _ = Reply(429, b"{}", {"retry-after": 30, "x-request-id": "req_2"}).head()
    assert b"retry-after: 30\r\nx-request-id: req_2\r\n" in head


def test_an_asgi_stream_gets_no_length_and_ends_with_an_empty_last_body():
    from modelwire.gateway.serving import Reply

    async def pieces() -> Any:
        yield b"data: 1\n\n"
        yield b"data: 2\n\n"

    start, *bodies = _asgi_messages(Reply(200, content_type="text/event-stream", stream=pieces()))
    assert start["headers"] == [(b"content-type", b"text/event-stream")]
    assert [(m["body"], m["more_body"]) for m in bodies] == [
        (b"data: 1\n\n", True), (b"data: 2\n\n", True), (b"", False)]


def test_access_lines_written_directly_read_as_logging_writes_them(monkeypatch):
    import io
    import logging
    import time

    from modelwire.gateway import accesslog

    monkeypatch.setattr(time, "time", lambda: 1764472923.456789)  # both paths read the clock
    args = ("req_1", "chat_completions", "m", "p/m", 200, 12.345, 7)
    logger = logging.getLogger("test.modelwire.gateway.access")
    monkeypatch.setattr(logger, "propagate", False)
    logger.setLevel(logging.INFO)
    direct, through_logging = io.StringIO(), io.StringIO()
    monkeypatch.setattr(logger, "handlers", [accesslog.AccessHandler(direct)])
    accesslog.write(logger, args)
    handler = accesslog.AccessHandler(through_logging)
    handler.addFilter(lambda record: True)  # a filter: only logging may apply it
    monkeypatch.setattr(logger, "handlers", [handler])
    accesslog.write(logger, args)
    assert direct.getvalue() == through_logging.getvalue()
    assert direct.getvalue().endswith(
        ".456 access req_1 chat_completions model=m upstream=p/m status=200 latency_ms=12.3 tokens=7\n")
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))  # a user's own format
    handler.filters.clear()
    through_logging.truncate(0)
    through_logging.seek(0)
    accesslog.write(logger, args)
    assert through_logging.getvalue() == "INFO req_1 chat_completions model=m upstream=p/m status=200 latency_ms=12.3 tokens=7\n"


def test_the_head_encodes_control_characters_it_checked_in_one_call():
    # the head checks all its lines in one call, then encodes per header: a control
    # character (here a NUL and a tab) is percent-encoded, the rest of the value kept
    from modelwire.gateway.serving import Reply

    head, _ = Reply(200, b"{}", {"x-modelwire-model": "p/a\x00b\tc"}).head()
    assert head.endswith(b"\r\nx-modelwire-model: p/a%00b%09c\r\n")


def test_overhead_ms_text_has_three_decimals_like_float_formatting():
    from modelwire.gateway.request import ms_text

    assert [ms_text(x) for x in (0, -0.5, 0.0004, 0.0005, 0.1234, 1.9996, 12.345, 123456.7891)] == [
        "0.000", "0.000", "0.000", "0.001", "0.123", "2.000", "12.345", "123456.789"]
    rng = __import__("random").Random(7)
    for _ in range(20000):
        x = rng.random() * rng.choice((1, 10, 1000, 100000))
        assert abs(float(ms_text(x)) - x) <= 0.0005 + 1e-9, x


def test_reply_head_lines_with_no_one_or_several_headers():
    from modelwire.gateway.serving import Reply

    assert Reply(200, b"{}", {}).head() == (b"content-length: 2\r\ncontent-type: application/json\r\n", True)
    assert Reply(200, b"{}", {"a": "1"}).head()[0].endswith(b"application/json\r\na: 1\r\n")
    head, sized = Reply(204, b"", {"a": "1", "b": "2"}).head()
    assert (head, sized) == (b"content-type: application/json\r\na: 1\r\nb: 2\r\n", False)
