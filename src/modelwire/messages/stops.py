"""Stop sequences applied to the answer, for an endpoint that takes none (the Responses API,
OpenAI's reasoning models, a model that answered 400 to ``stop``).

The upstream generates as it would without them; the text the caller sees ends before the
first stop sequence, as an endpoint that has them would end it, with ``finish_reason``
``"stop"``, and nothing generated after it (text, tool calls, refusals) is passed on. The
stream still runs to its end, so its usage is the upstream's own count. Sans-IO: text and
events in, text and events out.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..events import Finish, StreamError, TextDelta, UsageEvent

__all__ = ["StopDecoder", "StopText", "cut_completion", "find_stop", "stop_list"]


def stop_list(stop: Any) -> tuple[str, ...]:
    """``stop`` as the request gives it (a string or a list of them) -> the non-empty ones."""
    if isinstance(stop, str):
        return (stop,) if stop else ()
    if isinstance(stop, (list, tuple)):
        return tuple(s for s in stop if isinstance(s, str) and s)
    return ()


def find_stop(text: str, stops: tuple[str, ...]) -> tuple[int, str]:
    """Where the earliest stop sequence starts in ``text`` and which it is; (-1, "") if none."""
    found = [(i, s) for s in stops if (i := text.find(s)) >= 0]
    return min(found) if found else (-1, "")


class StopText:
    """Streamed text with stop sequences applied: what may still be the start of one is held
    back until the next piece shows whether it is."""

    __slots__ = ("held", "hit", "matched", "stops")

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops = stops
        self.held = ""
        self.hit = False
        self.matched = ""  # the sequence that ended the text

    def feed(self, text: str) -> str:
        """The part of ``text`` (after what was held) that can go out now."""
        if self.hit:
            return ""
        buf = self.held + text
        at, matched = find_stop(buf, self.stops)
        if at >= 0:
            self.hit, self.held, self.matched = True, "", matched
            return buf[:at]
        keep = 0
        for k in range(min(len(buf), max(map(len, self.stops)) - 1), 0, -1):
            tail = buf[-k:]
            if any(s.startswith(tail) for s in self.stops):
                keep = k
                break
        self.held = buf[len(buf) - keep:]
        return buf[:len(buf) - keep]

    def flush(self) -> str:
        """The text held back when the text ends without a stop sequence."""
        out, self.held = self.held, ""
        return out


class StopDecoder:
    """A codec's stream decoder with stop sequences applied to its events."""

    __slots__ = ("inner", "text")

    def __init__(self, inner: Any, stops: tuple[str, ...]) -> None:
        self.inner = inner
        self.text = StopText(stops)

    @property
    def model(self) -> Any:
        return getattr(self.inner, "model", None)

    def feed(self, data: bytes) -> list[Any]:
        return self._map(self.inner.feed(data))

    def close(self) -> list[Any]:
        out = self._map(self.inner.close())
        held = self.text.flush()  # no Finish came: the text's end is the stream's
        return [TextDelta(held), *out] if held else out

    def _map(self, events: list[Any]) -> list[Any]:
        text = self.text
        out: list[Any] = []
        for event in events:
            kind = type(event)
            if kind is TextDelta:
                part = text.feed(event.text)
                if part:
                    out.append(TextDelta(part))
                continue
            if kind is UsageEvent or kind is StreamError:
                out.append(event)
                continue
            if text.hit:  # generated after the stop: only the ending goes on
                if kind is Finish:  # Anthropic's word for it, as its own API reports
                    out.append(Finish("stop", "stop_sequence", text.matched))
                continue
            held = text.flush()  # the text ended without a stop: what was held goes first
            if held:
                out.append(TextDelta(held))
            out.append(event)
        return out


def cut_completion(completion: Any, stops: tuple[str, ...]) -> Any:
    """A whole answer with stop sequences applied (the non-streamed form of the above)."""
    message = completion.message
    content = message.get("content")
    if not isinstance(content, str):  # no text (tool calls only): nothing to cut
        return completion
    at, matched = find_stop(content, stops)
    if at < 0:
        return completion
    cut = {k: v for k, v in message.items() if k not in ("tool_calls", "refusal")}
    cut["content"] = content[:at]
    return dataclasses.replace(completion, message=cut, finish_reason="stop",
                               native_finish_reason="stop_sequence", stop_sequence=matched)
