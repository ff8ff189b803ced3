"""Server-sent events framing, sans-IO.

:class:`SSEDecoder` takes bytes in any chunking and returns complete
:class:`SSEEvent` values; it splits lines only on CR, LF and CRLF (never
``str.splitlines``, which also splits on U+2028 and friends inside JSON), keeps
a CR at the end of a chunk pending until it knows whether LF follows, decodes
UTF-8 incrementally (a character split across chunks is fine; invalid bytes
raise :class:`~modelwire.errors.ProtocolError`), ignores comments and the ``id`` and
``retry`` fields, joins
multi-line ``data:`` fields with LF, and treats ``[DONE]`` as ordinary data
(codecs decide what it means).

:func:`encode_event` frames one event.
"""

from __future__ import annotations

import codecs as _codecs
from typing import NamedTuple

from ..errors import ProtocolError

__all__ = ["TEXT_MARK", "SSEDecoder", "SSEEvent", "encode_event", "split_at_text_mark"]


class SSEEvent(NamedTuple):  # one per streamed event: a tuple is the cheapest immutable record to build
    event: str  # "" when the stream gave no event: line ("message" by the spec)
    data: str


class SSEDecoder:
    """Incremental SSE parser: ``feed(bytes) -> list[SSEEvent]``, ``close()``."""

    __slots__ = ("_buf", "_data", "_event", "_pending_cr", "_utf8")

    def __init__(self) -> None:
        self._utf8 = _codecs.getincrementaldecoder("utf-8")("strict")
        self._buf = ""  # an incomplete line
        self._pending_cr = False
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        try:
            text = self._utf8.decode(chunk)
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"stream is not valid UTF-8: {exc.reason} at byte {exc.start}") from exc
        return self._feed_text(text)

    def close(self) -> list[SSEEvent]:
        """Flush: a final line without a newline and an event without a blank line count."""
        try:
            self._utf8.decode(b"", final=True)  # only bytes of an unfinished character remain
        except UnicodeDecodeError as exc:
            raise ProtocolError("stream ended inside a UTF-8 character") from exc
        out: list[SSEEvent] = []
        if self._buf:
            self._line(self._buf, out)
            self._buf = ""
        self._dispatch(out)
        return out

    def _feed_text(self, text: str) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        if not text:
            return out
        if not self._pending_cr and "\r" not in text:
            self._feed_lf(text, out)
            return out
        if self._pending_cr:
            self._pending_cr = False
            if text[0] == "\n":
                text = text[1:]
        buf = self._buf + text if self._buf else text
        start = 0
        n = len(buf)
        while True:
            # find the next CR or LF
            lf = buf.find("\n", start)
            cr = buf.find("\r", start, lf if lf != -1 else n)
            if cr != -1:
                end = cr
                if cr + 1 < n:
                    nxt = cr + 2 if buf[cr + 1] == "\n" else cr + 1
                else:
                    self._pending_cr = True
                    nxt = n
            elif lf != -1:
                end, nxt = lf, lf + 1
            else:
                break
            self._line(buf[start:end], out)
            start = nxt
        self._buf = buf[start:]
        return out

    def _feed_lf(self, text: str, out: list[SSEEvent]) -> None:
        """The common case, LF-only text: split once, handle ``data:`` lines inline."""
        lines = (self._buf + text).split("\n") if self._buf else text.split("\n")
        self._buf = lines.pop()  # the incomplete last line ("" after a final LF)
        data = self._data
        for line in lines:
            if not line:
                self._dispatch(out)
                data = self._data
            elif line[:5] == "data:":
                data.append(line[6:] if line[5:6] == " " else line[5:])
            elif line[:6] == "event:":  # Anthropic and Responses name every event
                self._event = line[7:] if line[6:7] == " " else line[6:]
            else:
                self._line(line, out)
                data = self._data

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        # a comment (":" first: keep-alives, OpenRouter's "PROCESSING") has an empty field
        # name, so it is ignored below with the other fields no stream needs
        field, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        # other fields (id, retry, comments) are ignored: no provider's stream needs them

    def _dispatch(self, out: list[SSEEvent]) -> None:
        if self._data:
            out.append(SSEEvent(self._event, "\n".join(self._data)))
        elif self._event:
            # an event: line with no data: still an event for providers that
            # send e.g. "event: ping" alone; data is empty
            out.append(SSEEvent(self._event, ""))
        self._event = ""
        self._data = []


def encode_event(data: str | bytes, event: str | None = None) -> bytes:
    """Frame one SSE event. ``data`` with newlines becomes several data: lines."""
    if isinstance(data, bytes):
        data = data.decode()
    head = f"event: {event}\n" if event else ""
    if "\n" in data or "\r" in data:
        body = "".join(f"data: {line}\n" for line in data.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    else:
        body = f"data: {data}\n"
    return f"{head}{body}\n".encode()


# A text value that stands for the real one while an encoder renders its most common
# event (a text delta) once: afterwards only the text is serialized per event. Private-use
# characters, so JSON writes them as they are and no model name or id holds them.
TEXT_MARK = "\ue000modelwire-text\ue000"
_TEXT_MARK_JSON = b'"' + TEXT_MARK.encode() + b'"'


def split_at_text_mark(rendered: bytes) -> tuple[bytes, bytes] | None:
    """``(before, after)`` the marker's JSON string in an event rendered with
    :data:`TEXT_MARK` as its text, so ``before + json(text) + after`` is that event for
    any text; ``None`` (render each event whole) unless the marker occurs exactly once."""
    if rendered.count(_TEXT_MARK_JSON) != 1:
        return None
    before, _, after = rendered.partition(_TEXT_MARK_JSON)
    return before, after
