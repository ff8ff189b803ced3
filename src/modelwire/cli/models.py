"""``modelwire models``: the provider catalog and the configured model names.

Shows, per provider: name, protocol, base URL, key variables and whether one of
them is set (never the key itself). Then the names from ``modelwire.yaml``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..config import Config
    from ..providers.profile import ProviderProfile


__all__ = ["command"]


def _key_status(profile: ProviderProfile, environ: Mapping[str, str]) -> str:
    if profile.extra.get("oauth"):
        return "oauth"
    if not profile.key_env:
        return "not needed" if profile.local or profile.emulated else "-"
    if any(environ.get(name) for name in profile.key_env):
        return "set"
    return "optional" if profile.local else "missing"


def _provider_rows() -> list[dict[str, str]]:
    from ..providers.catalog import CATALOG, RUNTIME_BASE_URL

    rows = []
    for name in sorted(CATALOG):
        p = CATALOG[name]
        base = p.base_url or ("(given at run time)" if name in RUNTIME_BASE_URL else "")
        rows.append({"provider": name, "api_mode": p.api_mode, "base_url": base,
                     "key_env": ", ".join(p.key_env), "key": _key_status(p, os.environ)})
    return rows


def _model_rows(config: Config) -> list[dict[str, str]]:
    roles: dict[str, list[str]] = {}
    if config.default_model:
        roles.setdefault(config.default_model, []).append("default")
    for name in config.fallback:
        roles.setdefault(name, []).append("fallback")
    if config.smart_routing.enabled and config.smart_routing.cheap_model:
        roles.setdefault(config.smart_routing.cheap_model, []).append("cheap")
    rows = []
    for name, entry in config.models.items():
        rows.append({"name": name, "target": f"{entry.provider}/{entry.model}",
                     "thinking": entry.thinking or "", "roles": ", ".join(roles.get(name, []))})
    return rows


@click.command(
    name="models",
    epilog=("Examples:\n\n  modelwire models\n\n  modelwire models --json\n\n"
            "With --config FILE the configured names come from FILE."),
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="Config file (default: $MODELWIRE_CONFIG, else the user config file).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def command(config_path: str | None, as_json: bool) -> None:
    """List providers (protocol, base URL, key variables, key set?) and configured models."""
    from ..config import load_config
    from . import plain_output

    config = load_config(config_path)
    providers, models = _provider_rows(), _model_rows(config)
    if as_json:
        click.echo(json.dumps({"providers": providers, "models": models,
                               "config": config.path}, indent=2))
        return
    if plain_output():
        _plain(providers, models, config.path)
    else:
        _rich(providers, models, config.path)


def _plain(providers: list[dict[str, str]], models: list[dict[str, str]], path: str | None) -> None:
    width = max(len(r["provider"]) for r in providers)
    click.echo("providers:")
    for r in providers:
        keys = f"  [{r['key_env']}: {r['key']}]" if r["key_env"] else f"  [{r['key']}]"
        click.echo(f"  {r['provider']:<{width}}  {r['api_mode']:<18}  {r['base_url']}{keys}")
    click.echo("")
    if not models:
        click.echo(f"models: none configured{f' in {path}' if path else ''}")
        return
    click.echo(f"models ({path}):")
    for m in models:
        extra = "".join(f"  {v}" for v in (m["thinking"] and f"thinking {m['thinking']}",
                                           m["roles"] and f"({m['roles']})") if v)
        click.echo(f"  {m['name']}  →  {m['target']}{extra}")


def _rich(providers: list[dict[str, str]], models: list[dict[str, str]], path: str | None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="providers", show_lines=False)
    table.add_column("provider", no_wrap=True)
    table.add_column("api mode", no_wrap=True)
    table.add_column("base URL", overflow="fold")  # a URL cut with "…" is useless
    table.add_column("key variables", overflow="fold")
    table.add_column("key", no_wrap=True)
    colors = {"set": "green", "missing": "red"}
    for r in providers:
        key = r["key"]
        table.add_row(r["provider"], r["api_mode"], r["base_url"], r["key_env"],
                      f"[{colors[key]}]{key}[/]" if key in colors else key)
    console.print(table)
    if not models:
        console.print(f"[dim]models: none configured{f' in {path}' if path else ''}[/dim]")
        return
    mt = Table(title=f"models ({path})")
    for col in ("name", "provider/model", "thinking", "role"):
        mt.add_column(col)
    for m in models:
        mt.add_row(m["name"], m["target"], m["thinking"], m["roles"])
    console.print(mt)
