"""Fallbacks as first-class models: a ``Model`` carries its own endpoint, key, headers and
timeout; every entry resolves at construction; the final error names what never ran."""

from __future__ import annotations

import logging

import pytest

from modelwire import Client, ConfigError, FallbackExhaustedError, Model, ReadTimeoutError
from modelwire.resilience import RetryPolicy
from modelwire.transport import Timeouts

KEY = "sk-test-0123456789abcdef"
BACKUP_KEY = "sk-backup-fedcba9876543210"
HI = [{"role": "user", "content": "hi"}]


def _primary(wire, sleeps, **kw):
    kw.setdefault("retry", RetryPolicy(jitter=0))
    return Client(f"custom/{wire.model}", base_url=wire.base_url("chat_completions"),
                  api_mode="chat_completions", api_key=KEY, sleep=sleeps, **kw)


def test_a_fallback_model_is_sent_to_its_own_endpoint_with_its_own_key_and_headers(
        wire, sleeps):
    wire.fault("quota")  # the primary's model only
    backup = Model(f"custom/{wire.model}-2", base_url=wire.base_url("anthropic_messages"),
                   api_mode="anthropic_messages", api_key=BACKUP_KEY, headers={"x-team": "blue"})
    with _primary(wire, sleeps, fallback=[backup]) as client:
        done = client.complete(HI)
    first, second = wire.requests()
    assert first["path"].endswith("/chat/completions")
    assert second["path"].endswith("/v1/messages")
    assert second["headers"]["x-api-key"].startswith(BACKUP_KEY[:6])
    assert second["headers"]["x-api-key"].endswith(BACKUP_KEY[-4:])
    assert second["headers"]["x-team"] == "blue" and "x-team" not in first["headers"]
    assert done.model == f"{wire.model}-2"


def test_a_fallback_reads_its_key_from_its_own_variable(wire, sleeps, monkeypatch):
    monkeypatch.setenv("MW_TEST_BACKUP_KEY", BACKUP_KEY)
    wire.fault("quota")
    backup = Model(f"custom/{wire.model}-2", base_url=wire.base_url("chat_completions"),
                   api_mode="chat_completions", api_key_env="MW_TEST_BACKUP_KEY")
    with _primary(wire, sleeps, fallback=[backup]) as client:
        client.complete(HI)
    assert wire.requests()[1]["headers"]["authorization"].endswith(BACKUP_KEY[-4:])


def test_a_fallback_models_timeout_replaces_the_clients(wire, sleeps):
    wire.fault("quota")
    wire.fault("hang", model=f"{wire.model}-2", seconds=3)
    backup = Model(f"custom/{wire.model}-2", base_url=wire.base_url("chat_completions"),
                   api_mode="chat_completions", api_key=KEY,
                   timeout=Timeouts(connect=1.0, read=0.3, stale=0.3))
    with _primary(wire, sleeps, fallback=[backup], retry=RetryPolicy(attempts=1, jitter=0)) as client, \
            pytest.raises(FallbackExhaustedError) as caught:
        client.complete(HI)
    assert isinstance(caught.value.errors[-1], ReadTimeoutError)


def test_the_primary_may_be_a_model_too(wire, sleeps):
    primary = Model(f"custom/{wire.model}", base_url=wire.base_url("chat_completions"),
                    api_mode="chat_completions", api_key=KEY)
    with Client(primary, sleep=sleeps) as client:
        assert client.model == f"custom/{wire.model}"
        assert client.complete(HI).model == wire.model
    with pytest.raises(ConfigError, match="not both"):
        Client(primary, api_key=KEY)


def test_a_fallback_that_cannot_resolve_raises_at_construction_naming_it():
    with pytest.raises(ConfigError, match="fallback 'custom/backup'.*base_url"):
        Client("emulator/emulator-1", fallback=["custom/backup"])


def test_lenient_fallbacks_warn_once_are_recorded_and_named_when_the_chain_gives_up(
        wire, sleeps, caplog):
    wire.fault("server_error")
    with caplog.at_level(logging.WARNING, logger="modelwire.client"):
        client = _primary(wire, sleeps, fallback=["custom/backup"], strict_fallbacks=False,
                          retry=RetryPolicy(attempts=1, jitter=0))
    warned = [r for r in caplog.records if "custom/backup" in r.getMessage()]
    assert len(warned) == 1
    assert [s.model for s in client.skipped_fallbacks] == ["custom/backup"]
    with client, pytest.raises(FallbackExhaustedError) as caught:
        client.complete(HI)
    assert caught.value.skipped and "custom/backup" in caught.value.skipped[0]
    assert "base_url" in str(caught.value)
    assert len([r for r in caplog.records if "custom/backup" in r.getMessage()]) == 1


def test_exhausted_chain_lists_skipped_duplicates_beside_the_failed_attempts(wire, sleeps):
    wire.fault("server_error", any_model=True)
    primary = f"custom/{wire.model}"
    backup = Model(f"custom/{wire.model}-2", base_url=wire.base_url("chat_completions"),
                   api_mode="chat_completions", api_key=KEY)
    with _primary(wire, sleeps, fallback=[primary, backup],
                  retry=RetryPolicy(attempts=1, jitter=0)) as client, \
            pytest.raises(FallbackExhaustedError) as caught:
        client.complete(HI)
    assert len(caught.value.errors) == 2
    assert any(primary in s and "earlier" in s for s in caught.value.skipped)


def test_model_repr_never_shows_the_key():
    assert BACKUP_KEY not in repr(Model("openai/gpt-5-mini", api_key=BACKUP_KEY))
