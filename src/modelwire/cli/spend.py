"""``modelwire spend``: what the gateway's requests cost, by key, team or model."""

from __future__ import annotations

import sys
import time
from typing import Any

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
    Under the table, the cost per hour (up to --since 48h) or per day as a sparkline.

    \b
    Examples:
      modelwire spend --by key --since 7d
      modelwire spend --by model --since 30d --csv
      modelwire spend --by team --json
    """
    from ..teams.admin import total_view

    try:
        admin = admin_for(store_url, config_path)
        totals = admin.spend(by, since)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    rows = [total_view(t) for t in totals]
    for row in rows:
        if not row["group"]:
            row["group"] = "(env keys)" if by != "model" else "-"
    emit(rows, _COLUMNS, fmt)
    if fmt == "table":
        click.echo(_trend(admin, since))


def _trend(admin: Any, since: str) -> str:
    """One line under the table: cost per hour (up to two days) or per day, as a
    sparkline (ASCII where stdout cannot print block characters)."""
    from ._spark import sparkline, unicode_ok

    step, points = admin.spend_series(since)
    costs = [p.cost_usd for p in points]
    ascii = not unicode_ok(getattr(sys.stdout, "encoding", None))
    unit = "hour" if step < 86400 else "day"
    peak = max(points, key=lambda p: p.cost_usd) if any(costs) else None
    tail = "" if peak is None else (
        f"  peak ${peak.cost_usd:.4f} at " + time.strftime("%Y-%m-%d %H:00" if unit == "hour" else "%Y-%m-%d",
                                                       time.gmtime(peak.start)) + " UTC")
    return (f"cost per {unit}, last {since}: {sparkline(costs, ascii=ascii)}  "
            f"total ${sum(costs):.4f}, {sum(p.requests for p in points)} requests{tail}")
