"""``modelwire auth``: log in to providers whose terms allow third-party OAuth apps.

Only those flows exist (see :mod:`modelwire.credentials.oauth`): OpenRouter's PKCE
flow (it yields a user-controlled API key). Anthropic subscription logins are
refused on purpose, with the reason.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from .creds import open_configured_store

__all__ = ["command"]

_REFUSED = {
    "anthropic": (
        "Anthropic subscription logins (Claude Free/Pro/Max) are not offered: Anthropic's "
        "terms (February 2026) reserve those OAuth tokens for Claude Code and Claude.ai. "
        "Use an API key instead: export ANTHROPIC_API_KEY=... or "
        "`modelwire creds add --provider anthropic`."
    ),
}

_store_option = click.option("--store", "store_url", default=None, metavar="URL",
                             help="State store URL (default: from modelwire.yaml, else the "
                                  "SQLite file in the user data directory).")
_config_option = click.option("--config", "config_path", default=None, metavar="PATH",
                              help="modelwire.yaml to read credential_pool.store from.")


def _flow(provider: str, base_url: str | None) -> Any:
    from ..credentials.oauth import FLOWS, emulator_flow

    if provider in _REFUSED:
        raise click.UsageError(_REFUSED[provider])
    if provider == "emulator":
        if not base_url:
            raise click.UsageError("auth login emulator needs --base-url (from `modelwire emulate`)")
        return emulator_flow(base_url)
    if provider not in FLOWS:
        offered = ", ".join(sorted(FLOWS)) + ", emulator"
        raise click.UsageError(
            f"no OAuth login for {provider!r}: offered only where the provider's terms allow "
            f"third-party apps ({offered}); use `modelwire creds add --provider {provider}`"
        )
    return FLOWS[provider]


@click.group(name="auth")
def command() -> None:
    """Log in to providers that allow third-party OAuth apps.

    \b
    Examples:
      modelwire auth login openrouter            # opens the browser, PKCE
      modelwire auth login openrouter --paste    # headless: paste the redirect URL
      modelwire auth status
      modelwire auth logout openrouter
    """


@command.command(name="login")
@click.argument("provider")
@click.option("--paste", is_flag=True,
              help="Paste the code (or the redirect URL) instead of a loopback redirect.")
@click.option("--no-browser", is_flag=True, help="Print the URL; do not open a browser.")
@click.option("--base-url", default=None, help="OAuth server base URL (emulator only).")
@click.option("--timeout", type=float, default=300.0, show_default=True,
              help="Seconds to wait for the browser redirect.")
@_store_option
@_config_option
def login_command(provider: str, paste: bool, no_browser: bool, base_url: str | None,
                  timeout: float, store_url: str | None, config_path: str | None) -> None:
    """Log in with OAuth (authorization code + PKCE) and store the credential."""
    from ..credentials.oauth import login

    flow = _flow(provider, base_url)

    def show(url: str) -> None:
        click.echo(f"Open this URL to log in to {provider}:\n\n  {url}\n", err=True)
        if not no_browser and not paste:
            import webbrowser

            webbrowser.open(url)

    def read_pasted() -> str:
        if sys.stdin.isatty():
            return click.prompt("Paste the code or the full redirect URL", hide_input=True)
        return sys.stdin.readline()

    cred = login(flow, open_url=show, paste=read_pasted if paste else None, timeout=timeout,
                 now=time.time())
    store = open_configured_store(store_url, config_path)
    store.put(cred)
    click.echo(f"logged in to {provider}: credential {cred.id} ({cred.masked}) stored")


@command.command(name="logout")
@click.argument("provider")
@_store_option
@_config_option
def logout_command(provider: str, store_url: str | None, config_path: str | None) -> None:
    """Forget this provider's OAuth logins (the provider-side grant stays until revoked there)."""
    store = open_configured_store(store_url, config_path)
    removed = [c for c in store.list(provider) if c.source.startswith("oauth:")]
    for cred in removed:
        store.delete(provider, cred.id)
    click.echo(f"removed {len(removed)} {provider} login(s)" if removed
               else f"no {provider} login stored")


@command.command(name="status")
@click.argument("provider", required=False)
@_store_option
@_config_option
def status_command(provider: str | None, store_url: str | None, config_path: str | None) -> None:
    """Show stored OAuth logins: status and token expiry."""
    now = time.time()
    logins = [c for c in open_configured_store(store_url, config_path).list(provider)
              if c.source.startswith("oauth:")]
    if not logins:
        click.echo("no OAuth logins stored" + (f" for {provider}" if provider else ""))
        return
    for cred in logins:
        if cred.expires_at is None:
            expiry = "no expiry"
        elif cred.expires_at > now:
            expiry = f"expires in {(cred.expires_at - now) / 60:.0f} min"
        else:
            expiry = "expired (refreshes on next use)" if cred.refresh_token else "expired"
        line = (f"{cred.provider}  {cred.id}  {cred.masked}  {cred.effective_status(now)}  "
                f"{expiry}")
        if cred.status == "dead" and cred.last_error_reason:
            line += f"  ({cred.last_error_reason})"
        click.echo(line)
