"""Keyless serving is allowed only when every address ``--host`` binds is loopback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from modelwire.cli.serve import command
from modelwire.gateway.auth import bind_addresses, is_loopback


@pytest.mark.parametrize("host", ["", " ", "0.0.0.0", "::", "[::]", "no-such-host.invalid", "10.1.2.3"],
                         ids=["empty", "blank", "any-v4", "any-v6", "any-v6-bracketed", "unresolvable", "lan"])
def test_hosts_that_bind_beyond_loopback_are_not_loopback(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"])
def test_loopback_hosts_are_loopback(host: str) -> None:
    assert is_loopback(host)


def test_the_empty_host_binds_every_interface() -> None:
    # what the event loop's create_server does with host="": the wildcard addresses
    assert set(bind_addresses("")) & {"0.0.0.0", "::"}


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::"], ids=["empty", "any-v4", "any-v6"])
def test_serve_refuses_a_wildcard_host_without_keys(host: str, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MODELWIRE_GATEWAY_KEYS", raising=False)
    config = tmp_path / "modelwire.yaml"
    config.write_text("models: {}\n")
    result = CliRunner().invoke(command, ["--config", str(config), "--host", host, "--port", "1"])
    assert result.exit_code == 2, result.output
    assert "refusing to serve" in result.output
