"""What a codec encodes for (:class:`Target`) and what it returns (:class:`EncodedRequest`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .profile import ProviderProfile

if TYPE_CHECKING:  # the caller's cache: only its type is named here, never imported
    from ..codecs.cache import EncodeCache

__all__ = ["EncodedRequest", "Target", "auth_headers"]


@dataclass(frozen=True, slots=True)
class Target:
    """One upstream: the provider profile, the model id sent upstream, and a credential.

    ``api_key`` is the secret to send (``None``: no auth header). ``base_url``
    overrides the profile's. ``headers`` are extra headers sent as they are. ``cache``:
    the caller's :class:`~modelwire.codecs.cache.EncodeCache`, where an encoder keeps
    what repeats across turns (converted tool schemas); the output is the same without.
    """

    profile: ProviderProfile
    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    cache: EncodeCache | None = field(default=None, repr=False, compare=False)

    def auth_headers(self) -> dict[str, str]:
        return auth_headers(self.profile, self.api_key)


def auth_headers(profile: ProviderProfile, api_key: str | None) -> dict[str, str]:
    """The header that carries ``api_key`` in ``profile``'s style (none without a key)."""
    if not api_key:
        return {}
    style = profile.auth_style
    if style == "bearer":
        return {"authorization": f"Bearer {api_key}"}
    if style == "x-api-key":
        return {"x-api-key": api_key}
    if style == "api-key":
        return {"api-key": api_key}
    return {}


@dataclass(frozen=True, slots=True)
class EncodedRequest:
    """An HTTP request, ready for a transport: ``path`` is relative to the base URL.

    ``tags``: facts about the request for the transport and whatever wraps it (the
    gateway's capture reads the client key's name, the request id and the door), never
    sent; the caller's ``tags=`` of :meth:`modelwire.AsyncClient.complete`."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    tags: Mapping[str, str] | None = field(default=None, compare=False)

    def __repr__(self) -> str:  # never show auth headers
        shown = {k: ("<redacted>" if k in _SECRET_HEADERS else v) for k, v in self.headers.items()}
        return f"EncodedRequest({self.method} {self.path}, headers={shown}, {len(self.body)} bytes)"


_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie"})
