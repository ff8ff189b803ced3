"""The configs the CLI uses when the user has none, so a first run shows something real.

``serve`` puts the built-in emulator's models behind the gateway; ``route`` explains
smart routing on an example pair of emulator models. Both say so in their first lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["ROUTING_EXAMPLE", "emulator_gateway_config", "emulator_gateway_spec",
           "has_no_config", "routing_example_config", "upstream_for"]

# (config name, provider/model) of the example pair ``route`` explains without a config
ROUTING_EXAMPLE = (("strong", "emulator/claude-sonnet-4-6"), ("cheap", "emulator/claude-haiku-4-5"))


def has_no_config(config: Config) -> bool:
    """True when no config file was found and nothing was configured."""
    return config.path is None and not config.models


def upstream_for(model: str) -> str:
    """The emulator door a model id is served through: its own vendor's protocol, so a
    client sees the same reasoning blocks and ids it would get from that vendor."""
    if model.startswith("claude-"):
        return "emulator-anthropic"
    if model.startswith("gpt-5"):
        return "emulator-responses"
    return "emulator"


def emulator_gateway_spec() -> dict[str, Any]:
    """Every model the built-in emulator answers to, by its own id, as a config file's
    data (``serve --workers N`` hands it to its workers as a file); emulator-1 first."""
    from ..emulator.endpoints import MODELS

    models = {name: {"provider": upstream_for(name), "model": name} for name in MODELS}
    return {"models": models, "default_model": MODELS[0]}


def emulator_gateway_config() -> Config:
    from ..config import config_from_dict

    return config_from_dict(emulator_gateway_spec())


def routing_example_config() -> Config:
    """Smart routing on: simple turns go to ``cheap``, the rest to ``strong``."""
    from ..config import config_from_dict

    models = {}
    for name, ref in ROUTING_EXAMPLE:
        provider, model = ref.split("/", 1)
        models[name] = {"provider": provider, "model": model}
    strong, cheap = (name for name, _ in ROUTING_EXAMPLE)
    return config_from_dict({"models": models, "default_model": strong,
                             "smart_routing": {"enabled": True, "cheap_model": cheap}})
