"""Looking a provider up by name: :func:`get_profile` and :func:`known_providers`.

Pure data access over the catalog; resolving a model string (config names, base URLs,
the emulator) is the Client's (:mod:`modelwire.client.resolution`).
"""

from __future__ import annotations

from ..errors import ConfigError
from .catalog import ALIASES, CATALOG
from .profile import ProviderProfile

__all__ = ["get_profile", "known_providers"]


def known_providers() -> list[str]:
    """Every catalog name, sorted."""
    return sorted(CATALOG)


def get_profile(name: str) -> ProviderProfile:
    """The catalog profile for ``name`` (or one of its aliases)."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    profile = CATALOG.get(key)
    if profile is None:
        raise ConfigError(f"unknown provider {name!r}{_did_you_mean(name)}; "
                          f"known providers: {', '.join(known_providers())}")
    return profile


def _did_you_mean(name: str) -> str:
    import difflib  # only for this error message: kept off the import path

    close = difflib.get_close_matches(name.lower(), [*CATALOG, *ALIASES], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
