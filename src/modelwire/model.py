"""``Model``: one model of a Client's chain with its own settings.

A fallback on another endpoint needs its own base URL, protocol and key; a plain
model string carries none of them. ``Model`` does, without a config file::

    from modelwire import Client, Model

    Client("anthropic/claude-sonnet-4-6", fallback=[
        "openrouter/deepseek/deepseek-chat",
        Model("custom/backup", base_url="http://10.0.0.2:8000/v1",
              api_mode="chat_completions", api_key_env="BACKUP_KEY", timeout=30),
    ])

Pure data: imports nothing heavy, so ``modelwire.Model`` costs nothing to import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias, cast

from .wire.api import ApiMode

if TYPE_CHECKING:
    from .transport import Timeouts

__all__ = ["Model", "ModelLike", "as_model"]



@dataclass(frozen=True, slots=True)
class Model:
    """A model string plus the settings that apply to it alone.

    ``name``: ``provider/model-id`` or a configured name. ``base_url`` and ``api_mode``
    pick the endpoint (both needed for ``custom/...``). ``api_key`` (never shown in a
    repr) or ``api_key_env`` (a variable to read it from) give the key. ``headers`` go
    with each of its requests; ``timeout`` (seconds or a
    :class:`~modelwire.transport.Timeouts`) and ``thinking`` replace the Client's for it.
    """

    name: str
    base_url: str | None = None
    api_mode: ApiMode | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float | Timeouts | None = None
    thinking: str | None = None

    def __post_init__(self) -> None:
        # a mapping is the natural way to write headers; a tuple keeps Model hashable
        headers: object = self.headers
        if isinstance(headers, Mapping):
            pairs = cast("Mapping[str, str]", headers)
            object.__setattr__(self, "headers", tuple(pairs.items()))

    def __str__(self) -> str:
        return self.name


ModelLike: TypeAlias = "str | Model"


def as_model(entry: str | Model) -> Model:
    """``entry`` as a :class:`Model` (a string is a Model with no settings of its own)."""
    if isinstance(entry, Model):
        return entry
    if isinstance(entry, str):  # pyright: ignore[reportUnnecessaryIsInstance]  (untyped callers)
        return Model(entry)
    raise TypeError(f"a model is a string or a modelwire.Model, got {type(entry).__name__}")
