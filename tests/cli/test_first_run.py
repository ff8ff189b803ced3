"""A first run with no config file: ``route`` explains routing on a built-in example pair,
``serve`` serves the emulator's models; both say so, and a real config replaces them."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from modelwire.cli import EXIT_OK, main
from modelwire.cli.builtin import (
    emulator_config_file,
    emulator_gateway_config,
    has_no_config,
    routing_example_config,
)
from modelwire.client.resolution import resolve
from modelwire.config import load_config
from modelwire.emulator.endpoints import MODELS


def test_route_without_config_explains_the_example_pair(capsys):
    assert main(["route", "what is the capital of France?"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert "route:  cheap" in out and "emulator/claude-haiku-4-5" in out
    assert err.startswith("no config found: routing on a built-in example pair")


def test_route_json_without_config_is_one_object_and_escalates_on_keywords(capsys):
    assert main(["route", "--json", "debug this traceback for me"]) == EXIT_OK
    out, err = capsys.readouterr()
    decision = json.loads(out)
    assert (decision["kind"], decision["model_name"]) == ("primary", "strong")
    assert decision["reason"] == "keyword: debug"
    assert "example pair" in err


def test_route_with_a_config_routes_its_models_and_mentions_no_example(tmp_path, capsys):
    path = tmp_path / "modelwire.yaml"
    path.write_text("models:\n  big: {provider: emulator, model: emulator-1}\n"
                    "  small: {provider: emulator, model: gpt-4o-mini}\n"
                    "default_model: big\nsmart_routing: {enabled: true, cheap_model: small}\n")
    assert main(["route", "--config", str(path), "hi there"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert "model:  small (emulator/gpt-4o-mini)" in out
    assert "example" not in err


def test_no_config_is_only_the_absence_of_a_file(tmp_path):
    assert has_no_config(load_config())
    path = tmp_path / "modelwire.yaml"
    path.write_text("default_model: emulator/emulator-1\n")
    assert not has_no_config(load_config(path))


def test_builtin_gateway_serves_every_emulator_model_through_its_vendors_protocol():
    config = emulator_gateway_config()
    assert list(config.models) == list(MODELS) and config.default_model == "emulator-1"
    modes = {name: resolve(name, config=config).profile.api_mode for name in config.models}
    assert modes["claude-sonnet-4-6"] == "anthropic_messages"
    assert modes["gpt-5.5"] == "responses"
    assert modes["emulator-1"] == modes["deepseek-reasoner"] == "chat_completions"


def test_builtin_gateway_serves_a_coding_agents_dated_ids_by_family():
    from modelwire.gateway.models import ModelTable

    table = ModelTable.from_config(emulator_gateway_config())
    assert table.resolve("claude-haiku-4-5-20251001") == "claude-haiku-4-5"
    assert table.resolve("claude-opus-4-8") == "claude-opus-4-7"  # Claude Code 2.1's default
    assert table.resolve("claude-sonnet-4-5-20250929") == "claude-sonnet-4-6"
    assert table.resolve("gpt-5.1-codex") == "gpt-5.5"
    assert table.resolve("gpt-4o-mini") == "gpt-4o-mini"  # a served name beats the family
    assert "claude-*" not in [m["id"] for m in table.listing(anthropic=False)["data"]]


def test_routing_example_resolves_both_models():
    config = routing_example_config()
    assert config.smart_routing.enabled
    for name in config.models:
        assert resolve(name, config=config).provider == "emulator"



def test_the_workers_config_file_points_every_model_at_one_running_emulator():
    """serve --workers N: a turn's thinking, signed by the emulator behind one worker, must
    verify behind the next worker too, so they share one emulator (not one each)."""
    with emulator_config_file() as path:
        config = load_config(path)
        origins = {resolve(name, config=config).base_url.removesuffix("/v1")  # type: ignore[union-attr]
                   for name in config.models}
        assert len(origins) == 1 and list(config.models) == list(MODELS)
        assert httpx.get(f"{origins.pop()}/v1/models", headers={"x-api-key": "k"}).status_code == 200
    assert not Path(path).exists()
