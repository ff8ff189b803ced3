"""The generated reference pages (tools/mkdocs_hooks.py) cover what the code defines."""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def test_every_config_field_has_a_row() -> None:
    from modelwire import config

    page = hooks.config_reference()
    for cls in (config.Config, config.ModelEntry, config.SmartRoutingConfig,
                config.CredentialPoolConfig, config.GatewayConfig, config.TeamsConfig):
        for f in dataclasses.fields(cls):
            if f.name not in ("name", "path"):
                assert f"| `{f.name}` |" in page, f"{cls.__name__}.{f.name} has no row"


def test_every_catalog_row_is_in_the_providers_table() -> None:
    from modelwire.providers.catalog import CATALOG

    page = hooks.providers_table()
    for name in CATALOG:
        assert f"| `{name}` |" in page


def test_the_price_table_shows_every_row_with_its_source_date_and_whether_it_was_verified() -> None:
    from modelwire.providers.prices import PRICES

    page = hooks.prices_table()
    lines = {line.split(" | ")[0]: line for line in page.splitlines() if line.startswith("| `")}
    for key, price in PRICES.items():
        line = lines[f"| `{key}`"]
        assert f"]({price.source})" in line and f" {price.checked} " in line
        assert line.endswith("| yes |") == price.verified


def test_the_errors_tree_has_every_exported_error() -> None:
    import modelwire
    from modelwire import errors

    page = hooks.errors_tree()
    for name in modelwire.__all__:
        if isinstance(getattr(errors, name, None), type):
            assert f"**`{name}`**" in page


def test_the_cli_page_has_every_command() -> None:
    from modelwire.cli import COMMANDS

    page = hooks.cli_reference()
    for name in COMMANDS:
        assert f"`modelwire {name}`" in page


def test_performance_results_render_and_name_their_charts() -> None:
    data = hooks.load_results()
    assert hooks.performance_tables().count("### ") == len(data["tables"])
    page = (ROOT / "docs" / "performance" / "index.md").read_text(encoding="utf-8")
    for chart in data["charts"]:
        assert f"]({chart['file']})" in page, f"{chart['file']} is drawn but not shown"


def test_a_chart_draws() -> None:
    pytest.importorskip("matplotlib")
    svg = hooks.draw_chart(hooks.load_results()["charts"][0])
    assert svg.startswith(b"<?xml") and b"<svg" in svg
