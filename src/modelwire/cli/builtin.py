"""The configs the CLI uses when the user has none, so a first run shows something real.

``serve`` puts the built-in emulator's models behind the gateway; ``route`` explains
smart routing on an example pair of emulator models. Both say so in their first lines.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config
    from ..emulator import Emulator

__all__ = ["FAMILY_ALIASES", "ROUTING_EXAMPLE", "emulator_config_file", "emulator_gateway_config",
           "emulator_gateway_spec", "has_no_config", "routing_example_config", "upstream_for"]

# Coding agents send their own model ids (Claude Code 2.1's default is claude-opus-4-8, which
# the emulator does not name): each family's ids go to its emulator model; names still win.
FAMILY_ALIASES = (("claude-haiku-*", "claude-haiku-4-5"), ("claude-opus-*", "claude-opus-4-7"),
                  ("claude-*", "claude-sonnet-4-6"), ("gpt-*", "gpt-5.5"))
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


def emulator_gateway_spec(emulator: Emulator | None = None) -> dict[str, Any]:
    """Every model the built-in emulator answers to, by its own id, as a config file's
    data; emulator-1 first. Without ``emulator`` each process starts its own in-process
    one; with it, every model points at that running one."""
    from ..emulator.endpoints import MODELS

    models: dict[str, dict[str, str]] = {}
    for name in MODELS:
        provider = upstream_for(name)
        models[name] = {"provider": provider, "model": name}
        if emulator is not None:
            anthropic = provider == "emulator-anthropic"
            models[name]["base_url"] = (emulator.anthropic_base_url() if anthropic
                                        else emulator.openai_base_url())
    return {"models": models, "default_model": MODELS[0],
            "gateway": {"aliases": dict(FAMILY_ALIASES)}}


def emulator_gateway_config() -> Config:
    from ..config import config_from_dict

    return config_from_dict(emulator_gateway_spec())


@contextlib.contextmanager
def emulator_config_file() -> Iterator[str]:
    """The path of a config file serving the emulator's models, for processes that read
    one (``serve --workers N``); removed on exit. Every model points at one emulator
    started here: each process's own would sign thinking with its own key, and a
    conversation's next turn, landing on another worker, would be refused as tampered."""
    import yaml

    from ..emulator import Emulator

    with Emulator() as emulator, tempfile.TemporaryDirectory(prefix="modelwire-serve-") as folder:
        path = os.path.join(folder, "modelwire.yaml")
        with open(path, "w", encoding="utf-8") as file:
            yaml.safe_dump(emulator_gateway_spec(emulator), file, sort_keys=False)
        yield path


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
