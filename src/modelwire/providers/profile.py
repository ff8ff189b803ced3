"""``ProviderProfile`` lives on the bottom floor (:mod:`modelwire.wire.profile`), so codecs
and providers both stand on it; this path stays for the catalog, the quirk modules and
callers who import it from here."""

from __future__ import annotations

from ..wire.profile import AuthStyle, ProviderProfile, ReasoningEcho, ReasoningRequest, ToolIdFormat

__all__ = ["AuthStyle", "ProviderProfile", "ReasoningEcho", "ReasoningRequest", "ToolIdFormat"]
