from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from modelwire.gateway.doors import DOORS, holds_envelope, open_sealed
from modelwire.gateway.seal import PREFIX, Sealer


def test_seal_round_trips_issuer_and_block_byte_exact():
    sealer = Sealer("a-long-enough-gateway-secret")
    block = {"type": "reasoning_content", "text": "first I add 2 and 2 ✓"}
    envelope = sealer.seal("deepseek", block)
    assert envelope.startswith(PREFIX) and "2 and 2" not in envelope
    opened = sealer.open(envelope)
    assert opened is not None and opened.issuer == "deepseek" and opened.block == block


def test_same_secret_opens_across_instances_other_secret_does_not():
    env = Sealer("a-long-enough-gateway-secret").seal("openrouter", {"type": "reasoning.text"})
    assert Sealer("a-long-enough-gateway-secret").open(env) is not None
    assert Sealer("another-secret-of-enough-size").open(env) is None


def test_tampered_or_malformed_envelopes_do_not_open():
    sealer = Sealer("a-long-enough-gateway-secret")
    env = sealer.seal("deepseek", {"type": "reasoning_content", "text": "x"})
    flipped = env[:-3] + ("A" if env[-3] != "A" else "B") + env[-2:]
    for bad in (flipped, env[:-5], PREFIX, PREFIX + "!!!", "EqQKCkYIBxgCKkA", ""):
        assert sealer.open(bad) is None


def test_ephemeral_secret_when_none_configured():
    assert Sealer().ephemeral and not Sealer("a-long-enough-gateway-secret").ephemeral


def test_a_body_may_hold_an_envelope_however_json_spells_its_prefix():
    from modelwire.gateway.seal import may_hold_envelope

    sealed = Sealer("s" * 32).seal("deepseek", {"type": "reasoning_content", "text": "t"})
    spelled = json.dumps({"signature": sealed}).encode()
    every_char_escaped = json.dumps({"signature": sealed}).encode().replace(
        b"mwseal1.", b"".join(b"\\u%04X" % ord(c) for c in "mwseal1."))
    assert json.loads(every_char_escaped) == json.loads(spelled)  # the same JSON value
    for body in (spelled, every_char_escaped, b'{"s": "mwseal1\\u002exyz"}', b'{"s": "\\u006dwseal1.x"}'):
        assert may_hold_envelope(body), body
    # none: a body the door could not decode may ride the lane as it is
    for body in (b'{"messages": [{"role": "user", "content": "hi"}]}', b'{"s": "caf\\u00e9 mwseal1"}',
                 b'{"s": "mwSEAL1.x"}', b'{"s": "mwseal1\\u002fx"}', b""):
        assert not may_hold_envelope(body), body


def _echo(door: str, envelope: str) -> dict:
    """A client's request at ``door`` that echoes ``envelope`` where that door's clients
    carry reasoning (a thinking signature, a reasoning item's encrypted content)."""
    if door == "anthropic_messages":
        turn = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": envelope},
                                                 {"type": "text", "text": "x"}]}
        return {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}, turn,
                                                            {"role": "user", "content": "again"}]}
    if door == "responses":
        return {"model": "m", "input": [
            {"role": "user", "content": "hi"}, {"type": "reasoning", "summary": [], "encrypted_content": envelope},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
            {"role": "user", "content": "again"}]}
    entry = {"issuer": "anthropic", "block": {"type": "thinking", "thinking": "t", "signature": envelope}}
    return {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": "x", "reasoning_details": [entry]},
                                       {"role": "user", "content": "again"}]}


_SPELLINGS = {"plain": b"mwseal1.", "first-escaped": b"\\u006dwseal1.", "dot-escaped": b"mwseal1\\u002e",
              "all-escaped": b"".join(b"\\u%04X" % ord(c) for c in "mwseal1.")}


@pytest.mark.parametrize("spelling", list(_SPELLINGS.values()), ids=list(_SPELLINGS))
@pytest.mark.parametrize("door", ["anthropic_messages", "responses", "chat_completions"])
def test_an_echoed_envelope_opens_however_the_clients_json_spells_it(door, spelling):
    # the gateway looks for envelopes in the decoded strings, where no escape is left
    sealer = Sealer("s" * 32)
    native = {"type": "reasoning_content", "text": "first add"}
    raw = orjson.dumps(_echo(door, sealer.seal("deepseek", native)))
    raw = raw.replace(b"mwseal1.", spelling)
    assert raw.count(spelling) == 1
    messages: list[Any] = DOORS[door].codec.decode_request(orjson.loads(raw), {}).get("messages", [])
    assert holds_envelope(messages)
    assert open_sealed(messages, sealer)[1].get("reasoning_details") == [{"issuer": "deepseek", "block": native}]


def test_messages_without_an_envelope_come_back_as_the_same_list():
    messages: list[Any] = DOORS["anthropic_messages"].codec.decode_request(
        _echo("anthropic_messages", "EqQBCkYIBxgCKkA"), {}).get("messages", [])
    text_only: list[Any] = [{"role": "user", "content": "mwseal1. in my own words"}, {"role": "assistant", "content": "mwseal1."}]
    nothing: list[Any] = []
    for plain in (messages, text_only, nothing):
        assert not holds_envelope(plain)
        assert open_sealed(plain, Sealer("s" * 32)) is plain


@pytest.mark.parametrize("details", [5, "mwseal1.x", {"block": {"signature": "mwseal1.x"}}, [None, 3, "mwseal1.x"],
                                     [{"block": "mwseal1.x"}], [{"block": {"signature": 7}}], [{"issuer": "x"}]],
                         ids=["int", "string", "dict", "odd-entries", "string-block", "int-signature", "no-block"])
def test_reasoning_details_of_any_shape_hold_no_envelope_and_pass_as_they_are(details):
    # holds_envelope runs on every request: whatever a client put there, no 500 and no change
    sealer = Sealer("s" * 32)
    messages: list[Any] = [{"role": "assistant", "content": "x", "reasoning_details": details}]
    assert not holds_envelope(messages)
    assert open_sealed(messages, sealer) is messages
    sealed = {"issuer": "anthropic", "block": {"signature": sealer.seal("deepseek", {"type": "t"})}}
    with_one: list[Any] = [*messages, {"role": "assistant", "content": "y", "reasoning_details": [sealed]}]
    assert open_sealed(with_one, sealer)[0] is messages[0]
