"""Provider profiles: the catalog (data rows), the few quirky providers, and resolution.

``resolve("openrouter/deepseek/deepseek-chat")`` -> :class:`ResolvedModel`;
``get_profile("anthropic")`` -> :class:`ProviderProfile`; ``CATALOG`` holds every row.
"""

from .catalog import ALIASES, CATALOG
from .profile import ProviderProfile
from .resolve import ResolvedModel, get_profile, known_providers, resolve

__all__ = [
    "ALIASES",
    "CATALOG",
    "ProviderProfile",
    "ResolvedModel",
    "get_profile",
    "known_providers",
    "resolve",
]
