"""``modelwire creds``: list, add, remove and reset pooled credentials.

Secrets are read from a hidden prompt or standard input, never from an argument
(arguments land in shell history and in ``ps`` output). Listing shows masks only.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..credentials.stores import CredentialStore


__all__ = ["command", "open_configured_store"]


def open_configured_store(store_url: str | None, config_path: str | None) -> Any:
    """The store named by ``--store``, else by the config file, else the default."""
    from ..credentials.stores import open_store

    prefix = "modelwire:"
    if store_url is None:
        from ..config import load_config

        section = load_config(config_path).credential_pool
        store_url = section.store
        prefix = getattr(section, "prefix", None) or prefix
    return open_store(store_url, prefix=prefix)


def _known_env_providers() -> list[str]:
    """Catalog providers whose key variables are set here (their entries get seeded)."""
    import os

    try:
        from ..providers.catalog import CATALOG
    except ImportError:
        return []
    return [name for name, p in CATALOG.items() if any(os.environ.get(v) for v in p.key_env)]


def _pool(provider: str, store: CredentialStore) -> Any:
    from ..credentials import CredentialPool

    return CredentialPool(provider, store=store)


def _age(seconds: float) -> str:
    if seconds <= 0:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def _rows(store: CredentialStore, provider: str | None) -> list[dict[str, Any]]:
    now = time.time()
    providers = [provider] if provider else sorted(
        {c.provider for c in store.list()} | set(_known_env_providers()))
    rows = []
    for name in providers:
        pool = _pool(name, store)
        usable = {c.id: c for c in pool.credentials()}
        for cred in store.list(name):
            shown = usable.get(cred.id, cred)
            if cred.is_env and cred.id not in usable:
                masked = f"(${cred.env_var} not set here)"
            else:
                masked = shown.masked
            rows.append({
                "provider": name, "id": cred.id, "label": cred.label, "secret": masked,
                "source": cred.source, "status": cred.effective_status(now),
                "cooldown": round(cred.cooldown_remaining(now)),
                "last_error": cred.last_error_code or "",
                "reason": cred.last_error_reason or "", "requests": cred.request_count,
            })
    return rows


def _print_table(rows: list[dict[str, Any]]) -> None:
    headers = ["provider", "id", "label", "secret", "source", "status", "cooldown", "last_error",
               "requests"]
    cells = [[str(r[h]) if h != "cooldown" else _age(r[h]) for h in headers] for r in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(headers)]
    click.echo("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths)).rstrip())
    for c in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())


_store_option = click.option("--store", "store_url", default=None, metavar="URL",
                             help="State store URL (default: from modelwire.yaml, else the "
                                  "SQLite file in the user data directory).")
_config_option = click.option("--config", "config_path", default=None, metavar="PATH",
                              help="modelwire.yaml to read credential_pool.store from.")


@click.group(name="creds")
def command() -> None:
    """List, add, remove and reset pooled credentials.

    \b
    Examples:
      modelwire creds list --provider openrouter
      modelwire creds add --provider openrouter --label work     # prompts, hidden
      printf %s "$KEY" | modelwire creds add --provider groq     # from stdin
      modelwire creds reset work --provider openrouter
    """


@command.command(name="list")
@click.option("--provider", "-p", default=None, help="Only this provider.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_store_option
@_config_option
def list_command(provider: str | None, as_json: bool, store_url: str | None,
                 config_path: str | None) -> None:
    """Show every credential, masked, with source, status, cooldown and request count."""
    store = open_configured_store(store_url, config_path)
    rows = _rows(store, provider)
    if store.health == "degraded":
        click.echo(f"warning: {store.url.split('@')[-1]} unreachable; showing this process's "
                   "last known state (degraded)", err=True)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        click.echo("no credentials" + (f" for {provider}" if provider else "")
                   + ": add one with `modelwire creds add --provider P`")
    else:
        _print_table(rows)


@command.command(name="add")
@click.option("--provider", "-p", required=True, help="Provider name (catalog row).")
@click.option("--label", "-l", default="", help="A name to refer to it by.")
@click.option("--priority", type=int, default=0, show_default=True,
              help="Lower is tried first (manual keys come before environment keys).")
@_store_option
@_config_option
def add_command(provider: str, label: str, priority: int,
                store_url: str | None, config_path: str | None) -> None:
    """Add a key: read from a hidden prompt, or from standard input when piped.

    A key serves the base URL of the model that uses it. A key for another endpoint of
    the provider (a regional one) goes with a model entry that names that base_url and
    the key's variable (api_key_env); there is no per-key --base-url (requests never
    used it)."""
    if sys.stdin.isatty():
        secret = click.prompt(f"{provider} API key", hide_input=True)
    else:
        secret = sys.stdin.readline()
    secret = (secret or "").strip()
    if not secret:
        raise click.UsageError("no secret given (type it at the prompt or pipe it on stdin)")
    pool = _pool(provider, open_configured_store(store_url, config_path))
    cred = pool.add(secret, label=label, priority=priority)
    click.echo(f"added {provider} credential {cred.id} ({cred.masked})"
               + (f" labelled {label!r}" if label else ""))


def _resolve(store: CredentialStore, ref: str, provider: str | None) -> Any:
    from ..errors import CredentialError

    if provider:
        return _pool(provider, store), _pool(provider, store).find(ref)
    matches = [c for c in store.list() if c.id == ref] or [c for c in store.list() if c.label == ref]
    if not matches:
        raise CredentialError(f"no credential with id or label {ref!r}")
    if len(matches) > 1:
        raise CredentialError(f"{ref!r} matches {len(matches)} credentials: add --provider or use the id")
    return _pool(matches[0].provider, store), matches[0]


@command.command(name="remove")
@click.argument("ref")
@click.option("--provider", "-p", default=None, help="Provider (needed when a label is ambiguous).")
@_store_option
@_config_option
def remove_command(ref: str, provider: str | None, store_url: str | None,
                   config_path: str | None) -> None:
    """Remove a credential by id or label."""
    pool, cred = _resolve(open_configured_store(store_url, config_path), ref, provider)
    pool.remove(cred.id)
    note = (f" (its state only: ${cred.env_var} is still read from the environment)"
            if cred.is_env else "")
    click.echo(f"removed {cred.provider} credential {cred.id}{note}")


@command.command(name="reset")
@click.argument("ref")
@click.option("--provider", "-p", default=None, help="Provider (needed when a label is ambiguous).")
@_store_option
@_config_option
def reset_command(ref: str, provider: str | None, store_url: str | None,
                  config_path: str | None) -> None:
    """Clear a credential's cooldown and last error (by id or label)."""
    pool, cred = _resolve(open_configured_store(store_url, config_path), ref, provider)
    state = pool.reset(cred.id)
    click.echo(f"reset {cred.provider} credential {cred.id}: {state.status}")
