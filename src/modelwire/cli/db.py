"""``modelwire db``: the PostgreSQL schema of teams (``db upgrade``, ``db status``).

The store is ``teams.store`` of the config file, or ``--store URL``. A SQLite store
needs neither command: its tables are made when it is first opened.
"""

from __future__ import annotations

import click

__all__ = ["command"]


def _url(config_path: str | None, store: str | None) -> str | None:
    """The PostgreSQL URL to work on; None (after saying why) for a SQLite store."""
    if store is None:
        from ..config import load_config
        from ..teams.backends import store_url

        store = store_url(load_config(config_path))
    if store.startswith("sqlite:"):
        click.echo(f"teams.store is SQLite ({store}): its tables are made on first use; "
                   "nothing to do", err=True)
        return None
    if not store.startswith(("postgresql://", "postgres://")):
        raise click.UsageError(f"expected a postgresql:// URL, got {store!r}")
    return store


_OPTIONS = [
    click.option("--config", "config_path", type=click.Path(dir_okay=False),
                 help="Config file (its teams.store)."),
    click.option("--store", help="postgresql://user@host:port/db instead of the config's "
                                 "teams.store (a password here lands in shell history: "
                                 "prefer PGPASSWORD or ~/.pgpass)."),
]


def _with_options(f):  # type: ignore[no-untyped-def]
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


@click.group(
    name="db",
    epilog=("Examples:\n\n"
            "  modelwire db upgrade --config modelwire.yaml\n\n"
            "  modelwire db status --store postgresql://modelwire@db.internal/modelwire"),
)
def command() -> None:
    """The PostgreSQL schema of keys, teams and spend: apply and list its migrations."""


@command.command("upgrade")
@_with_options
def upgrade_command(config_path: str | None, store: str | None) -> None:
    """Apply the migrations not applied yet, in order (safe to run again, and from
    several machines at once)."""
    from ..teams.migrate import upgrade
    from ..teams.postgres import connect, safe_url

    url = _url(config_path, store)
    if url is None:
        return
    with connect(url) as conn:
        applied = upgrade(conn)
    for m in applied:
        click.echo(f"applied {m.version}_{m.name}")
    click.echo(f"{safe_url(url)}: schema up to date"
               + ("" if applied else " (nothing to apply)"))


@command.command("status")
@_with_options
def status_command(config_path: str | None, store: str | None) -> None:
    """List the migrations and when each was applied; exit 1 when some are not."""
    from ..teams.migrate import status
    from ..teams.postgres import connect, safe_url

    url = _url(config_path, store)
    if url is None:
        return
    with connect(url) as conn:
        states = status(conn)
    click.echo(safe_url(url))
    for s in states:
        when = s.applied_at or "not applied"
        changed = "" if s.checksum in (None, s.migration.checksum) else \
            " (the shipped file differs from what was applied)"
        click.echo(f"  {s.migration.version}_{s.migration.name:<24} {when}{changed}")
    missing = [s for s in states if s.applied_at is None]
    if missing:
        click.echo(f"{len(missing)} not applied: run `modelwire db upgrade`", err=True)
        raise click.exceptions.Exit(1)
