"""llama.cpp server: tool schemas its grammar compiler cannot take.

llama.cpp turns tool schemas into a GBNF grammar; some ``pattern`` regexes and
``format`` values make it answer 400 "error parsing grammar" /
"json-schema-to-grammar" (hermes-behaviours 2.4). The recovery is one retry
with every tool schema passed through :func:`strip_grammar_keywords` (a copy);
:func:`is_grammar_error` recognises the error text.
"""

from __future__ import annotations

from typing import Any

from ._schema import rewrite

__all__ = ["is_grammar_error", "strip_grammar_keywords"]

_GRAMMAR_ERRORS = ("error parsing grammar", "json-schema-to-grammar", "failed to parse grammar")


def is_grammar_error(message: str) -> bool:
    """Whether a 400's message is llama.cpp failing to compile a tool schema."""
    text = message.lower()
    return any(marker in text for marker in _GRAMMAR_ERRORS)


def strip_grammar_keywords(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without ``pattern`` and ``format`` anywhere."""
    def drop(node: dict[str, Any]) -> dict[str, Any]:
        node.pop("pattern", None)
        node.pop("format", None)
        return node

    return rewrite(schema, drop)
