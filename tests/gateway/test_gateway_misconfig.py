"""Misconfiguration is loud: a seal from an instance with another secret is dropped (never
an error to the client) but logged once a minute, counted on /health and named in the
answer's ``x-modelwire-warning``."""

from __future__ import annotations

import logging

import anthropic
import httpx

from modelwire.config import config_from_dict
from modelwire.gateway.testing import RunningGateway

SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}


def _gateway(emulator, secret: str) -> RunningGateway:
    config = config_from_dict({"models": {"deepseek-like": {
        "provider": "emulator", "model": "deepseek-reasoner", "base_url": emulator.openai_base_url("deepseek")}}})
    return RunningGateway(config, environ={"MODELWIRE_SEAL_SECRET": secret})


def test_a_seal_from_an_instance_with_another_secret_is_loud(emulator, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="modelwire.gateway")
    kwargs = {"model": "deepseek-like", "max_tokens": 4096,
              "tools": [{"name": "calculator", "description": "Evaluate arithmetic", "input_schema": SCHEMA}],
              "thinking": {"type": "enabled", "budget_tokens": 2048}}
    messages = [{"role": "user", "content": "What is 17 times 23?"}]
    with _gateway(emulator, "secret-of-instance-a-0123456789") as a, \
            _gateway(emulator, "secret-of-instance-b-0123456789") as b:
        first = anthropic.Anthropic(base_url=a.base_url, api_key="x", max_retries=0).messages.create(
            messages=messages, **kwargs)
        use = next(block for block in first.content if block.type == "tool_use")
        messages += [{"role": "assistant", "content": [blk.model_dump(exclude_none=True) for blk in first.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "391"}]}]
        assert httpx.get(b.base_url + "/health").json()["seals_unopened"] == 0
        for _ in range(2):
            r = httpx.post(b.base_url + "/v1/messages", json={"messages": messages, **kwargs}, timeout=30)
            assert r.status_code == 200, r.text  # dropped, never the client's error
            assert "MODELWIRE_SEAL_SECRET" in r.headers["x-modelwire-warning"]
        health = httpx.get(b.base_url + "/health").json()
        assert health["seals_unopened"] >= 2
        plain = httpx.post(b.base_url + "/v1/messages", json={"messages": messages[:1], **kwargs}, timeout=30)
        assert "x-modelwire-warning" not in plain.headers
    logged = [r for r in caplog.records if "MODELWIRE_SEAL_SECRET" in r.getMessage()]
    assert len(logged) == 1  # once a minute, not once a request


def test_health_shows_the_limits() -> None:
    config = config_from_dict({"gateway": {"header_timeout": 3, "max_connections": 77}})
    with RunningGateway(config, environ={}) as gw:
        limits = httpx.get(gw.base_url + "/health").json()["limits"]
    assert limits["header_timeout"] == 3 and limits["max_connections"] == 77
    assert limits["body_timeout"] == 30 and limits["max_json_depth"] == 128
