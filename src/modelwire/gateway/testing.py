"""Run the gateway in-process on a free loopback port (tests, embedding)."""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from ..config import Config


__all__ = ["RunningGateway"]


class RunningGateway:
    """``with RunningGateway(config) as gw: gw.base_url`` — uvicorn in a thread on 127.0.0.1.

    ``http``: uvicorn's HTTP protocol; by default the gateway's own (``modelwire serve``'s,
    which calls the front doors' handlers directly), ``"httptools"`` or ``"h11"`` for
    uvicorn's, which reach them through ASGI as any other server would."""

    def __init__(self, config: Config, *, environ: dict[str, str] | None = None, http: Any = None,
                 ssl_certfile: str | None = None, ssl_keyfile: str | None = None) -> None:
        self.config = config
        # TLS as `modelwire serve --ssl-certfile/--ssl-keyfile` serves it (base_url: https)
        self.ssl_certfile = ssl_certfile
        self.ssl_keyfile = ssl_keyfile
        self.environ = environ
        self.http = http
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.app: Any = None

    def __enter__(self) -> Self:
        import uvicorn

        from . import create_app
        from .h1server import GatewayHTTP

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.app = create_app(self.config, environ=self.environ)
        cfg = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                             access_log=False, lifespan="on", timeout_graceful_shutdown=2,
                             proxy_headers=False,  # as `modelwire serve`: the front doors called directly
                             http=self.http or GatewayHTTP, **self._tls())
        self._server = uvicorn.Server(cfg)
        self._thread = threading.Thread(target=self._server.run, name="modelwire-gateway", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the gateway did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    def _tls(self) -> dict[str, Any]:
        if not self.ssl_certfile:
            return {}
        from .tls import server_context

        return {"ssl_certfile": self.ssl_certfile, "ssl_keyfile": self.ssl_keyfile,
                "ssl_context_factory": server_context}

    @property
    def base_url(self) -> str:
        return f"{'https' if self.ssl_certfile else 'http'}://127.0.0.1:{self.port}"

    @property
    def gateway(self) -> Any:
        return self.app.state.gateway
