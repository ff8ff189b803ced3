from __future__ import annotations

import json

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
    # none: the walk over the messages is skipped and the lane may forward the bytes
    for body in (b'{"messages": [{"role": "user", "content": "hi"}]}', b'{"s": "caf\\u00e9 mwseal1"}',
                 b'{"s": "mwSEAL1.x"}', b'{"s": "mwseal1\\u002fx"}', b""):
        assert not may_hold_envelope(body), body
