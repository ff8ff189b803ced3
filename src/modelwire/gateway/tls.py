"""TLS for ``modelwire serve``: the server's SSL context, TLS 1.2 at the least.

uvicorn makes the context from the certificate and key files and hands it to asyncio's
``create_server`` (the gateway's HTTP/1.1 protocol runs on top unchanged, keep-alive
included); :func:`server_context` is its ``ssl_context_factory``, a module-level
function so that every worker process can import it.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable

__all__ = ["check_files", "server_context"]


def server_context(config: object, default: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
    """uvicorn's context for the configured files, refusing TLS 1.0 and 1.1 (deprecated
    by RFC 8996) whatever the system's OpenSSL defaults are."""
    context = default()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def check_files(certfile: str | None, keyfile: str | None) -> str | None:
    """What is wrong with the pair (None: fine, or no TLS at all): a key without a
    certificate, or a file that cannot be read. The key may live in the certificate file."""
    if keyfile and not certfile:
        return "--ssl-keyfile needs --ssl-certfile (the certificate the key belongs to)"
    for name, path in (("certificate", certfile), ("key", keyfile)):
        if path and not os.access(path, os.R_OK):
            return f"cannot read the TLS {name} file {path!r}"
    if certfile:
        try:  # a wrong pair fails here, with OpenSSL's reason, not at the first client
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile, keyfile)
        except (ssl.SSLError, OSError) as exc:
            return f"the TLS certificate and key do not load: {exc}"
    return None
