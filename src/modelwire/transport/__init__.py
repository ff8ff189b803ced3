"""HTTP transports: one small interface, two implementations.

* :class:`AsyncHTTPTransport`: the async path, where the gateway lives. Direct
  origins go through :mod:`modelwire.transport.h1` (HTTP/1.1 on asyncio + httptools),
  origins behind a proxy through aiohttp (why two: the class, and docs/performance,
  "Why the code is as it is").
* :class:`SyncHTTPTransport` (httpx): the sync path (``Client``).

Both take an :class:`~modelwire.codecs.EncodedRequest` and a base URL, send it
with :class:`Timeouts` that apply per attempt, and return a :class:`Response`
(whole body) or, for streams, a response whose body is read chunk by chunk.
Both honour ``HTTPS_PROXY``/``NO_PROXY`` (httpx by itself; the async one resolves
them once per origin, see :func:`env_proxy`, and sends proxied origins through
aiohttp), pool connections per origin, and build their SSL context
once (making one is slow: a context per call would slow every handshake).

HTTP library exceptions become modelwire errors at exactly one seam per
library (:func:`_h1_error`, :func:`_aiohttp_errors`, :func:`_httpx_errors`),
chained ``from exc``:

* connect failures and connect timeouts → :class:`~modelwire.ConnectError`
* no byte within the read/stale timeout, or the total deadline passed →
  :class:`~modelwire.ReadTimeoutError`
* the connection dropped (before the response or mid-body) →
  :class:`~modelwire.StreamInterruptedError`
* anything else from the HTTP library → :class:`~modelwire.TransportError`

Non-2xx responses are *not* errors here: the caller hands status, headers and
body to the codec's ``decode_error``. Error messages name the method and URL,
never a header (the URL passes through :func:`~modelwire.errors.redact`).

Owns the interface (:mod:`.base`), the async transport (:mod:`.aio`), the sync one
(:mod:`.sync`), the HTTP/1.1 client (:mod:`.h1`) and header helpers (:mod:`.headers`).
May import the wire floor and the error tree only.
"""

from __future__ import annotations

from .aio import AsyncHTTPTransport
from .base import (
    AsyncStreamResponse,
    AsyncTransport,
    Response,
    SyncStreamResponse,
    SyncTransport,
    Timeouts,
    env_proxy,
)
from .sync import SyncHTTPTransport

__all__ = [
    "AsyncHTTPTransport",
    "AsyncStreamResponse",
    "AsyncTransport",
    "Response",
    "SyncHTTPTransport",
    "SyncStreamResponse",
    "SyncTransport",
    "Timeouts",
    "env_proxy",
]
