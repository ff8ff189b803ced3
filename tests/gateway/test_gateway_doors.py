"""The front doors as Door objects: one per api mode, each fact about a door in one place
and agreeing with the door's codec."""

from __future__ import annotations

import typing

import orjson
import pytest

from modelwire.codecs import codec_for
from modelwire.gateway.doors import DOORS
from modelwire.gateway.errors import HttpError
from modelwire.types import ApiMode

# a client echoing the reasoning of its last answer, in each protocol's words
ECHOES = {
    "chat_completions": {"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "reasoning_content": "thought"},
        {"role": "user", "content": "more"}]},
    "anthropic_messages": {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "thought", "signature": "sig"},
                                          {"type": "text", "text": "x"}]},
        {"role": "user", "content": "more"}]},
    "responses": {"model": "m", "input": [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thought"}],
         "encrypted_content": "enc"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
        {"role": "user", "content": "more"}]},
}


def test_there_is_one_door_per_api_mode_with_that_modes_codec():
    assert set(DOORS) == set(typing.get_args(ApiMode))
    for mode, door in DOORS.items():
        assert door.api_mode == mode and door.codec is codec_for(mode)


@pytest.mark.parametrize("mode", sorted(ECHOES))
def test_a_doors_issuer_is_the_one_its_codec_gives_echoed_reasoning(mode):
    req = DOORS[mode].codec.decode_request(ECHOES[mode], {})
    details = [d for m in req["messages"] for d in m.get("reasoning_details") or ()]
    assert details and {d["issuer"] for d in details} == {DOORS[mode].issuer}


def test_a_relayed_streams_error_frame_is_in_the_doors_own_sse_shape():
    err = HttpError(429, "slow down", "rate_limited")
    chat = DOORS["chat_completions"].error_frame(err, "req_1")
    assert chat.startswith(b"data: ") and chat.endswith(b"\n\n")
    assert orjson.loads(chat[6:])["error"]["type"] == "rate_limit_error"
    anthropic = DOORS["anthropic_messages"].error_frame(err, "req_1")
    name, data = anthropic.split(b"\n", 1)
    assert name == b"event: error"
    assert orjson.loads(data.removeprefix(b"data: "))["error"] == {"type": "rate_limit_error", "message": "slow down"}


def test_only_the_messages_door_passes_the_clients_api_version_upstream():
    assert DOORS["anthropic_messages"].passthrough_headers == ("anthropic-version", "anthropic-beta")
    assert DOORS["chat_completions"].passthrough_headers == DOORS["responses"].passthrough_headers == ()
