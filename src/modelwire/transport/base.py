"""The transport interface: :class:`Timeouts`, :class:`Response`, the sync and async
transport and stream-response protocols, and what both implementations share (the SSL
context made once, the proxy a URL goes through). Imports nothing of modelwire above the
wire floor and the error tree."""


from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..wire import EncodedRequest

__all__ = ["AsyncStreamResponse", "AsyncTransport", "Response", "SyncStreamResponse",
           "SyncTransport", "Timeouts", "env_proxy"]


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Per-attempt timeouts, in seconds.

    ``connect``: establishing the connection (TLS included). ``read``: the
    longest wait for any byte of a non-streaming response (a long answer from
    a reasoning model takes minutes, hence 600). ``stale``: the longest gap
    between bytes of a stream, headers included (default 180 s; ``None`` falls
    back to ``read``, which is what local servers get). ``total``: an optional
    deadline for the whole attempt, body included.
    """

    connect: float = 15.0
    read: float = 600.0
    stale: float | None = 180.0
    total: float | None = None

    @property
    def stream_gap(self) -> float:
        return self.stale if self.stale is not None else self.read


@dataclass(frozen=True, slots=True)
class Response:
    """A whole HTTP response: status, lowercased headers, body bytes."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class SyncStreamResponse(Protocol):
    status: int
    headers: Mapping[str, str]

    def read(self) -> bytes: ...
    def iter_chunks(self) -> Iterator[bytes]: ...
    def close(self) -> None: ...


class AsyncStreamResponse(Protocol):
    status: int
    headers: Mapping[str, str]

    async def read(self) -> bytes: ...
    def aiter_chunks(self) -> AsyncIterator[bytes]: ...
    def close(self) -> None: ...


class SyncTransport(Protocol):
    def send(self, request: EncodedRequest, base_url: str, timeouts: Timeouts) -> Response: ...
    def stream(
        self, request: EncodedRequest, base_url: str, timeouts: Timeouts
    ) -> contextlib.AbstractContextManager[SyncStreamResponse]: ...
    def close(self) -> None: ...


class AsyncTransport(Protocol):
    async def send(self, request: EncodedRequest, base_url: str, timeouts: Timeouts) -> Response: ...
    def stream(
        self, request: EncodedRequest, base_url: str, timeouts: Timeouts
    ) -> contextlib.AbstractAsyncContextManager[AsyncStreamResponse]: ...
    async def aclose(self) -> None: ...


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """One default-verifying SSL context per process, shared by every session."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def env_proxy(origin: str, proxies: dict[str, str] | None = None) -> str | None:
    """The proxy the environment names for ``origin`` (``scheme://host[:port]``), or None.

    ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` (any case) by scheme, unless
    ``NO_PROXY`` covers the host — the rules httpx applies, via the standard library.
    ``proxies``: the environment's proxy table read earlier (``getproxies_environment``
    walks every variable), else it is read now.
    """
    import urllib.request

    scheme, _, hostport = origin.partition("://")
    if proxies is None:
        proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy:
        return None
    host = hostport.rsplit("@", 1)[-1]
    # present in every CPython 3, undocumented, so typeshed leaves it out
    if urllib.request.proxy_bypass_environment(host, proxies):  # pyright: ignore[reportAttributeAccessIssue]
        return None
    return proxy


_PROXIED = "proxied"  # AsyncHTTPTransport._route: this origin goes through aiohttp and a proxy


def _join(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path


def _where(method: str, url: str) -> str:
    return f"{method} {url}"
