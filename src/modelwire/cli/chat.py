"""``modelwire chat``: talk to a model, one-shot or interactive, with optional demo tools."""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..agent import Agent, AgentResult
    from ..config import Config


__all__ = ["DEFAULT_MODELS", "command", "pick_model"]

# With no config and no --model: the first provider whose key is set, with this model.
DEFAULT_MODELS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-6"),
    ("OPENAI_API_KEY", "openai/gpt-5-mini"),
    ("OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.6"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("GROQ_API_KEY", "groq/llama-3.3-70b-versatile"),
    ("MISTRAL_API_KEY", "mistral/mistral-large-latest"),
    ("XAI_API_KEY", "xai/grok-4-fast"),
)
EMULATOR_MODEL = "emulator/emulator-1"


def pick_model(requested: str | None, config: Config | None) -> tuple[str, str | None]:
    """The model to use and, when it was chosen for the user, a note saying why."""
    if requested:
        return requested, None
    default = getattr(config, "default_model", None) if config is not None else None
    if default:
        return default, None
    for env, model in DEFAULT_MODELS:
        if os.environ.get(env):
            return model, f"using {model} ({env} is set; pass --model to choose another)"
    return EMULATOR_MODEL, (
        "no provider key or config found: using the built-in emulator (offline, deterministic)"
    )


def _load_config(path: str | None) -> Any:
    from ..config import load_config

    return load_config(path)


def _build_agent(model: str, fallback: tuple[str, ...], config: Config | None, opts: dict[str, Any]) -> Any:
    from ..agent import Agent
    from ..client import Client

    client = Client(model, fallback=fallback or (), config=config)
    tools = []
    if opts["tools"] == "demo":
        from ..demo_tools import DEMO_TOOLS

        tools = list(DEMO_TOOLS)
    return Agent(
        client, tools=tools, system=opts["system"], thinking=opts["thinking"],
        streaming=not opts["no_stream"] and not opts["json_out"],
    )


def _one_turn(agent: Agent, prompt: str, renderer: Any) -> Any:
    interrupt = threading.Event()
    result = None
    events = agent.stream(prompt, interrupt=interrupt)
    try:
        for event in events:
            if renderer is not None:
                renderer.feed(event)
            result = getattr(event, "result", result)
    except KeyboardInterrupt:
        interrupt.set()
        events.close()  # closes the upstream stream; every started tool call gets a result
        if renderer is not None:
            renderer.note("[interrupted]")
        raise
    return result


def _json_out(result: AgentResult) -> str:
    c = result.completion
    if c is None:  # the run ended before any answer (an interrupt): the same keys, empty
        return json.dumps(dict.fromkeys(("message", "finish_reason", "usage", "model", "provider")))
    return json.dumps(
        {
            "message": c.message,
            "finish_reason": c.finish_reason,
            "usage": c.usage,
            "model": c.model,
            "provider": c.provider,
        },
        ensure_ascii=False,
    )


def _answer_ctrl_c() -> None:
    """Let Ctrl-C reach an interactive session even if SIGINT was inherited as ignored.

    A non-interactive shell starts background commands (``cmd &`` in a script, CI
    runners, tool harnesses) with SIGINT ignored, as POSIX asks; an ignored signal stays
    ignored across fork and exec, and Python then keeps it ignored instead of raising
    KeyboardInterrupt. A chat opened on a terminal from such a process (e.g. under a
    pty) echoed ^C and streamed on to the end of the answer, and every later ^C was
    lost too. The ignore is meant to shield background jobs from the terminal's ^C; an
    interactive session that is the terminal's foreground process group *is* what the
    user types to, so there it takes Ctrl-C back. One-shot and piped runs keep what
    they inherited.
    """
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN or not hasattr(os, "tcgetpgrp"):
        return
    try:
        foreground = os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError):  # stdin is not our controlling terminal: ^C cannot reach us
        return
    if foreground:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interactive(agent: Agent, make_renderer: Any) -> int:
    from ..errors import ModelwireError

    _answer_ctrl_c()
    click.echo("modelwire chat — Ctrl-C interrupts an answer, Ctrl-D quits.", err=True)
    while True:
        try:
            prompt = input("> ")
        except EOFError:
            click.echo("", err=True)
            return 0
        except KeyboardInterrupt:
            click.echo("", err=True)
            continue
        if not prompt.strip():
            continue
        try:
            _one_turn(agent, prompt, make_renderer())
        except KeyboardInterrupt:
            continue
        except ModelwireError as exc:
            click.echo(f"error: {type(exc).__name__}: {exc}", err=True)


@click.command(
    name="chat",
    epilog=(
        "Examples:\n\n"
        "  modelwire chat \"Say hello\"\n\n"
        "  modelwire chat --tools demo \"What is 17 times 23?\"\n\n"
        "  modelwire chat --model anthropic/claude-sonnet-4-6 --thinking medium\n\n"
        "  modelwire chat --json \"2+2?\" | jq .message.content"
    ),
)
@click.argument("prompt", required=False)
@click.option("--model", "-m", help="A config model name or provider/model-id.")
@click.option("--fallback", multiple=True, help="Fallback model (repeatable), tried in order.")
@click.option("--system", help="System prompt.")
@click.option("--thinking", type=click.Choice(["low", "medium", "high", "xhigh", "max"]),
              help="Reasoning effort.")
@click.option("--tools", type=click.Choice(["demo"]), help="Offer built-in tools (calculator, clock).")
@click.option("--no-stream", is_flag=True, help="Send non-streaming requests.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON object with the final turn.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="Config file (else MODELWIRE_CONFIG, else the user config).")
def command(prompt: str | None, model: str | None, fallback: tuple[str, ...],
            config_path: str | None, **opts: Any) -> int:
    """Talk to a model: one-shot with PROMPT, interactive without."""
    from . import plain_output
    from ._render import Renderer

    config = _load_config(config_path)
    chosen, note = pick_model(model, config)
    agent = _build_agent(chosen, fallback, config, opts)
    plain = plain_output()

    def make_renderer() -> Any:
        return Renderer(plain=plain)

    if prompt is None and not sys.stdin.isatty():
        prompt = sys.stdin.read().strip() or None
    if prompt is None:
        if note:
            make_renderer().note(note)
        return _interactive(agent, make_renderer)
    if opts["json_out"]:
        result = _one_turn(agent, prompt, None)
        click.echo(_json_out(result))
        return 0 if result.stop_reason != "interrupted" else 130
    renderer = make_renderer()
    if note:
        renderer.note(note)
    result = _one_turn(agent, prompt, renderer)
    return 0 if result.stop_reason != "interrupted" else 130
