"""`modelwire models`: every provider with its protocol, URL and key variables; whether a key
is set but never the key; configured names with their roles."""

from __future__ import annotations

import json

from modelwire.cli import EXIT_OK, EXIT_USAGE, main
from modelwire.providers import CATALOG

CONFIG = """\
models:
  claude: {provider: anthropic, model: claude-sonnet-4-6, thinking: medium}
  cheap: {provider: openrouter, model: deepseek/deepseek-chat}
default_model: claude
fallback: [cheap]
smart_routing: {enabled: true, cheap_model: cheap}
"""


def test_lists_every_provider_and_key_status_without_the_key(capsys, monkeypatch):
    secret = "sk-or-v1-0123456789abcdef0123456789"
    monkeypatch.setenv("OPENROUTER_API_KEY", secret)
    assert main(["models"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # not a terminal: plain text
    for name, profile in CATALOG.items():
        assert f"  {name} " in out, name
        if profile.base_url and "{" not in profile.base_url:
            assert profile.base_url in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("openrouter "))
    assert "[OPENROUTER_API_KEY: set]" in line
    assert "[ANTHROPIC_API_KEY: missing]" in out
    assert secret not in out
    assert "models: none configured" in out


def test_json_lists_configured_names_with_roles(tmp_path, capsys):
    path = tmp_path / "modelwire.yaml"
    path.write_text(CONFIG)
    assert main(["models", "--config", str(path), "--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["config"] == str(path)
    assert {p["provider"] for p in data["providers"]} == set(CATALOG)
    models = {m["name"]: m for m in data["models"]}
    assert models["claude"] == {"name": "claude", "target": "anthropic/claude-sonnet-4-6",
                                "thinking": "medium", "roles": "default"}
    assert models["cheap"]["roles"] == "fallback, cheap"


def test_a_config_error_names_file_and_key_and_exits_2(tmp_path, capsys):
    path = tmp_path / "modelwire.yaml"
    path.write_text("models:\n  a: {provider: nope, model: m}\n")
    assert main(["models", "--config", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{path}: models.a.provider: unknown provider 'nope'" in err
    assert "Traceback" not in err
