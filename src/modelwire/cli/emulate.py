"""``modelwire emulate``: run the offline provider in the foreground (uvicorn)."""

from __future__ import annotations

import logging
import os

import click

__all__ = ["command"]


@click.command(
    "emulate",
    epilog=(
        "Examples:\n\n"
        "  modelwire emulate --port 8765\n\n"
        "  modelwire emulate --profile anthropic --keys k1,k2\n\n"
        "  MY_KEY=s3cret modelwire emulate --signing-key-env MY_KEY\n\n"
        "Point an OpenAI SDK at http://127.0.0.1:8765/v1 and an Anthropic SDK at "
        "http://127.0.0.1:8765 (add /p/<profile> for another provider's rules). "
        "--script FILE replays the JSONL responses in FILE in order; --replay DIR serves the "
        "answers a gateway captured (gateway.capture) to the requests that mean the same."
    ),
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8765, show_default=True, type=int, help="Port to bind.")
@click.option("--profile", default="lenient", show_default=True,
              help="Rules for requests without a /p/<profile> prefix: lenient, anthropic, openai, "
                   "deepseek, kimi, mimo, mistral, groq, cerebras.")
@click.option("--script", type=click.Path(exists=True, dir_okay=False),
              help="JSONL file of responses to replay in order.")
@click.option("--replay", type=click.Path(exists=True, file_okay=False),
              help="Folder of gateway capture files: answer each request with the captured "
                   "answer to the same request.")
@click.option("--keys", help="Comma-separated API keys to accept (default: any non-empty key).")
@click.option("--signing-key-env", metavar="VAR",
              help="Environment variable holding the key for thinking signatures and encrypted "
                   "reasoning (default: a random key per process).")
@click.option("--max-hang", default=10.0, show_default=True, type=float,
              help="Longest wait a 'hang' fault may cause, in seconds.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="Config file; validated like every command's, though the emulator needs none.")
def command(host: str, port: int, profile: str, script: str | None, replay: str | None,
            keys: str | None,
            signing_key_env: str | None, max_hang: float, config_path: str | None) -> None:
    """Serve /v1/chat/completions, /v1/messages, /v1/responses and /v1/models offline."""
    import uvicorn

    if config_path is not None:
        from ..config import load_config

        load_config(config_path)  # a broken file is reported, as by every command

    from ..emulator import Emulator
    from ..emulator.app import build_app
    from ..emulator.response import ConnectionAborted

    signing_key = None
    if signing_key_env:
        signing_key = os.environ.get(signing_key_env)
        if not signing_key:
            raise click.UsageError(f"--signing-key-env: ${signing_key_env} is not set")
    try:
        emu = Emulator(profile=profile, script=script, signing_key=signing_key, max_hang=max_hang,
                       replay=replay,
                       keys=[k.strip() for k in keys.split(",") if k.strip()] if keys else None)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    if host not in ("127.0.0.1", "::1", "localhost"):
        click.echo("warning: the emulator accepts fake keys; bind it to loopback only", err=True)
    if emu.backend.replay is not None:
        click.echo(f"replaying {len(emu.backend.replay)} captured answers from {replay}", err=True)
    click.echo(f"modelwire emulator on http://{host}:{port} (profile {profile}); "
               f"OpenAI base URL http://{host}:{port}/v1, Anthropic base URL http://{host}:{port}",
               err=True)
    # a close_mid_stream fault drops the connection by raising inside the app; that is the
    # fault working, not a server error worth a traceback
    logging.getLogger("uvicorn.error").addFilter(
        lambda record: not (record.exc_info and isinstance(record.exc_info[1], ConnectionAborted)))
    uvicorn.run(build_app(emu.backend), host=host, port=port, log_level="info")
