"""``modelwire keys``: virtual keys for the gateway (create, list, update, revoke).

A new key is printed once, when it is made: only its SHA-256 is stored, so it cannot
be shown again (revoke it and make another if it is lost). ``list`` shows each key's
first characters, its limits and what it spent in its budget's period.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ._teams import admin_for, config_option, emit, format_options, store_option

__all__ = ["command"]

_COLUMNS = ("name", "key", "team", "models", "budget", "spent_usd", "rpm", "tpm", "expires_at",
            "status")


def _fail(exc: Exception) -> click.ClickException:
    return click.UsageError(str(exc.args[0] if exc.args else exc))


def _limits(models: str | None, budget: str | None, rpm: str | None, tpm: str | None,
            expires: str | None, team: str | None) -> dict[str, Any]:
    given = {"models": models, "budget": budget, "rpm": rpm, "tpm": tpm, "expires": expires,
             "team": team}
    return {k: v for k, v in given.items() if v is not None}


def _limit_options(fn: Callable[..., Any]) -> Any:
    fn = click.option("--team", default=None, help="The team it belongs to (name or id; '' for none).")(fn)
    fn = click.option("--expires", default=None, help="Lifetime: 90d, 12h, 2w ('never': no expiry).")(fn)
    fn = click.option("--tpm", default=None, help="Tokens per minute ('none': no limit).")(fn)
    fn = click.option("--rpm", default=None, help="Requests per minute ('none': no limit).")(fn)
    fn = click.option("--budget", default=None, help="USD per period: 50/month, 5/day, 20/week, 100/total.")(fn)
    return click.option("--models", default=None,
                        help="Comma-separated globs of model names it may use (default: all).")(fn)


@click.group(name="keys")
def command() -> None:
    """Virtual keys for the gateway (teams.enabled): per-person keys with model lists,
    budgets and rate limits.

    \b
    Examples:
      modelwire keys create --name alice --models 'claude-*,gpt-5*' --budget 50/month --rpm 60 --tpm 200000 --expires 90d --team platform
      modelwire keys list
      modelwire keys update alice --rpm 120
      modelwire keys revoke alice
    """


@command.command("create")
@click.option("--name", required=True, help="Who or what the key is for (unique).")
@_limit_options
@store_option
@config_option
def create_command(name: str, models: str | None, budget: str | None, rpm: str | None,
                   tpm: str | None, expires: str | None, team: str | None,
                   store_url: str | None, config_path: str | None) -> None:
    """Make a key and print it (once: only its hash is kept)."""
    admin = admin_for(store_url, config_path)
    try:
        key, secret = admin.create_key({"name": name, **_limits(models, budget, rpm, tpm, expires, team)})
    except (ValueError, LookupError) as exc:
        raise _fail(exc) from None
    click.echo(secret)
    click.echo(f"key {key.name!r} ({key.id}) made; this is the only time it is shown", err=True)


@command.command("list")
@format_options
@store_option
@config_option
def list_command(fmt: str, store_url: str | None, config_path: str | None) -> None:
    """Every key: masked, with its limits and its spend in the budget's period."""
    import time

    from ..teams.admin import key_view

    admin = admin_for(store_url, config_path)
    teams = {t.id: t.name for t in admin.store.list_teams()}
    now = time.time()
    rows = []
    for key in admin.store.list_keys():
        view = key_view(key, admin.spent_now(key))
        view["team"] = teams.get(key.team_id or "", key.team_id)
        view["status"] = ("revoked" if key.revoked_at is not None and key.revoked_at <= now
                          else "expired" if not key.is_active(now) else "active")
        rows.append(view)
    emit(rows, _COLUMNS, fmt)


@command.command("update")
@click.argument("ref")
@click.option("--name", default=None, help="A new name.")
@_limit_options
@store_option
@config_option
def update_command(ref: str, name: str | None, models: str | None, budget: str | None,
                   rpm: str | None, tpm: str | None, expires: str | None, team: str | None,
                   store_url: str | None, config_path: str | None) -> None:
    """Change a key's limits (REF: its name or id); the gateway applies them within
    teams.key_cache_ttl."""
    fields = _limits(models, budget, rpm, tpm, expires, team)
    if name is not None:
        fields["name"] = name
    if not fields:
        raise click.UsageError("nothing to change: give --models, --budget, --rpm, --tpm, "
                               "--expires, --team or --name")
    try:
        key = admin_for(store_url, config_path).update_key(ref, fields)
    except (ValueError, LookupError) as exc:
        raise _fail(exc) from None
    click.echo(f"key {key.name!r} updated")


@command.command("revoke")
@click.argument("ref")
@store_option
@config_option
def revoke_command(ref: str, store_url: str | None, config_path: str | None) -> None:
    """Revoke a key (REF: its name or id): refused by every gateway instance within
    teams.key_cache_ttl."""
    try:
        key = admin_for(store_url, config_path).revoke_key(ref)
    except LookupError as exc:
        raise _fail(exc) from None
    click.echo(f"key {key.name!r} revoked")
