"""Provider profiles: the catalog (data rows) and the few quirky providers."""

from .profile import ProviderProfile

__all__ = ["ProviderProfile"]
