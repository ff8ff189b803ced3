"""Provider profiles, pure data: the catalog (data rows) and the few quirky providers.

``get_profile("anthropic")`` -> :class:`ProviderProfile`; ``CATALOG`` holds every row.
Resolving a model string to an upstream is the Client's: :func:`modelwire.client.resolution.resolve`.
May import the bottom floor (errors, types) and the codecs' wire types, nothing above.
"""

from .catalog import ALIASES, CATALOG
from .lookup import get_profile, known_providers
from .profile import ProviderProfile

__all__ = [
    "ALIASES",
    "CATALOG",
    "ProviderProfile",
    "get_profile",
    "known_providers",
]
