"""Terminal rendering of agent events: rich on a terminal, plain text otherwise.

Reasoning is dimmed, tool calls and results are one compact line each, the
answer streams as it arrives (re-rendered as Markdown on a terminal), and a
usage line closes each turn.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from ..agent import ModelEvent, RunFinished, ToolFinished, ToolStarted
from ..events import ReasoningDelta, TextDelta

if TYPE_CHECKING:
    from ..agent import AgentEvent, AgentResult


__all__ = ["Renderer", "usage_line"]


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def usage_line(result: AgentResult, seconds: float) -> str:
    """`tokens 120 in (80 cached) · 45 out (12 reasoning) · 1.42 s · openai/gpt-5 [key main]`."""
    completion = result.completion
    if completion is None:
        return f"no answer · {seconds:.2f} s"
    prompt = completion_tokens = cached = reasoning = 0
    for c in result.completions or (completion,):
        u = c.usage
        prompt += u["prompt_tokens"]
        completion_tokens += u["completion_tokens"]
        cached += u["cache_read_tokens"]
        reasoning += u["reasoning_tokens"]
    parts = [f"tokens {prompt} in"]
    if cached:
        parts[-1] += f" ({cached} cached)"
    parts.append(f"{completion_tokens} out" + (f" ({reasoning} reasoning)" if reasoning else ""))
    parts.append(f"{seconds:.2f} s")
    served = f"{completion.provider}/{completion.model}" if completion.provider else completion.model
    attempts = completion.attempts
    label = next((a.credential for a in reversed(attempts) if a.credential), None)
    parts.append(served + (f" [{label}]" if label else ""))
    retries = sum(1 for a in attempts if a.outcome in ("retried", "rotated", "refreshed"))
    fallbacks = sum(1 for a in attempts if a.outcome == "fell_back")
    if retries:
        parts.append(f"{retries} retr{'y' if retries == 1 else 'ies'}")
    if fallbacks:
        parts.append(f"{fallbacks} fallback{'s' if fallbacks > 1 else ''}")
    if result.iterations > 1:
        parts.append(f"{result.iterations} model calls")
    return " · ".join(parts)


class Renderer:
    """Feed it agent events; it writes them to the terminal."""

    def __init__(self, *, plain: bool, out: TextIO | None = None) -> None:
        self.plain = plain
        self.out = out or sys.stdout
        self._console: Any = None
        if not plain:
            from rich.console import Console

            self._console = Console(file=self.out, highlight=False)
        self._mode = ""  # "reasoning" | "text" | ""
        self._text: list[str] = []
        self.started = time.monotonic()

    # ------------------------------------------------------------ output
    def _write(self, text: str, style: str | None = None) -> None:
        if self._console is not None:
            self._console.print(text, style=style, end="", markup=False, soft_wrap=True)
        else:
            self.out.write(text)
        self.out.flush()

    def _line(self, text: str, style: str | None = None) -> None:
        self._end_block()
        self._write(text + "\n", style)

    def _end_block(self) -> None:
        if self._mode:
            self._write("\n")
        self._mode = ""

    def note(self, text: str) -> None:
        """A dim one-line note (e.g. 'using the built-in emulator')."""
        self._line(text, "dim")

    # ------------------------------------------------------------ events
    def feed(self, event: AgentEvent) -> None:
        if isinstance(event, ModelEvent):
            ev = event.event
            if isinstance(ev, ReasoningDelta) and ev.text:
                if self._mode != "reasoning":
                    self._end_block()
                    self._write("thinking: ", "dim italic")
                    self._mode = "reasoning"
                self._write(ev.text, "dim italic")
            elif isinstance(ev, TextDelta) and ev.text:
                if self._mode != "text":
                    self._end_block()
                    self._mode = "text"
                self._text.append(ev.text)
                self._write(ev.text)
        elif isinstance(event, ToolStarted):
            self._line(f"→ {event.name}({_short(event.arguments, 120)})", "cyan")
        elif isinstance(event, ToolFinished):
            content = event.content if isinstance(event.content, str) else json.dumps(event.content)
            mark = "✗" if event.is_error else "←"
            self._line(f"{mark} {event.name}: {_short(content)}", "red" if event.is_error else "green")
        elif isinstance(event, RunFinished):
            self.finish(event.result)

    def finish(self, result: AgentResult) -> None:
        if not self._text and result.completion is not None and result.completion.text:
            # non-streaming turn: show the whole answer, as Markdown on a terminal
            self._end_block()
            if self._console is not None:
                from rich.markdown import Markdown

                self._console.print(Markdown(result.completion.text))
            else:
                self._write(result.completion.text + "\n")
        self._end_block()
        if result.stop_reason != "done":
            self._line(f"[stopped: {result.stop_reason}]", "yellow")
        self._line(usage_line(result, time.monotonic() - self.started), "dim")
        self._text = []
