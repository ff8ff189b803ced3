"""Streaming splitter for reasoning that models write inline in their text.

Several open models (DeepSeek-R1 behind Hugging Face or Together, Qwen3,
MiniMax M2, gpt-oss on Groq, Hermes fine-tunes) put their reasoning in the
content itself, between tags such as ``<think>…</think>``. The splitter turns
such a content stream into ``("reasoning", …)`` and ``("text", …)`` pieces,
so reasoning never reaches the caller as answer text.

Rules (one state machine, so any chunking of the same text gives the same
joined pieces):

* Tags: ``<think>``, ``<thinking>``, ``<thought>``, ``<reasoning>``,
  ``<REASONING_SCRATCHPAD>``, in any ASCII letter case, no attributes. A block
  opened by one name closes only with the same name.
* An opening tag at a *block boundary* (start of the content, or only
  whitespace since the last newline) opens reasoning at once and streams it.
  If it is never closed it runs to the end: MiniMax M2.7 drops the closing
  tag (hermes #8878, #9568) and a reply cut by ``max_tokens`` ends inside the
  block (DeepSeek-R1 on Hugging Face, recorded in the corpus).
* An opening tag in the middle of a line is only tentatively reasoning: the
  splitter holds what follows until the closing tag (then it is reasoning) or
  the end of the content (then the whole held text, tag included, is text).
  A model that *talks about* ``<think>`` tags in prose keeps its words.
* A closing tag with no open block is dropped (the text around it stays):
  Qwen3 chat templates put the opening tag in the prompt, so the reply
  carries only ``</think>``.
* A ``<`` that turns out not to be one of these tags is text.
* Whitespace around a block is layout, not content: leading and trailing
  whitespace inside a block is dropped, and so is whitespace right after a
  closing tag (providers send ``</think>\\n\\n`` before the answer, which
  would otherwise start with blank lines).
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

__all__ = ["REASONING_TAGS", "Piece", "ThinkTagSplitter", "split_think_tags"]

PieceKind: TypeAlias = Literal["reasoning", "text"]
Piece: TypeAlias = tuple[PieceKind, str]

REASONING_TAGS: tuple[str, ...] = (
    "think",
    "thinking",
    "thought",
    "reasoning",
    "reasoning_scratchpad",
)

# Every literal tag, lowercase: used to decide whether a buffered "<th" could
# still become a tag once more text arrives.
_ALL_TAGS: tuple[str, ...] = tuple(
    f"<{slash}{name}>" for name in REASONING_TAGS for slash in ("", "/")
)
_MAX_TAG = max(map(len, _ALL_TAGS))
# ASCII only on purpose: "\u212a" (Kelvin sign) lowercases to "k", and a tag
# spelled with it is not a tag any model emits.
_TAG_RE = re.compile(r"<(/?)([A-Za-z_]{1,24})>")
_Mode: TypeAlias = Literal["text", "reasoning", "tentative"]


def _is_tag_prefix(fragment: str) -> bool:
    """True when ``fragment`` (which starts with ``<``) may still grow into a tag."""
    if not fragment.isascii():
        return False
    low = fragment.lower()
    return any(tag.startswith(low) for tag in _ALL_TAGS)


def _closing_at(buf: str, start: int, close: str) -> int:
    """Index of ``close`` (lowercase ASCII) in ``buf`` from ``start``, any letter case."""
    i = buf.find("<", start)
    n = len(close)
    while i >= 0:
        candidate = buf[i : i + n]
        if candidate.isascii() and candidate.lower() == close:
            return i
        i = buf.find("<", i + 1)
    return -1


def _held_tail(buf: str, start: int, close: str) -> int:
    """Where a possible partial ``close`` tag begins at the end of ``buf`` (or len)."""
    lo = max(start, len(buf) - len(close) + 1)
    i = buf.find("<", lo)
    while i >= 0:
        tail = buf[i:]
        if tail.isascii() and close.startswith(tail.lower()):
            return i
        i = buf.find("<", i + 1)
    return len(buf)


class ThinkTagSplitter:
    """``feed(text)`` content chunks as they arrive, then ``close()`` once.

    Each call returns ``[("reasoning" | "text", piece), ...]``: non-empty
    pieces, neighbours of the same kind merged.
    """

    __slots__ = (
        "_boundary",
        "_close",
        "_held_ws",
        "_mode",
        "_new_block",
        "_out",
        "_pending",
        "_plain",
        "_seen_reasoning",
        "_skip_ws",
        "_tentative",
    )

    def __init__(self) -> None:
        self._mode: _Mode = "text"
        self._pending = ""  # undecided input: a possible tag at the end of the last chunk
        self._close = ""  # the closing tag (lowercase) of the open block
        self._boundary = True  # only whitespace since the start or the last newline
        self._skip_ws = False  # drop whitespace until the next visible character
        self._held_ws = ""  # trailing reasoning whitespace: dropped if the block ends here
        self._tentative: list[str] = []  # raw text since a mid-line opening tag
        self._new_block = False  # the open block has not produced reasoning yet
        self._seen_reasoning = False
        self._out: list[Piece] = []
        self._plain = True  # text mode, nothing held, no whitespace to skip: see _flush

    # ------------------------------------------------------------------ public
    def feed(self, text: str) -> list[Piece]:
        if self._plain and "<" not in text:
            # the common case, plain answer text with no tag in sight: same result as the
            # scan below, without it (this runs once per streamed text delta)
            if not text:
                return []
            self._emit_text(text)
            return self._flush()
        buf = self._pending + text
        self._pending = ""
        i = 0
        while i < len(buf):
            if self._skip_ws:
                j = i
                while j < len(buf) and buf[j].isspace():
                    j += 1
                i = j
                if i == len(buf):
                    break
                self._skip_ws = False
            if self._mode == "text":
                i = self._scan_text(buf, i)
            else:
                i = self._scan_block(buf, i)
        return self._flush()

    def feed_plain(self, text: str) -> bool:
        """The per-delta fast path for stream decoders: when ``text`` (non-empty) is
        plain answer text, outside any block, with no ``<`` in it and nothing held,
        note it and return True: :meth:`feed` would have returned
        ``[("text", text)]``, and the caller emits that piece itself. Otherwise
        return False and change nothing: the caller calls :meth:`feed`.

        Same state afterwards as :meth:`feed` (a test checks both paths agree);
        it exists because ``feed`` builds a list and a tuple per streamed delta.
        """
        if not self._plain or "<" in text:
            return False
        # the block-boundary rule of _emit_text, inline
        if "\n" in text:
            self._boundary = not text[text.rfind("\n") + 1 :].strip()
        elif self._boundary:
            self._boundary = text.isspace()
        return True

    def close(self) -> list[Piece]:
        """End of content: what is still held is decided now."""
        rest, self._pending = self._pending, ""
        if self._mode == "text":
            self._emit("text", rest)
        elif self._mode == "reasoning":
            # An unterminated block runs to the end (MiniMax, cut replies);
            # its trailing whitespace is layout and stays dropped.
            self._block_text(rest, final=True)
        else:  # a mid-line tag never closed: it was prose after all
            self._emit("text", "".join(self._tentative) + rest)
            self._tentative = []
        self._mode = "text"
        self._held_ws = ""
        return self._flush()

    # ----------------------------------------------------------------- scanning
    def _scan_text(self, buf: str, i: int) -> int:
        j = buf.find("<", i)
        if j < 0:
            self._emit_text(buf[i:])
            return len(buf)
        self._emit_text(buf[i:j])
        m = _TAG_RE.match(buf, j)
        if m is None or m.group(2).lower() not in REASONING_TAGS:
            rest = buf[j : j + _MAX_TAG]
            if j + len(rest) == len(buf) and _is_tag_prefix(rest):
                self._pending = buf[j:]
                return len(buf)
            self._emit_text("<")
            return j + 1
        name = m.group(2).lower()
        if m.group(1):
            # A closing tag with no open block (Qwen3 templates open it in the
            # prompt): drop the tag, keep the text around it as it is.
            return m.end()
        self._close = f"</{name}>"
        self._new_block = True
        if self._boundary:
            self._mode = "reasoning"
            self._skip_ws = True
        else:
            self._mode = "tentative"
            self._tentative = [m.group(0)]
        return m.end()

    def _scan_block(self, buf: str, i: int) -> int:
        j = _closing_at(buf, i, self._close)
        if j >= 0:
            self._block_text(buf[i:j], final=True)
            self._mode = "text"
            self._after_block()
            return j + len(self._close)
        held = _held_tail(buf, i, self._close)
        self._block_text(buf[i:held], final=False)
        self._pending = buf[held:]
        return len(buf)

    def _block_text(self, piece: str, *, final: bool) -> None:
        if self._mode == "tentative":
            self._tentative.append(piece)
            if final:
                self._emit_reasoning("".join(self._tentative[1:]).strip())
            return
        if final:
            self._emit_reasoning((self._held_ws + piece).rstrip())  # _held_ws is only whitespace
            self._held_ws = ""
            return
        if not piece:
            return
        body = piece.rstrip()
        if body:
            self._emit_reasoning(self._held_ws + body)
            self._held_ws = piece[len(body) :]
        else:
            self._held_ws += piece

    def _after_block(self) -> None:
        self._skip_ws = True
        self._boundary = True

    # ------------------------------------------------------------------ output
    def _emit_text(self, piece: str) -> None:
        if not piece:
            return
        nl = piece.rfind("\n")
        if nl >= 0:
            self._boundary = not piece[nl + 1 :].strip()
        else:
            self._boundary = self._boundary and piece.isspace()
        self._emit("text", piece)

    def _emit_reasoning(self, piece: str) -> None:
        if not piece:
            return
        if self._new_block and self._seen_reasoning:
            piece = "\n\n" + piece  # blocks stay apart, as paragraphs
        self._new_block = False
        self._seen_reasoning = True
        self._emit("reasoning", piece)

    def _emit(self, kind: PieceKind, piece: str) -> None:
        if not piece:
            return
        if self._out and self._out[-1][0] == kind:
            self._out[-1] = (kind, self._out[-1][1] + piece)
        else:
            self._out.append((kind, piece))

    def _flush(self) -> list[Piece]:
        # feed and close end here, and only they change the mode, the held input or
        # the whitespace skipping: the fast paths' precondition is worked out once
        self._plain = self._mode == "text" and not self._pending and not self._skip_ws
        out, self._out = self._out, []
        return out


def split_think_tags(text: str) -> tuple[str, str]:
    """Split a whole content string: ``(reasoning, text)`` with the rules above.

    Several blocks in one content are joined with a blank line.
    """
    if "<" not in text:  # no tag, no block: every answer without reasoning tags
        return "", text
    splitter = ThinkTagSplitter()
    reasoning: list[str] = []
    visible: list[str] = []
    for kind, piece in splitter.feed(text) + splitter.close():
        (reasoning if kind == "reasoning" else visible).append(piece)
    return "".join(reasoning), "".join(visible)
