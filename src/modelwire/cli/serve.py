"""``modelwire serve``: run the gateway."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from typing import Any

import click

__all__ = ["command"]


@click.command(
    name="serve",
    epilog=(
        "Examples:\n\n"
        "  modelwire serve\n\n"
        "  MODELWIRE_GATEWAY_KEYS=k1,k2 modelwire serve --host 0.0.0.0 --port 4000 --workers 2\n\n"
        "Then point any SDK at it: OPENAI_BASE_URL=http://127.0.0.1:4000/v1, "
        "ANTHROPIC_BASE_URL=http://127.0.0.1:4000. With no config file it serves the "
        "built-in emulator's models (offline) and says so; --config FILE serves the "
        "models in FILE."
    ),
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=4000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--grace", default=30.0, show_default=True, type=float,
              help="Seconds running streams get to finish on SIGTERM.")
@click.option("--ssl-certfile", type=click.Path(dir_okay=False),
              help="Serve HTTPS (TLS 1.2+) with this PEM certificate chain (config: gateway.ssl_certfile).")
@click.option("--ssl-keyfile", type=click.Path(dir_okay=False),
              help="The certificate's PEM private key (config: gateway.ssl_keyfile).")
def command(config_path: str | None, host: str, port: int, workers: int, grace: float,
            ssl_certfile: str | None = None, ssl_keyfile: str | None = None) -> int:
    """Serve /v1/chat/completions, /v1/messages, /v1/responses and /v1/models."""
    import uvicorn

    from ..config import load_config
    from ..gateway.auth import GatewayKeys, is_loopback
    from ..gateway.h1server import GatewayHTTP
    from .builtin import emulator_gateway_config, has_no_config

    config = load_config(config_path)
    builtin = has_no_config(config)
    if builtin:
        config = emulator_gateway_config()
    gw = getattr(config, "gateway", None)
    keys_env = getattr(gw, "keys_env", None) or "MODELWIRE_GATEWAY_KEYS"
    teams = getattr(config, "teams", None)
    teams_on = bool(getattr(teams, "enabled", False))  # every request then needs a key
    if teams_on and workers > 1 and not getattr(teams, "limiter", None):
        from ..teams.backends import store_url

        if not store_url(config).startswith("sqlite:"):  # SQLite's file shares them
            click.echo(f"warning: {workers} workers without teams.limiter: each worker keeps "
                       "its own rate and budget counters (set teams.limiter: redis://... to "
                       "share them)", err=True)
    if not teams_on and not GatewayKeys.from_env(keys_env).required and not is_loopback(host):
        raise click.UsageError(
            f"refusing to serve on {host} without gateway keys: anyone who can reach it could "
            f"spend your provider credits. Set {keys_env}=key1,key2 or bind 127.0.0.1."
        )
    seal_env = getattr(gw, "seal_secret_env", None) or "MODELWIRE_SEAL_SECRET"
    if workers > 1 and not os.environ.get(seal_env):
        # every worker must open the others' seals
        os.environ[seal_env] = secrets.token_urlsafe(32)
    os.environ["MODELWIRE_SHUTDOWN_GRACE"] = str(grace)
    os.environ["MODELWIRE_SERVE_WORKERS"] = str(workers)  # teams: share counters when > 1
    os.environ["MODELWIRE_SERVE_HOST"] = host  # metrics are on by default on loopback only
    options: dict[str, Any] = {
        # uvicorn's own limit comes after ours, so streams end with an error event
        "host": host, "port": port, "workers": workers, "timeout_graceful_shutdown": grace + 5,
        "log_level": "info", "access_log": False, "server_header": False,
        # the gateway never reads the client address (its access log has none), so
        # uvicorn's X-Forwarded-* rewriting is per-request work for nothing
        "proxy_headers": False,
        # the gateway's own HTTP/1.1 protocol: a response's head and body in one write
        # (uvicorn writes them apart), see modelwire/gateway/h1server.py
        "http": GatewayHTTP,
        "log_config": _log_config(bool(getattr(gw, "access_log", True))),
    }
    scheme = _tls_options(options, ssl_certfile or getattr(gw, "ssl_certfile", None),
                          ssl_keyfile or getattr(gw, "ssl_keyfile", None))
    if builtin:
        _announce_builtin(config, f"{scheme}://{host}:{port}")
    click.echo(f"modelwire gateway on {scheme}://{host}:{port} ({workers} worker{'s' if workers > 1 else ''})", err=True)
    if workers > 1:
        with _config_for_workers(config, builtin), _metrics_dir():
            uvicorn.run("modelwire.gateway:app_from_env", factory=True, **options)
    else:
        from ..gateway import create_app

        uvicorn.run(create_app(config), **options)
    return 0


def _announce_builtin(config: Any, origin: str) -> None:
    """The first lines of a run with no config: what is served, how to reach it, and how
    to serve more."""
    click.echo("no config found: serving the built-in emulator's models (offline, "
               "deterministic): " + ", ".join(config.models), err=True)
    click.echo(f"  point an SDK at it: OPENAI_BASE_URL={origin}/v1 or ANTHROPIC_BASE_URL={origin}",
               err=True)
    click.echo("  write a modelwire.yaml and pass --config (see --help) to serve real providers",
               err=True)


@contextlib.contextmanager
def _config_for_workers(config: Any, builtin: bool) -> Iterator[None]:
    """Workers are fresh processes that read MODELWIRE_CONFIG."""
    if not builtin:
        if config.path is not None:
            os.environ["MODELWIRE_CONFIG"] = str(config.path)
        yield
        return
    from .builtin import emulator_config_file

    with emulator_config_file() as path:
        os.environ["MODELWIRE_CONFIG"] = path
        yield


@contextlib.contextmanager
def _metrics_dir() -> Iterator[None]:
    """Workers write their metrics to one directory of this run (modelwire.observe.tally),
    so a scrape of any worker reads them all; removed on exit. One set by the user
    (MODELWIRE_METRICS_DIR) is theirs: used, kept."""
    if os.environ.get("MODELWIRE_METRICS_DIR"):
        yield
        return
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="modelwire-metrics-")
    os.environ["MODELWIRE_METRICS_DIR"] = path
    try:
        yield
    finally:
        os.environ.pop("MODELWIRE_METRICS_DIR", None)
        shutil.rmtree(path, ignore_errors=True)


def _tls_options(options: dict[str, Any], certfile: str | None, keyfile: str | None) -> str:
    """Add uvicorn's TLS options (the flags win over the config's keys); the URL scheme."""
    if not certfile and not keyfile:
        return "http"
    from ..gateway.tls import check_files, server_context

    problem = check_files(certfile, keyfile)
    if problem is not None:
        raise click.UsageError(problem)
    options.update(ssl_certfile=certfile, ssl_keyfile=keyfile,
                   ssl_context_factory=server_context)
    return "https"


def _log_config(access: bool) -> dict[str, Any]:
    """uvicorn's logging setup plus the gateway's access log on stderr (uvicorn applies
    it in every worker process; a logger with no handler would drop every line)."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    if access:
        # the handler formats as accesslog.FORMAT itself (and writes lines directly)
        config["handlers"]["modelwire_access"] = {
            "class": "modelwire.gateway.accesslog.AccessHandler", "stream": "ext://sys.stderr"}
        config["loggers"]["modelwire.gateway.access"] = {
            "handlers": ["modelwire_access"], "level": "INFO", "propagate": False}
    return config
