"""`modelwire route "text"` prints the config model name, cheap or primary, and the reason."""

from __future__ import annotations

import json

from modelwire.cli import EXIT_OK, EXIT_USAGE, main

CONFIG = """\
models:
  claude: {provider: anthropic, model: claude-sonnet-4-6}
  cheap: {provider: openrouter, model: deepseek/deepseek-chat}
default_model: claude
smart_routing: {enabled: true, cheap_model: cheap}
"""


def _config(tmp_path):
    path = tmp_path / "modelwire.yaml"
    path.write_text(CONFIG)
    return str(path)


def test_simple_message_goes_cheap(tmp_path, capsys):
    assert main(["route", "--config", _config(tmp_path), "what is the capital of France?"]) == EXIT_OK
    assert capsys.readouterr().out.splitlines() == [
        "model:  cheap (openrouter/deepseek/deepseek-chat)",
        "route:  cheap",
        "reason: simple: 6 words, no keywords",
    ]


def test_json_for_a_keyword_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MODELWIRE_CONFIG", _config(tmp_path))
    assert main(["route", "--json", "please debug this"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == {
        "model_name": "claude", "kind": "primary", "reason": "keyword: debug",
        "provider": "anthropic", "model": "claude-sonnet-4-6", "label": None,
    }


def test_a_config_without_a_primary_model_is_a_config_error(tmp_path, capsys):
    # with no config file at all, route explains an example pair (tests/cli/test_first_run.py)
    path = tmp_path / "modelwire.yaml"
    path.write_text("models:\n  cheap: {provider: openrouter, model: deepseek/deepseek-chat}\n")
    assert main(["route", "--config", str(path), "hello"]) == EXIT_USAGE
    assert "default_model" in capsys.readouterr().err


def test_model_option_sets_the_primary(capsys):
    assert main(["route", "--model", "groq/llama-3.3-70b-versatile", "hello"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "model:  groq/llama-3.3-70b-versatile (groq/llama-3.3-70b-versatile)" in out
    assert "reason: smart routing disabled" in out
