"""``modelwire teams``: teams of virtual keys, each with its own budget and limits (the
tighter of a key's and its team's applies)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ._teams import admin_for, config_option, emit, format_options, store_option

__all__ = ["command"]

_COLUMNS = ("name", "id", "budget", "spent_usd", "rpm", "tpm", "keys")


def _fields(budget: str | None, rpm: str | None, tpm: str | None) -> dict[str, Any]:
    return {k: v for k, v in {"budget": budget, "rpm": rpm, "tpm": tpm}.items() if v is not None}


def _options(fn: Callable[..., Any]) -> Any:
    fn = click.option("--tpm", default=None, help="Tokens per minute for the whole team.")(fn)
    fn = click.option("--rpm", default=None, help="Requests per minute for the whole team.")(fn)
    return click.option("--budget", default=None, help="USD per period: 500/month.")(fn)


@click.group(name="teams")
def command() -> None:
    """Teams of virtual keys, with a budget and rate limits of their own.

    \b
    Examples:
      modelwire teams create --name platform --budget 500/month --rpm 600
      modelwire teams list
    """


@command.command("create")
@click.option("--name", required=True, help="The team's name (unique).")
@_options
@store_option
@config_option
def create_command(name: str, budget: str | None, rpm: str | None, tpm: str | None,
                   store_url: str | None, config_path: str | None) -> None:
    """Make a team (give keys to it with `keys create --team NAME`)."""
    try:
        team = admin_for(store_url, config_path).create_team({"name": name, **_fields(budget, rpm, tpm)})
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"team {team.name!r} ({team.id}) made")


@command.command("list")
@format_options
@store_option
@config_option
def list_command(fmt: str, store_url: str | None, config_path: str | None) -> None:
    """Every team, its limits, its spend in the budget's period and its number of keys."""
    from ..teams.admin import team_view

    admin = admin_for(store_url, config_path)
    keys = admin.store.list_keys()
    rows = []
    for team in admin.store.list_teams():
        view = team_view(team, admin.spent_now(team))
        view["keys"] = sum(k.team_id == team.id for k in keys)
        rows.append(view)
    emit(rows, _COLUMNS, fmt)


@command.command("update")
@click.argument("ref")
@click.option("--name", default=None, help="A new name.")
@_options
@store_option
@config_option
def update_command(ref: str, name: str | None, budget: str | None, rpm: str | None,
                   tpm: str | None, store_url: str | None, config_path: str | None) -> None:
    """Change a team's budget or limits (REF: its name or id; 'none' removes one)."""
    fields = _fields(budget, rpm, tpm)
    if name is not None:
        fields["name"] = name
    if not fields:
        raise click.UsageError("nothing to change: give --budget, --rpm, --tpm or --name")
    try:
        team = admin_for(store_url, config_path).update_team(ref, fields)
    except (ValueError, LookupError) as exc:
        raise click.UsageError(str(exc.args[0] if exc.args else exc)) from None
    click.echo(f"team {team.name!r} updated")
