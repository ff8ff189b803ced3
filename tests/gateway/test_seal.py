from __future__ import annotations

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
