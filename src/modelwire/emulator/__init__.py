"""An offline provider speaking Chat Completions, Anthropic Messages and Responses.

::

    from modelwire.emulator import Emulator

    with Emulator(profile="lenient") as emu:
        client = openai.OpenAI(base_url=emu.openai_base_url(), api_key="sk-fake")
        client.chat.completions.create(model="emulator-1", messages=[...])
        emu.set_faults([{"fault": "rate_limit", "requests": [1]}])
        emu.requests()["counters"]

It runs uvicorn in a background thread on 127.0.0.1 and a free port, with a
deterministic model (:mod:`.model`), each provider's request rules (:mod:`.rules`),
faults on request (:mod:`.faults`), an OAuth server (:mod:`.oauth`) and script mode
(:mod:`.script`). ``modelwire emulate`` runs the same app in the foreground.

Turns scripted in Python::

    from modelwire.emulator import answer, tool_call

    def turn(request):
        if not request.tool_results:
            return answer(reasoning="I need the weather.", calls=[tool_call("get_weather", city="Paris")])
        return answer(f"It is {request.tool_results[0].content} in Paris.")

    with emu.scripted(turn):
        ...

``shared_emulator()`` is the one ``Client("emulator/...")`` uses when no base URL is
given, and the one :mod:`modelwire.testing`'s ``emulator`` fixture yields: faults and
scripts set on either reach both.

Owns the offline provider: its server, model, each provider's rules, faults, scripts and
replay. May import the wire floor, codecs (replay matching, SSE framing), messages and
embeddings; never the Client or the gateway.
"""

from __future__ import annotations

import contextlib
import pathlib
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterable
from typing import Any, Self, TypeAlias

from .script import ScriptRequest, ToolResult, answer, api_error, tool_call

__all__ = ["Emulator", "ScriptRequest", "ToolResult", "answer", "api_error", "shared_emulator",
           "tool_call"]

ScriptSource: TypeAlias = "str | pathlib.Path | Iterable[Any] | Callable[[ScriptRequest], Any]"

_shared: Emulator | None = None
_shared_lock = threading.Lock()


class Emulator:
    """Start with ``with Emulator(...) as emu:`` (or :meth:`start` / :meth:`stop`).

    ``profile``: the rules applied to requests without a ``/p/<profile>`` prefix.
    ``keys``: accepted API keys (None: any non-empty key). ``script``: a JSONL path, a
    list of response dicts (or functions) replayed in order, or one function answering
    every turn (see :meth:`script`). ``signing_key``: the secret behind thinking
    signatures and encrypted reasoning (None: random per process). ``max_hang``: the
    longest a ``hang`` fault waits, in seconds. ``replay``: a folder of the gateway's
    capture files; each request is answered with the captured answer to the request that
    meant the same (:mod:`modelwire.emulator.replay`), never by the model.
    """

    def __init__(self, profile: str = "lenient", keys: Iterable[str] | None = None,
                 script: ScriptSource | None = None,
                 signing_key: str | bytes | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, max_hang: float = 10.0, oauth_access_ttl: int = 3600,
                 log_level: str = "critical", replay: str | pathlib.Path | None = None) -> None:
        # absolute: ``from .script import`` would bind the submodule's name over the parameter
        from modelwire.emulator.replay import Replay
        from modelwire.emulator.script import load_script

        from .endpoints import Backend
        from .profiles import PROFILES
        from .signing import Signer

        if profile not in PROFILES:
            raise ValueError(f"unknown emulator profile {profile!r}; known: {', '.join(PROFILES)}")
        self.backend = Backend(
            profile=profile,
            keys=frozenset(keys) if keys is not None else None,
            script=load_script(script) if script is not None else None,
            signer=Signer.from_key(signing_key),
            max_hang=max_hang,
            replay=Replay(replay) if replay is not None else None,
        )
        self.backend.oauth.access_ttl = oauth_access_ttl
        self.host = host
        self._port = port
        self._log_level = log_level
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    # ------------------------------------------------------------- lifecycle
    def start(self, timeout: float = 10.0) -> Self:
        import uvicorn

        from .app import build_app

        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted connections only
        # when the listening socket says TCP; with proto 0 every answer waited ~40 ms on
        # Nagle + delayed ACK
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._port))
        self._socket = sock
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(build_app(self.backend), log_level=self._log_level,
                                access_log=False, lifespan="off", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"modelwire-emulator-{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:  # bounded poll on observable state
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the emulator did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ URLs
    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._port}"

    def openai_base_url(self, profile: str | None = None) -> str:
        return self.base_url + (f"/p/{profile}" if profile else "") + "/v1"

    def anthropic_base_url(self, profile: str | None = None) -> str:
        return self.base_url + (f"/p/{profile}" if profile else "")

    # --------------------------------------------------------- faults and log
    def set_faults(self, faults: Iterable[Any]) -> None:
        """Replace the fault rules (dicts in the ``/__emulator/faults`` format)."""
        from modelwire.emulator.faults import parse_fault

        self.backend.faults.set([parse_fault(f) for f in faults])

    def clear_faults(self) -> None:
        self.backend.faults.clear()

    def requests(self, since: int = 0, endpoint: str | None = None) -> dict[str, Any]:
        """The request log and counters, as ``GET /__emulator/requests`` returns them;
        ``since`` keeps entries numbered above it, ``endpoint`` one endpoint's entries."""
        return dict(self.backend.state.snapshot(since, endpoint),
                    faults=self.backend.faults.snapshot())

    def set_script(self, script: ScriptSource | None) -> None:
        """Replace the script (a JSONL path, a list of response dicts or functions, or one
        function for every turn); None: the deterministic model."""
        from modelwire.emulator.script import load_script

        self.backend.script = load_script(script) if script is not None else None

    def script(self, script: ScriptSource) -> None:
        """Answer with ``script`` from now on: ``emu.script(fn)``, where ``fn(request)``
        returns :func:`answer` (text, reasoning, :func:`tool_call` list),
        :func:`api_error`, a string, a dict in the JSONL form, or None for the
        deterministic model's answer. Same as :meth:`set_script`."""
        self.set_script(script)

    @contextlib.contextmanager
    def scripted(self, script: ScriptSource) -> Generator[Self, None, None]:
        """``with emu.scripted(fn):`` the script, and the previous one back afterwards
        (a session-wide emulator stays as the next test expects it)."""
        from modelwire.emulator.script import load_script

        before = self.backend.script
        self.backend.script = load_script(script)
        try:
            yield self
        finally:
            self.backend.script = before

    def set_keys(self, keys: Iterable[str] | None) -> None:
        """Replace the accepted API keys (None: any non-empty key), e.g. to revoke one."""
        self.backend.keys = frozenset(keys) if keys is not None else None

    def expire_access_tokens(self) -> None:
        """Expire every OAuth access token issued so far (their refresh tokens stay valid)."""
        self.backend.oauth.expire_access_tokens()

    def __repr__(self) -> str:
        state = "running" if self._server is not None else "stopped"
        return f"Emulator({self.base_url!r}, profile={self.backend.profile!r}, {state})"

    def reset(self) -> None:
        """Empty the request log and counters (faults stay)."""
        self.backend.state.reset()


def shared_emulator() -> Emulator:
    """The process's in-process emulator (lenient profile), started on first use and
    stopped at interpreter exit: what the ``emulator`` provider uses when no base URL of
    a running emulator is configured (``modelwire chat`` and ``make demo`` offline)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            import atexit

            _shared = Emulator().start()
            atexit.register(_shared.stop)
        return _shared
