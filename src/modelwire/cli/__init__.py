"""The ``modelwire`` command: a click group whose subcommands load lazily.

Each subcommand lives in ``modelwire.cli.<name>`` and exposes ``command``.
Exit codes: 0 ok, 1 provider/runtime error, 2 usage or config error,
130 interrupted. A :class:`~modelwire.errors.ModelwireError` becomes one clear
line on stderr, never a traceback.

Sits on top: may import any public part; nothing imports it.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

__all__ = ["EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "main", "plain_output"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

COMMANDS = {
    "chat": "Talk to a model (one-shot with a prompt, interactive without).",
    "serve": "Run the gateway: OpenAI and Anthropic endpoints in front of any provider.",
    "emulate": "Run the offline emulator provider (all three protocols).",
    "creds": "List, add, remove and reset pooled credentials.",
    "auth": "Log in to providers that allow third-party OAuth apps.",
    "models": "List providers and configured model names.",
    "route": "Show the smart-routing decision for a message.",
    "keys": "Create, list, update and revoke the gateway's virtual keys.",
    "teams": "Create, list and update teams of virtual keys.",
    "spend": "What the gateway's requests cost, by key, team or model.",
    "db": "Apply and list the PostgreSQL migrations of keys, teams and spend.",
}


def plain_output() -> bool:
    """True when output should carry no ANSI codes (not a terminal, or NO_COLOR set)."""
    return bool(os.environ.get("NO_COLOR")) or not sys.stdout.isatty()


def _group() -> Any:
    import click

    class LazyGroup(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return list(COMMANDS)

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            if name not in COMMANDS:
                return None
            try:
                module = importlib.import_module(f"modelwire.cli.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"modelwire.cli.{name}":
                    raise
                return _unavailable(name)
            return module.command

        def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            with formatter.section("Commands"):
                formatter.write_dl(list(COMMANDS.items()))

    @click.group(
        cls=LazyGroup,
        context_settings={"help_option_names": ["-h", "--help"]},
        epilog=(
            "Examples:\n\n"
            "  modelwire chat --tools demo \"What is 17 times 23?\"\n\n"
            "  modelwire serve --port 4000\n\n"
            "  modelwire emulate --port 8765\n\n"
            "Exit codes: 0 ok, 1 provider/runtime error, 2 usage or config error, 130 interrupted."
        ),
    )
    @click.version_option(package_name="modelwire", prog_name="modelwire")
    def cli() -> None:
        """modelwire: one message format to every LLM provider."""

    return cli


def _unavailable(name: str) -> Any:
    import click

    @click.command(name=name, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def missing(args: tuple[str, ...]) -> None:
        raise click.UsageError(f"the '{name}' command is not available in this build yet")

    return missing


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (also used by the console script)."""
    import click

    from ..errors import ConfigError, MessageError, ModelwireError

    cli = _group()
    try:
        result = cli.main(args=argv, prog_name="modelwire", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code
    except (ConfigError, MessageError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except ModelwireError as exc:
        click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        return EXIT_ERROR
    if isinstance(result, int):
        return result
    return EXIT_OK


def run() -> None:  # pragma: no cover - console-script shim
    sys.exit(main())
