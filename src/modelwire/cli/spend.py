"""``modelwire spend``: what the gateway's requests cost, by key, team or model."""

from __future__ import annotations

import click

from ._teams import admin_for, config_option, emit, format_options, store_option

__all__ = ["command"]

_COLUMNS = ("group", "name", "requests", "input_tokens", "output_tokens", "cost_usd",
            "unpriced_requests")


@click.command(name="spend")
@click.option("--by", type=click.Choice(["key", "team", "model"]), default="key",
              show_default=True, help="Group the spend record by.")
@click.option("--since", default="7d", show_default=True,
              help="How far back: 7d, 24h, 30m, 2w.")
@format_options
@store_option
@config_option
def command(by: str, since: str, fmt: str, store_url: str | None, config_path: str | None) -> None:
    """Totals of the spend record (one row per request, written by the gateway), most
    cost first. Requests whose model has no known price count in unpriced_requests.

    \b
    Examples:
      modelwire spend --by key --since 7d
      modelwire spend --by model --since 30d --csv
      modelwire spend --by team --json
    """
    from ..teams.admin import total_view

    try:
        totals = admin_for(store_url, config_path).spend(by, since)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    rows = [total_view(t) for t in totals]
    for row in rows:
        if not row["group"]:
            row["group"] = "(env keys)" if by != "model" else "-"
    emit(rows, _COLUMNS, fmt)
