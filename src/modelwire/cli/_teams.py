"""What ``keys``, ``teams`` and ``spend`` share: the store they open and how they print."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

import click

__all__ = ["admin_for", "config_option", "emit", "format_options", "store_option"]


def store_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--store", "store_url", default=None, metavar="URL",
                        help="The teams store (default: teams.store, else the state file).")(fn)


def config_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--config", "config_path", default=None, type=click.Path(),
                        help="modelwire.yaml (default: MODELWIRE_CONFIG, then the user config).")(fn)


def admin_for(store_url: str | None, config_path: str | None) -> Any:
    from ..teams.admin import KeyAdmin
    from ..teams.backends import open_store
    from ..teams.backends import store_url as configured

    if store_url is None:
        from ..config import load_config

        store_url = configured(load_config(config_path))
    return KeyAdmin(open_store(store_url))


def emit(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> None:
    """``rows`` as an aligned table, ``--json`` or ``--csv``."""
    if fmt == "json":
        click.echo(json.dumps(list(rows), indent=2))
        return
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows([{k: ",".join(v) if isinstance(v, list) else v for k, v in r.items()}
                          for r in rows])
        click.echo(out.getvalue(), nl=False)
        return
    if not rows:
        click.echo("(none)")
        return
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    click.echo("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for row in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value)) or "*"
    return str(value)


def format_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--csv", "fmt", flag_value="csv", help="CSV output.")(fn)
    fn = click.option("--json", "fmt", flag_value="json", help="JSON output.")(fn)
    return click.option("--table", "fmt", flag_value="table", default=True, hidden=True)(fn)
