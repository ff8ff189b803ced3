"""``modelwire route "text"``: which model smart routing picks for a message, and why."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..config import Config


__all__ = ["command"]


@click.command(
    name="route",
    epilog=(
        "Examples:\n\n"
        "  modelwire route \"what is the capital of France?\"\n\n"
        "  modelwire route --json \"debug this traceback for me\"\n\n"
        "Uses smart_routing from the config: simple turns go to cheap_model, "
        "the rest to default_model (or --model). With no config file it explains the "
        "decision on a built-in example pair of emulator models and says so."
    ),
)
@click.argument("text")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="Config file (default: $MODELWIRE_CONFIG, else the user config file).")
@click.option("--model", "primary", help="The primary model (default: default_model).")
@click.option("--images", is_flag=True, help="The turn carries images.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def command(text: str, config_path: str | None, primary: str | None, images: bool,
            as_json: bool) -> None:
    """Print the routing decision for TEXT: config model name, cheap or primary, reason."""
    from ..config import load_config
    from ..routing import choose_route
    from .builtin import has_no_config, routing_example_config

    config = load_config(config_path)
    if has_no_config(config) and primary is None:  # --model alone: that model, unrouted
        config = routing_example_config()
        _announce_example(config)
    route = choose_route(text, config, has_images=images, primary=primary)
    if as_json:
        click.echo(json.dumps({
            "model_name": route.model_name, "kind": route.kind, "reason": route.reason,
            "provider": route.provider, "model": route.model, "label": route.label,
        }))
        return
    click.echo(f"model:  {route.model_name} ({route.provider}/{route.model})")
    click.echo(f"route:  {route.kind}")
    click.echo(f"reason: {route.reason}")


def _announce_example(config: Config) -> None:
    """On stderr, so ``--json`` output stays one object."""
    pair = ", ".join(f"{name} = {entry.provider}/{entry.model}"
                     for name, entry in config.models.items())
    click.echo(f"no config found: routing on a built-in example pair ({pair}; "
               f"simple turns go to {config.smart_routing.cheap_model}). Set smart_routing "
               "in modelwire.yaml to route your own models.", err=True)
